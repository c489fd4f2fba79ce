"""The Python API: score, compare and parse in a few lines (a face, like the CLI; both call the
same library code, :func:`sciflow.runs.scoring.run_scoring` for every batch).

>>> import sciflow
>>> results = sciflow.score("sciflow-bench-60@1/examples/perturbed-k2", refs="sciflow-bench-60@1")
>>> len(results.rows), results.summary["n_missing"]
(60, 0)
>>> round(results.summary["means"]["graph"], 3)  # two injected errors per item
0.848
>>> one = sciflow.score_one("sciflow-bench-60@1/cv_vit.json", "sciflow-bench-60@1/cv_vit.json")
>>> one.graph, one.text  # a perfect copy
(1.0, 1.0)

Predictions are a folder (or a bundled path such as the example above), a list of files, a
list of :class:`~sciflow.format.graph.DiagramGraph`, or a mapping ``{item id: graph, image or
file}`` (images: PIL images or arrays, parsed first). References are a folder or a benchmark
name (:func:`sciflow.format.benchmarks.resolve_refs`; default ``sciflow-bench-60@1``).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciflow.config import Config, load_config
from sciflow.format.benchmarks import DEFAULT_BENCHMARK, resolve_refs
from sciflow.format.extras import require
from sciflow.format.graph import DiagramGraph, load_graph

__all__ = ["APIError", "ItemScore", "Results", "compare", "load_results", "parse", "score", "score_one"]

log = logging.getLogger(__name__)

#: columns of :meth:`Results.to_pandas` before the scores
_ID_COLUMNS = ("id", "status", "area", "difficulty", "error")


class APIError(ValueError):
    """Inputs the API cannot turn into a scoring run (one line saying why)."""


@dataclass(frozen=True)
class ItemScore:
    """One item's scores (:attr:`scores`: every sub-score) and its full results row."""

    id: str
    status: str
    scores: dict[str, float]
    row: dict[str, Any] = field(repr=False)

    @property
    def graph(self) -> float | None:
        return self.scores.get("graph")

    @property
    def text(self) -> float | None:
        return self.scores.get("text")

    @property
    def image(self) -> float | None:
        return self.scores.get("image")

    @property
    def overall(self) -> float | None:
        return self.scores.get("overall")

    @property
    def error(self) -> str | None:
        return self.row.get("error")

    def __getitem__(self, key: str) -> float:
        return self.scores[key]


@dataclass
class Results:
    """A scored run: :attr:`rows` (one dict per item, as in ``results.jsonl``), :attr:`summary`
    (as in ``summary.json``: means with intervals, by difficulty and area, failures),
    :attr:`manifest` (what produced them) and :attr:`out_dir` (where they were written, if)."""

    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    manifest: dict[str, Any]
    out_dir: Path | None = None

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.3f}" for k, v in self.summary.get("means", {}).items()
                          if k in ("overall", "graph", "text", "image") and isinstance(v, float))
        return f"Results(run={self.summary.get('run')!r}, items={len(self.rows)}, {means})"

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, item_id: str) -> ItemScore:
        for r in self.rows:
            if r["id"] == item_id:
                return _item_score(r)
        raise KeyError(item_id)

    def items(self) -> list[ItemScore]:
        """Every row as an :class:`ItemScore`."""
        return [_item_score(r) for r in self.rows]

    def records(self) -> list[dict[str, Any]]:
        """One flat dict per item: id, status, area, difficulty, error, then every score."""
        out = []
        for r in self.rows:
            meta = r.get("meta") or {}
            rec = {"id": r["id"], "status": r["status"], "area": meta.get("area"),
                   "difficulty": meta.get("difficulty"), "error": r.get("error")}
            rec.update(r.get("scores") or {})
            out.append(rec)
        return out

    def to_pandas(self) -> Any:
        """:meth:`records` as a ``pandas.DataFrame`` indexed by item id (the ``pandas`` extra)."""
        pd = require("pandas", "pandas", "Results.to_pandas()")
        return pd.DataFrame(self.records()).set_index("id")

    def save(self, out_dir: str | Path) -> Path:
        """Write the run as a results folder (``results.jsonl``, ``summary.json``,
        ``leaderboard.csv``, ``manifest.json``) that ``sciflow summarize``, ``report`` and
        ``compare`` read; returns the folder."""
        from sciflow.runs.files import json_text, write_atomic
        from sciflow.runs.results import RESULTS_NAME, finalize
        from sciflow.runs.summary import write_leaderboard

        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise APIError(f"{out} is a file, not a folder")
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / "manifest.json", json_text(self.manifest))
        finalize(out / RESULTS_NAME, self.rows)
        write_atomic(out / "summary.json", json_text(self.summary))
        write_leaderboard([self.summary], out / "leaderboard.csv")
        return out


