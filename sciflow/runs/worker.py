"""Per-item work: parse an image prediction (cached) and score it on every level.

A :class:`Worker` is built once per process (or Ray actor): it holds the embedder, the image
models, the judge client and, on first need, the parser, so models load once per worker and
never on the per-item path. :meth:`Worker.run` is a function of the item and the config: the
same item gives the same row in any process, under any executor.

With a cache folder, the worker also backs its label embeddings with the on-disk store
``<cache_dir>/embeddings.sqlite3`` (:data:`EMBEDDINGS_FILE`, :mod:`sciflow.models.embedding_store`),
shared by all workers of a run and kept for the next: labels are encoded once, not once per
process and run, with bit-identical vectors.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciflow.config import Config
from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.overall import overall_score
from sciflow.metrics.text_level import prompt_text, serialize, text_level
from sciflow.models.device import DeviceSpec, resolve_device, uses_onnxruntime
from sciflow.models.embedding import get_embedder
from sciflow.models.embedding_store import EmbeddingStore
from sciflow.models.judge import ALIGNMENT_TEMPLATE, ChatJudge, JudgeError
from sciflow.runs.items import GRAPH_KEYS, IMAGE_KEYS, TEXT_KEYS, Item, input_hashes, is_image
from sciflow.runs.trust import reliability_fields

log = logging.getLogger(__name__)

#: the embedding store's file name inside a run's cache folder
EMBEDDINGS_FILE = "embeddings.sqlite3"


class ItemScorer:
    """Scores one prediction against its reference on every level the inputs allow.

    Holds what is loaded once per process (embedder, image models, judge); each call is a
    function of its inputs. Graph predictions get the graph and text levels; image
    predictions get the image level too, and then the overall score
    ``overall.graph * graph + overall.text * text + overall.image * image``.
    """

    def __init__(self, config: Config, critique: bool = False, device: str = "cpu"):
        """``device``: torch device string for the embedder and image models (a runtime
        setting from :func:`sciflow.models.device.resolve_device`, outside the hashed config)."""
        self.config = config
        self.critique = critique
        self.device = device
        self.embedder = get_embedder(config.matching.embedder, device)
        self.judge = ChatJudge(config.text.judge) if config.text.alignment_backend == "judge" else None
        self._image_models: Any = None
        self._store: EmbeddingStore | None = None

    def use_store(self, store: EmbeddingStore | None) -> None:
        """Back every label embedder this scorer uses with ``store``: the matching embedder now,
        the image level's text-embedding fallback when the image models load (it is usually the
        same process-wide embedder; it is not when ``matching.embedder`` is ``none``)."""
        self._store = store
        self.embedder.use_store(store)
        if self._image_models is not None:
            self._image_models.use_embedding_store(store)

    def image_models(self) -> Any:
        if self._image_models is None:
            from sciflow.models.image_models import get_image_models

            self._image_models = get_image_models(self.config.image, self.device)
            if self._store is not None:
                self._image_models.use_embedding_store(self._store)
        return self._image_models

    def models(self, with_image: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"embedder": self.embedder.describe()}
        if self.judge is not None:
            out["text_judge"] = self.judge.describe()
        if with_image:
            d = self.image_models().describe()
            out["image_semantic"] = d["semantic"]
            out["image_perceptual"] = d["perceptual"]
        return out

    def __call__(
        self,
        pred: DiagramGraph,
        ref: DiagramGraph,
        *,
        image: Path | None = None,
        source_image: Path | None = None,
        extra_texts: Sequence[str] | None = None,  # None: the parser's free texts in pred.meta
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
        if self.critique:
            from sciflow.critic import CritiqueRule, critique_from_result

            rule = CritiqueRule.from_config(c.critique)
            out["critique"] = critique_from_result(pred, ref, g, rule).to_dict()
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
                scores["overall"] = overall_score(g.score, scores["text"], im.score, c.overall)
        return out


def zero_scores(with_image: bool) -> dict[str, float]:
    """Every score key a failed item would have had, at 0 (the image level and overall too for
    an image prediction)."""
    keys = GRAPH_KEYS + TEXT_KEYS + ((*IMAGE_KEYS, "overall") if with_image else ())
    return {k: 0.0 for k in keys}



def base_row(item: Item) -> dict[str, Any]:
    """The row of ``item`` before anything is known about it (status ``ok``, nothing scored); a
    sample of an item (:mod:`sciflow.runs.samples`) also records ``sample_of``."""
    row = _base_row(item)
    if item.sample_of is not None:
        row["sample_of"] = item.sample_of
    return row


def _base_row(item: Item) -> dict[str, Any]:
    return {
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
        # parse reliability (sciflow/agents/reliability.py): set for parsed image predictions only
        "parse_reliability": None,
        "reliability_signals": None,
        "low_reliability": False,
    }


def error_row(item: Item, message: str) -> dict[str, Any]:
    """The row of an item whose worker crashed or failed outside :func:`score_item`
    (``prediction_error``, ``error`` = ``message``), built in the parent process. Its meta and
    zero scores are filled in, or its status turned into ``reference_error`` when the reference is
    unusable, by :func:`sciflow.runs.scoring._finish_row`. Its ``config_hash`` is None, so a
    rerun never reuses it: the item is tried again."""
    row = base_row(item)
    with contextlib.suppress(OSError):
        row["inputs"] = input_hashes(item)
    row.update(status="prediction_error", error=message, config_hash=None, critique_written=False)
    return row


def score_item(
    item: Item,
    scorer: ItemScorer,
    parse: Callable[[Path], tuple[DiagramGraph | None, str | None]] | None = None,
    image_run: bool = False,
) -> tuple[dict[str, Any], DiagramGraph | None]:
    """The results row of one item, and the graph parsed from its image prediction (if any).

    ``parse`` turns an image prediction into a graph (or an error message). In an
    ``image_run`` (predictions are images) a missing prediction scores 0 on the image level
    and overall too. Nothing raises: a reference that cannot be loaded, whatever the error,
    gives ``reference_error``; a prediction that cannot be loaded, parsed or scored gives
    ``prediction_error`` with zero scores; each ``error`` names the file."""
    row = base_row(item)
    try:
        row["inputs"] = input_hashes(item)
    except OSError as exc:  # an unreadable file: loading it below says which
        log.debug("%s: no input hashes: %s", item.id, exc)
    try:
        assert item.reference is not None
        ref = load_graph(item.reference)
    except GraphFormatError as exc:
        row.update(status="reference_error", error=str(exc))
        return row, None
    except Exception as exc:  # noqa: BLE001 - RecursionError, MemoryError, OSError ...: still the reference's fault
        row.update(status="reference_error", error=f"{item.reference}: unusable reference: {type(exc).__name__}: {exc}")
        return row, None
    row["meta"] = {k: ref.meta[k] for k in ("area", "difficulty") if k in ref.meta}
    image_pred = is_image(item.prediction)
    if item.prediction is None:
        folder = next((n for n in item.notes if n.endswith("is a folder, not a prediction file")), None)
        row.update(status="missing_prediction", error=folder or "no prediction for this reference",
                   scores=zero_scores(with_image=image_run))
        return row, None
    parsed = None
    try:
        if not image_pred:
            pred = load_graph(item.prediction)
        else:
            if parse is None:
                raise GraphFormatError(str(item.prediction), [("$", "image predictions need the parser")])
            parsed, err = parse(item.prediction)
            if parsed is None:  # an image error names its file already ("unreadable image <file>: ...")
                named = bool(err) and str(item.prediction) in err
                row.update(status="prediction_error", scores=zero_scores(with_image=image_pred),
                           error=err if named else f"{item.prediction}: parse failed: {err}")
                return row, None
            pred = parsed
            row["parsed_graph"] = f"parsed/{item.id}.json"
            row.update(reliability_fields(parsed, scorer.config.trust.min_reliability_flag))
    except GraphFormatError as exc:
        row.update(status="prediction_error", error=str(exc), scores=zero_scores(with_image=image_pred))
        return row, None
    except Exception as exc:  # noqa: BLE001 - a failure on one item never stops the run
        row.update(status="prediction_error", scores=zero_scores(with_image=image_pred),
                   error=f"{item.prediction}: unusable prediction: {type(exc).__name__}: {exc}")
        return row, None
    try:
        result = scorer(
            pred, ref, image=item.prediction if image_pred else None, source_image=item.source_image
        )
    except Exception as exc:  # noqa: BLE001
        log.warning("%s: scoring failed: %s", item.prediction, exc, exc_info=True)
        row.update(status="prediction_error", parsed_graph=None, scores=zero_scores(with_image=image_pred),
                   error=f"{item.prediction}: scoring failed: {type(exc).__name__}: {exc}")
        return row, None
    row["notes"] += result.pop("notes", [])
    row.update(result)
    return row, parsed


def limit_threads(n: int) -> None:
    """Cap this process's math thread pools (OpenMP/MKL/BLAS, torch; the OCR engine gets the
    same cap through the parser), so that N workers on N cores do not oversubscribe them."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(n)
    import torch

    torch.set_num_threads(n)


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker is built from; plain data, so it crosses process and Ray boundaries."""

    config_data: dict[str, Any]
    cache_dir: str | None = None
    image_run: bool = False
    critique: bool = False
    threads: int = 0  # > 0 caps the math libraries' thread pools in this worker
    device: str = "cpu"  # cpu | cuda | cuda:N | auto, resolved in the worker (sciflow.models.device)


class Worker:
    """Everything one process needs to turn items into rows; build once, run many.

    Runtime settings (thread caps, device) come from the spec, not from the hashed config:
    they never change a row's ``config_hash``. The device is resolved here, in the process that
    runs the models (:func:`sciflow.models.device.resolve_device`); :attr:`device` is what it got."""

    def __init__(self, spec: WorkerSpec):
        if spec.threads > 0:
            limit_threads(spec.threads)
        self.config = Config(spec.config_data)
        self.cache_dir = Path(spec.cache_dir) if spec.cache_dir else None
        self.image_run = spec.image_run
        self.threads = spec.threads
        self.device: DeviceSpec = resolve_device(
            spec.device, need_onnxruntime=spec.image_run and uses_onnxruntime(self.config.parser))
        self.scorer = ItemScorer(self.config, spec.critique, self.device.torch_device)
        if self.cache_dir is not None:
            self.scorer.use_store(EmbeddingStore(self.cache_dir / EMBEDDINGS_FILE))
        self._parser: Any = None

    @property
    def parser(self) -> Any:
        if self._parser is None:
            from sciflow.pipeline import Parser

            self._parser = Parser(self.config, threads=self.threads, device=self.device.torch_device)
        return self._parser

    def parse(self, path: Path) -> tuple[DiagramGraph | None, str | None]:
        from sciflow.runs.parse_batch import parse_cached

        return parse_cached(self.parser, path, self.cache_dir)

    def run(self, item: Item) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The item's row and its parsed graph as a dict (for the writer to save)."""
        row, parsed = score_item(item, self.scorer, self.parse, self.image_run)
        row["config_hash"] = self.config.hash
        row["critique_written"] = self.scorer.critique
        return row, (parsed.to_dict() if parsed is not None else None)

    def describe(self) -> dict[str, Any]:
        """Model names, weight hashes and backends, for the manifest."""
        models = self.scorer.models(with_image=self.image_run)
        if self.image_run:
            models["parser"] = self.parser.fingerprint()
        return models

    def device_info(self) -> dict[str, Any]:
        """The device this worker resolved and runs on, for the manifest."""
        return self.device.to_dict()
