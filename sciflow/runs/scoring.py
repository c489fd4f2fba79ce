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

Every row records the ``metric_version`` (:data:`sciflow.metrics.METRIC_VERSION`) it was
scored under; a row from another version is never reused on resume. The manifest records the
metric version and the fingerprint of the reference set (:func:`reference_fingerprint`), so
that runs scored against different references or metric definitions are not compared by
accident (``sciflow summarize``).

Files written to the output folder: ``results.jsonl`` (one row per item, sorted by id,
appended and flushed as each item finishes), ``summary.json``, ``leaderboard.csv`` and
``manifest.json``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciflow.config import Config
from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph
from sciflow.format.hashing import json_sha256
from sciflow.metrics import METRIC_VERSION
from sciflow.runs.executors import make_executor
from sciflow.runs.items import Item, ScoringError, input_hashes, is_image, pair_items
from sciflow.runs.manifest import build_manifest
from sciflow.runs.results import RESULTS_NAME, ResultsLog, finalize, read_log, reusable_rows
from sciflow.runs.summary import summarize_rows, write_leaderboard
from sciflow.runs.worker import WorkerSpec

__all__ = ["RunResult", "ScoringError", "reference_fingerprint", "run_scoring"]

log = logging.getLogger(__name__)

@dataclass
class RunResult:
    out_dir: Path | None
    rows: list[dict[str, Any]]
    summary: dict[str, Any]
    manifest: dict[str, Any]
    n_reused: int = 0  # rows kept from a previous, unchanged run


def reference_fingerprint(ref_dir: Path, items: list[Item], inputs: dict[str, dict[str, str]]) -> dict[str, Any]:
    """The reference set a run scored against: ``{"dir": str(ref_dir), "n": <references>,
    "sha256": ...}``, where ``sha256`` is :func:`sciflow.format.hashing.json_sha256` of the list of
    ``[stem, SHA-256 of the reference file]`` pairs sorted by stem (``inputs`` is
    :func:`sciflow.runs.items.input_hashes` per item id). It depends on the references' names and
    bytes only, not on the folder they lie in nor on the predictions or source figures."""
    pairs = sorted([i.id, inputs[i.id].get("reference_sha256", "")] for i in items)
    return {"dir": str(ref_dir), "n": len(pairs), "sha256": json_sha256(pairs)}


def _finish_row(row: dict[str, Any], item: Item | None) -> dict[str, Any]:
    """Complete a row from the executor before it is logged: its ``metric_version`` (the
    worker's, when it recorded one) and, for a ``prediction_error`` row without meta (a crashed
    worker's), the area and difficulty of its reference, so that the failure counts 0 in its
    difficulty's and area's means too."""
    row.setdefault("metric_version", METRIC_VERSION)
    if row.get("status") == "prediction_error" and not row.get("meta") and item and item.reference:
        try:
            ref = load_graph(item.reference)
        except (GraphFormatError, OSError) as exc:
            log.debug("%s: no meta from %s: %s", row.get("id"), item.reference, exc)
        else:
            row["meta"] = {k: ref.meta[k] for k in ("area", "difficulty") if k in ref.meta}
    return row