def _item_score(row: dict[str, Any]) -> ItemScore:
    return ItemScore(row["id"], row["status"], dict(row.get("scores") or {}), row)


def _config(config: Config | str | Path | Mapping[str, Any] | None) -> Config:
    """A :class:`Config`, a TOML file, a nested mapping of overrides, or None (the defaults)."""
    if isinstance(config, Config):
        return config
    if isinstance(config, Mapping):
        return load_config(overrides=config)
    return load_config(config)


def _stage(prediction: Any, stem: str, folder: Path) -> None:
    """Write or link one prediction into ``folder`` as ``<stem>.<ext>``."""
    if isinstance(prediction, DiagramGraph):
        prediction.save(folder / f"{stem}.json")
        return
    if isinstance(prediction, (str, Path)):
        path = resolve_refs(str(prediction)).resolve()
        if not path.is_file():
            raise APIError(f"prediction file not found: {prediction}")
        (folder / f"{stem}{path.suffix.lower()}").symlink_to(path)
        return
    from PIL import Image

    if not isinstance(prediction, Image.Image):
        import numpy as np

        if not isinstance(prediction, np.ndarray):
            raise APIError(f"{stem}: a prediction is a DiagramGraph, a file path, a PIL image or an array, "
                           f"not {type(prediction).__name__}")
        prediction = Image.fromarray(prediction)
    prediction.convert("RGB").save(folder / f"{stem}.png")


def _stage_all(predictions: Any, folder: Path) -> Path:
    """The folder to score: ``predictions`` itself when it is one, else ``folder`` filled with them."""
    if isinstance(predictions, (str, Path)):
        path = resolve_refs(str(predictions))
        if path.is_dir():
            return path
        predictions = [path]
    if isinstance(predictions, Mapping):
        named = {str(k): v for k, v in predictions.items()}
    elif isinstance(predictions, Iterable):
        named = {}
        for p in predictions:
            if isinstance(p, DiagramGraph):
                key = p.id
            elif isinstance(p, (str, Path)):
                key = resolve_refs(str(p)).stem
            else:
                raise APIError("images need item ids: pass a mapping {item id: image}")
            if key in named:
                raise APIError(f"two predictions for item {key!r}")
            named[key] = p
    else:
        raise APIError(f"predictions: a folder, a list or a mapping, not {type(predictions).__name__}")
    folder.mkdir(parents=True, exist_ok=True)
    for key, p in named.items():
        _stage(p, key, folder)
    return folder


def score(
    predictions: Any,
    refs: str | Path = DEFAULT_BENCHMARK,
    *,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    out: str | Path | None = None,
    name: str | None = None,
    jobs: int = 1,
    executor: str = "local",
    cache_dir: str | Path | None = None,
    resume: bool = True,
    critique: bool = False,
    device: str = "cpu",
    **options: Any,
) -> Results:
    """Score ``predictions`` against ``refs`` (see the module docstring for both) and return
    the :class:`Results`; with ``out`` the results folder is written too (and resumed, as
    ``sciflow score --out`` does). ``config``: a :class:`~sciflow.config.Config`, a TOML file or
    a mapping of overrides (``{"matching": {"embedder": "none"}}``). ``options`` go to
    :func:`sciflow.runs.scoring.run_scoring` (``threads``, ``address``, ``on_item`` ...).

    >>> import sciflow
    >>> from sciflow.format.benchmarks import resolve_refs
    >>> ref = sciflow.load_graph(resolve_refs("sciflow-bench-60@1/cv_vit.json"))
    >>> r = sciflow.score([ref], refs="sciflow-bench-60@1", config={"matching": {"embedder": "none"}})
    >>> r.summary["n_scored"], r.summary["n_missing"], r["cv_vit"].graph
    (1, 59, 1.0)
    """
    from sciflow.runs.scoring import run_scoring

    cfg = _config(config)
    ref_dir = resolve_refs(str(refs))
    with tempfile.TemporaryDirectory(prefix="sciflow-predictions-") as tmp:
        pred_dir = _stage_all(predictions, Path(tmp) / (name or "predictions"))
        result = run_scoring(pred_dir, ref_dir, out, cfg, run_name=name, executor=executor, jobs=jobs,
                             cache_dir=Path(cache_dir) if cache_dir else None, resume=resume, critique=critique,
                             device=device, **options)
    return Results(result.rows, result.summary, result.manifest, result.out_dir)


