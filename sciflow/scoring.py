"""Scoring runs: pair predictions with references, score each item, write the results folder.

A run never stops on one bad item. Per item the row's ``status`` is one of

- ``ok``: scored;
- ``missing_prediction``: the reference has no prediction; every score is 0;
- ``prediction_error``: the prediction could not be read or parsed; every score is 0 and
  ``error`` says why;
- ``reference_error``: the reference is unusable; the item is reported and left out of
  the means (there is nothing to score against).

A prediction whose stem matches no reference is listed in ``summary.json`` under
``unreferenced_predictions`` and logged as a warning.

Files written to the output folder: ``results.jsonl`` (one row per item, sorted by id,
appended and flushed as each item finishes), ``summary.json``, ``leaderboard.csv`` and
``manifest.json``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciflow.config import Config
from sciflow.embedding import get_embedder
from sciflow.graph import DiagramGraph, GraphFormatError, load_graph
from sciflow.judge import ALIGNMENT_TEMPLATE, ChatJudge, JudgeError
from sciflow.manifest import build_manifest
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.text_level import prompt_text, serialize, text_level
from sciflow.summary import summarize_rows, write_leaderboard

log = logging.getLogger(__name__)

GRAPH_SUFFIXES = frozenset({".json"})
# Image predictions are parsed by the inverse parser before scoring.
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".svg", ".pdf"})

GRAPH_KEYS = ("graph", "node_precision", "node_recall", "node_f1", "edge_precision", "edge_recall", "edge_f1")
TEXT_KEYS = ("text", "coverage", "faithfulness", "alignment")
IMAGE_KEYS = ("image", "semantic_consistency", "perceptual_similarity", "visual_flow")


@dataclass
class Item:
    """One benchmark item: a reference and (maybe) its prediction, paired by file stem."""

    id: str
    reference: Path | None
    prediction: Path | None
    source_image: Path | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    out_dir: Path | None
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    manifest: dict[str, Any]


class ScoringError(RuntimeError):
    """A run that cannot start at all (a folder that does not exist, say)."""


def pair_items(pred_dir: Path, ref_dir: Path) -> tuple[list[Item], list[str]]:
    """Pair ``REF_DIR/*.json`` with predictions in ``PRED_DIR`` by file stem.

    Returns the items (sorted by id) and the stems of predictions that have no reference.
    When a stem has both a graph (``.json``) and an image, the graph is used and a note says so.
    An image beside a reference with the same stem (``REF_DIR/<stem>.png`` ...) is the item's
    source figure, used by the perceptual-similarity term of the image level.
    """
    for d, what in ((pred_dir, "prediction"), (ref_dir, "reference")):
        if not d.is_dir():
            raise ScoringError(f"{what} folder not found: {d}")
    refs: dict[str, Path] = {}
    sources: dict[str, Path] = {}
    for p in sorted(ref_dir.iterdir()):
        if p.is_file() and p.suffix.lower() == ".json":
            refs[p.stem] = p
        elif p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES:
            sources.setdefault(p.stem, p)
    preds: dict[str, list[Path]] = {}
    for p in sorted(pred_dir.iterdir()):
        if p.is_file() and p.suffix.lower() in GRAPH_SUFFIXES | IMAGE_SUFFIXES:
            preds.setdefault(p.stem, []).append(p)
    items = []
    for stem in sorted(refs):
        cands = sorted(preds.get(stem, []), key=lambda p: (p.suffix.lower() not in GRAPH_SUFFIXES, p.name))
        item = Item(stem, refs[stem], cands[0] if cands else None, sources.get(stem))
        if len(cands) > 1:
            item.notes.append(
                f"several predictions for {stem!r}: {', '.join(p.name for p in cands)}; using {cands[0].name}"
            )
        items.append(item)
    orphans = sorted(set(preds) - set(refs))
    return items, orphans


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_image(path: Path | None) -> bool:
    return path is not None and path.suffix.lower() in IMAGE_SUFFIXES


def _zero_scores(with_image: bool) -> dict[str, float]:
    keys = GRAPH_KEYS + TEXT_KEYS + ((*IMAGE_KEYS, "overall") if with_image else ())
    return {k: 0.0 for k in keys}


class ItemScorer:
    """Scores one prediction against its reference on every level the inputs allow.

    Holds what is loaded once per process (embedder, image models, judge); each call is a
    function of its inputs. Graph predictions get the graph and text levels; image
    predictions get the image level too, and then the overall score
    ``overall.graph * graph + overall.text * text + overall.image * image``.
    """

    def __init__(self, config: Config):
        self.config = config
        self.embedder = get_embedder(config.matching.embedder)
        self.judge = ChatJudge(config.text.judge) if config.text.alignment_backend == "judge" else None
        self._image_models: Any = None

    def image_models(self) -> Any:
        if self._image_models is None:
            from sciflow.image_models import get_image_models

            self._image_models = get_image_models(self.config.image)
        return self._image_models

    def models(self, with_image: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"embedder": self.embedder.describe()}
        if self.judge is not None:
            out["text_judge"] = self.judge.describe()
        if with_image:
            out.update(self.image_models().describe())
        return out

    def __call__(
        self,
        pred: DiagramGraph,
        ref: DiagramGraph,
        *,
        image: Path | None = None,
        source_image: Path | None = None,
        extra_texts: Sequence[str] = (),
    ) -> dict[str, Any]:
        c = self.config
        g = graph_level(pred, ref, c.matching, c.graph, embedder=self.embedder)
        scores: dict[str, Any] = {
            "graph": g.score,
            "node_precision": g.node_precision,
            "node_recall": g.node_recall,
            "node_f1": g.node_f1,
            "edge_precision": g.edge_precision,
            "edge_recall": g.edge_recall,
            "edge_f1": g.edge_f1,
        }
        out: dict[str, Any] = {"scores": scores, "graph_level": g.to_dict(), "text_level": None, "image_level": None}
        judge_value = None
        if self.judge is not None:
            try:
                judge_value, reason = self.judge.score(
                    ALIGNMENT_TEMPLATE, prompt=prompt_text(ref), graph=serialize(pred)
                )
            except JudgeError as exc:
                out["notes"] = [f"text level not scored: {exc}"]
        if self.judge is None or judge_value is not None:
            t = text_level(pred, ref, c.text, c.matching, extra_texts, self.embedder, judge_value)
            scores.update(text=t.score, coverage=t.coverage, faithfulness=t.faithfulness, alignment=t.alignment)
            out["text_level"] = t.to_dict()
            if judge_value is not None:
                out["text_level"]["judge_reason"] = reason
        if image is not None:
            from sciflow.metrics.image_level import image_level

            im = image_level(image, prompt_text(ref), pred, source_image, c.image, self.image_models())
            scores.update(
                image=im.score,
                semantic_consistency=im.semantic_consistency,
                perceptual_similarity=im.perceptual_similarity,
                visual_flow=im.visual_flow,
            )
            out["image_level"] = im.to_dict()
            if im.score is not None and "text" in scores:
                w = c.overall
                scores["overall"] = w.graph * g.score + w.text * scores["text"] + w.image * im.score
        return out


def score_item(
    item: Item,
    scorer: ItemScorer,
    parsed: dict[str, tuple[DiagramGraph | None, str | None]] | None = None,
    image_run: bool = False,
) -> dict[str, Any]:
    """The results row of one item. ``parsed`` holds graphs already parsed from image
    predictions (graph or error message), keyed by item id. In an ``image_run`` (predictions
    are images) a missing prediction scores 0 on the image level and overall too."""
    row: dict[str, Any] = {
        "id": item.id,
        "status": "ok",
        "error": None,
        "prediction": str(item.prediction) if item.prediction else None,
        "reference": str(item.reference) if item.reference else None,
        "source_image": str(item.source_image) if item.source_image else None,
        "parsed_graph": None,
        "meta": {},
        "notes": list(item.notes),
        "inputs": {},
        "scores": None,
        "graph_level": None,
        "text_level": None,
        "image_level": None,
    }
    try:
        assert item.reference is not None
        ref = load_graph(item.reference)
        row["inputs"]["reference_sha256"] = sha256_file(item.reference)
    except GraphFormatError as exc:
        row.update(status="reference_error", error=str(exc))
        return row
    row["meta"] = {k: ref.meta[k] for k in ("area", "difficulty") if k in ref.meta}
    image_pred = is_image(item.prediction)
    if item.prediction is None:
        row.update(status="missing_prediction", error="no prediction for this reference",
                   scores=_zero_scores(with_image=image_run))
        return row
    row["inputs"]["prediction_sha256"] = sha256_file(item.prediction)
    try:
        if not image_pred:
            pred = load_graph(item.prediction)
        else:
            graph, err = (parsed or {}).get(item.id, (None, "image was not parsed"))
            if graph is None:
                raise GraphFormatError(str(item.prediction), [("$", f"parse failed: {err}")])
            pred = graph
            row["parsed_graph"] = f"parsed/{item.id}.json"
    except GraphFormatError as exc:
        row.update(status="prediction_error", error=str(exc), scores=_zero_scores(with_image=image_pred))
        return row
    result = scorer(
        pred, ref, image=item.prediction if image_pred else None, source_image=item.source_image
    )
    row["notes"] += result.pop("notes", [])
    row.update(result)
    return row


def parse_image_predictions(
    items: list[Item],
    config: Config,
    *,
    jobs: int = 1,
    cache_dir: Path | None = None,
    on_done: Callable[[Any], None] | None = None,
) -> tuple[dict[str, tuple[DiagramGraph | None, str | None]], dict[str, Any] | None]:
    """Parse the image predictions of ``items`` (in parallel, cached). Returns graphs or
    errors keyed by item id, and the parser's fingerprint for the manifest."""
    todo = [i for i in items if i.prediction and i.prediction.suffix.lower() in IMAGE_SUFFIXES]
    if not todo:
        return {}, None
    try:
        from sciflow.parse_batch import parse_many
        from sciflow.pipeline import Parser
    except ImportError as exc:  # the parser is an installed part of sciflow; this guards a broken install
        msg = f"the inverse parser is unavailable: {exc}"
        return {i.id: (None, msg) for i in todo}, None
    outcomes = parse_many(
        [i.prediction for i in todo if i.prediction], config, jobs=jobs, cache_dir=cache_dir, on_done=on_done
    )
    by_path = {o.path: o for o in outcomes}
    parsed = {}
    for i in todo:
        o = by_path.get(i.prediction)
        parsed[i.id] = (None, "not parsed") if o is None else (o.graph, o.error)
    return parsed, Parser(config).fingerprint()


def run_scoring(
    pred_dir: str | Path,
    ref_dir: str | Path,
    out_dir: str | Path | None,
    config: Config,
    *,
    run_name: str | None = None,
    jobs: int = 1,
    cache_dir: Path | None = None,
    on_item: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> RunResult:
    """Score every item and (when ``out_dir`` is given) write the results folder."""
    pred_dir, ref_dir = Path(pred_dir), Path(ref_dir)
    items, orphans = pair_items(pred_dir, ref_dir)
    for stem in orphans:
        log.warning("prediction %r has no reference in %s; ignored", stem, ref_dir)
    for item in items:
        for note in item.notes:
            log.warning(note)
    if on_start:
        on_start(len(items))
    parsed, parser_fp = parse_image_predictions(items, config, jobs=jobs, cache_dir=cache_dir)
    scorer = ItemScorer(config)
    image_run = any(is_image(i.prediction) for i in items)
    models = scorer.models(with_image=image_run)
    if parser_fp is not None:
        models["parser"] = parser_fp
    manifest = build_manifest(config, models)
    name = run_name or (Path(out_dir).name if out_dir else pred_dir.name)

    out = Path(out_dir) if out_dir else None
    results_file = None
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
        results_file = (out / "results.jsonl").open("w", encoding="utf-8")
        if parsed:
            (out / "parsed").mkdir(exist_ok=True)
            for item_id, (graph, _) in sorted(parsed.items()):
                if graph is not None:
                    graph.save(out / "parsed" / f"{item_id}.json")
    rows = []
    try:
        for item in items:
            row = score_item(item, scorer, parsed, image_run)
            rows.append(row)
            if results_file:
                results_file.write(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n")
                results_file.flush()
            if on_item:
                on_item(row)
    finally:
        if results_file:
            results_file.close()
    summary = summarize_rows(rows, run=name, config_hash=config.hash, unreferenced=orphans,
                             fallbacks=manifest["fallbacks"])
    if out:
        (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", "utf-8")
        write_leaderboard([summary], out / "leaderboard.csv")
    return RunResult(out, rows, summary, manifest)


def read_rows(results_dir: Path) -> Iterable[dict[str, Any]]:
    """Rows of a results folder's ``results.jsonl``."""
    with (results_dir / "results.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