def run_scoring(
    pred_dir: str | Path,
    ref_dir: str | Path,
    out_dir: str | Path | None,
    config: Config,
    *,
    run_name: str | None = None,
    executor: str = "local",
    jobs: int = 1,
    threads: int = 0,
    address: str | None = None,
    cache_dir: Path | None = None,
    resume: bool = True,
    critique: bool = False,
    device: str = "cpu",
    on_item: Callable[[dict[str, Any]], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> RunResult:
    """Score every item and (when ``out_dir`` is given) write the results folder.

    With ``resume`` (the default) an existing ``results.jsonl`` in ``out_dir`` is read first
    and every row whose config hash and input hashes are unchanged is kept, not recomputed.
    ``threads`` caps each worker's math thread pools (OCR, torch); 0 leaves one process's
    pools at the library default and gives each of several workers ``cores // jobs``.
    ``critique`` adds the critic's verdict, explanation and edit instructions to every row.
    ``device`` (cpu | cuda | cuda:N | auto, :func:`sciflow.models.device.resolve_device`) is where the
    models run: a runtime setting recorded in the manifest, never part of the config hash;
    :class:`~sciflow.models.device.DeviceError` when a requested GPU cannot be used.
    """
    pred_dir, ref_dir = Path(pred_dir), Path(ref_dir)
    items, orphans = pair_items(pred_dir, ref_dir)
    for stem in orphans:
        log.warning("prediction %r has no reference in %s; ignored", stem, ref_dir)
    for item in items:
        for note in item.notes:
            log.warning(note)
    out = Path(out_dir) if out_dir else None
    results_path = out / RESULTS_NAME if out else None
    inputs = {i.id: input_hashes(i) for i in items}
    references = reference_fingerprint(ref_dir, items, inputs)
    kept: dict[str, dict[str, Any]] = {}
    if out and resume and results_path and results_path.is_file():
        kept = reusable_rows(read_log(results_path), config.hash, inputs, critique)
        log.info("resuming: %d of %d items already scored", len(kept), len(items))
    todo = [i for i in items if i.id not in kept]
    image_run = any(is_image(i.prediction) for i in items)
    if on_start:
        on_start(len(items))
    for row in kept.values():
        if on_item:
            on_item(row)

    rows = dict(kept)
    manifest = _kept_manifest(out, config.hash, references) if out and not todo else None
    if manifest is not None:  # every row reused: no worker to start, no model to load
        log.info("all %d items already scored with this config; nothing to run", len(items))
    else:
        spec = WorkerSpec(dict(config.data), str(cache_dir) if cache_dir else None, image_run, critique,
                          threads=max(0, threads), device=device)
        ex = make_executor(executor, spec, jobs=jobs, address=address)
        try:
            models = ex.describe()
            manifest = build_manifest(config, models, device=ex.device_info(), references=references)
            manifest["executor"] = {"name": ex.name, "jobs": jobs, "threads_per_worker": ex.threads}
            if out:
                out.mkdir(parents=True, exist_ok=True)
                (out / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", "utf-8")
            log_file = ResultsLog(results_path, keep_existing=bool(kept)) if results_path else None
            try:
                by_id = {i.id: i for i in todo}
                for item_id, row, parsed in ex.run(todo):
                    _finish_row(row, by_id.get(item_id))
                    if out and parsed is not None:
                        (out / "parsed").mkdir(exist_ok=True)
                        DiagramGraph.from_dict(parsed).save(out / "parsed" / f"{item_id}.json")
                    if log_file:
                        log_file.append(row)
                    rows[item_id] = row
                    if on_item:
                        on_item(row)
            finally:
                if log_file:
                    log_file.close()
        finally:
            ex.close()
    ordered = [rows[i.id] for i in items]
    name = run_name or (out.name if out else pred_dir.name)
    summary = summarize_rows(ordered, run=name, config_hash=config.hash, unreferenced=orphans,
                             fallbacks=manifest["fallbacks"], metric_version=METRIC_VERSION, references=references)
    if out and results_path:
        finalize(results_path, ordered)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", "utf-8")
        write_leaderboard([summary], out / "leaderboard.csv")
    return RunResult(out, ordered, summary, manifest, n_reused=len(kept))


def _kept_manifest(out: Path, config_hash: str, references: dict[str, Any]) -> dict[str, Any] | None:
    """The manifest already in ``out`` when it was written under ``config_hash``, the current
    :data:`~sciflow.metrics.METRIC_VERSION` and the same reference set ``references`` (it then
    describes the run that produced the reused rows), else None."""
    try:
        manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    ok = (isinstance(manifest, dict) and manifest.get("config_hash") == config_hash and "fallbacks" in manifest
          and manifest.get("metric_version") == METRIC_VERSION and manifest.get("references") == references)
    return manifest if ok else None