def score_one(
    prediction: Any,
    reference: DiagramGraph | str | Path,
    *,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    source_image: str | Path | None = None,
    critique: bool = False,
    device: str = "cpu",
) -> ItemScore:
    """Score one prediction (a graph, a graph or image file, a PIL image or an array) against one
    reference (a graph, a file, or ``"sciflow-bench-60@1/<id>.json"``); ``source_image`` is the
    item's source figure (for the image level's perceptual term).

    >>> import sciflow
    >>> ref = sciflow.DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "Encoder"},
    ...     {"id": "b", "label": "Decoder"}], "edges": [{"source": "a", "target": "b"}]})
    >>> flipped = sciflow.DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "Encoder"},
    ...     {"id": "b", "label": "Decoder"}], "edges": [{"source": "b", "target": "a"}]})
    >>> s = sciflow.score_one(flipped, ref, config={"matching": {"embedder": "none"}})
    >>> s.status, s["node_f1"], s["edge_f1"]  # both boxes right, the arrow reversed
    ('ok', 1.0, 0.0)
    """
    ref = reference if isinstance(reference, DiagramGraph) else load_graph(resolve_refs(str(reference)))
    stem = ref.id or "item"
    with tempfile.TemporaryDirectory(prefix="sciflow-one-") as tmp:
        refs, preds = Path(tmp) / "refs", Path(tmp) / "preds"
        refs.mkdir()
        preds.mkdir()
        ref.save(refs / f"{stem}.json")
        if source_image is not None:
            (refs / f"{stem}{Path(source_image).suffix.lower()}").symlink_to(Path(source_image).resolve())
        _stage(prediction, stem, preds)
        results = score(preds, refs, config=config, critique=critique, device=device)
    return _item_score(results.rows[0])


def parse(images: Any, config: Config | str | Path | Mapping[str, Any] | None = None, **kw: Any) -> Any:
    """Parse one image (a path, a PIL image or an array) into a
    :class:`~sciflow.pipeline.ParseResult`, or a list of them into a list (one parser, loaded
    once). ``kw`` goes to :class:`~sciflow.pipeline.Parser` calls (``debug_dir``, ``item_id``)."""
    from sciflow.pipeline import Parser

    parser = Parser(_config(config))
    if isinstance(images, (list, tuple)):
        return [parser(im, **kw) for im in images]
    return parser(images, **kw)


def compare(a: Results | str | Path, b: Results | str | Path) -> dict[str, Any]:
    """Two runs item by item (results folders or :class:`Results`): per level, difficulty and
    area the mean difference A − B, its paired bootstrap 95% interval, the Wilcoxon p-value and
    a verdict line (:func:`sciflow.runs.compare.compare_runs`). Runs against different reference
    sets or metric versions are refused (:class:`~sciflow.runs.compare.CompareError`).

    >>> import sciflow
    >>> cfg = {"matching": {"embedder": "none"}}
    >>> k2 = sciflow.score("sciflow-bench-60@1/examples/perturbed-k2", config=cfg, name="k2")
    >>> copy = sciflow.score("sciflow-bench-60@1", config=cfg, name="copy")
    >>> c = sciflow.compare(copy, k2)
    >>> c["n_common"], c["levels"]["graph"]["significant"], c["levels"]["graph"]["diff"] > 0
    (60, True, True)
    """
    from sciflow.runs.compare import CompareError, compare_rows, compare_runs
    from sciflow.runs.summary import run_differences

    if not isinstance(a, Results) and not isinstance(b, Results):
        return compare_runs(a, b)
    ra, rb = (x if isinstance(x, Results) else _load_results(x) for x in (a, b))
    blocking = [d for d in run_differences([ra.summary, rb.summary]) if d.blocking]
    if blocking:
        raise CompareError("not comparable: " + " | ".join(d.describe() for d in blocking))
    return compare_rows(ra.rows, rb.rows, str(ra.summary["run"]), str(rb.summary["run"]))


def load_results(out_dir: str | Path) -> Results:
    """A results folder written by ``sciflow score`` (or :meth:`Results.save`) as :class:`Results`."""
    return _load_results(out_dir)


def _load_results(out_dir: str | Path) -> Results:
    import json

    from sciflow.runs.results import RESULTS_NAME, read_log
    from sciflow.runs.summary import read_summary

    d = Path(out_dir)
    summary = read_summary(d)
    manifest_path = d / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8")) if manifest_path.is_file() else {}
    from sciflow.runs.samples import merge_samples

    return Results(merge_samples(read_log(d / RESULTS_NAME)), summary, manifest, d)
