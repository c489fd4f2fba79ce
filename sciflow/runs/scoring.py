"""Scoring runs: pair predictions with references, score each item, write the results folder.

A run never stops on one bad item. Per item the row's ``status`` is one of

- ``ok``: scored;
- ``missing_prediction``: the reference has no prediction; every score is 0;
- ``prediction_error``: the prediction could not be read, parsed or scored; every score is 0
  (every key the item would have had: the graph and text levels, and the image level and
  overall for an image prediction) and ``error`` names the prediction file and says why. A
  worker process that died on the item (``kill -9``, the OOM killer, a crash in native code)
  also gives ``prediction_error`` -- no separate status, so that every reader of results keeps
  working -- after one retry, with ``error`` =
  ``worker crashed while scoring <prediction file>: the worker process was killed by SIGKILL
  (out of memory, or kill -9); tried 2 times``; such a row has ``config_hash: null``, so a rerun
  tries the item again instead of reusing the failure;
- ``reference_error``: the reference is unusable (whatever the error, wherever it is found:
  in the worker, or here when the worker crashed and the reference then fails to load); the item
  is reported and left out of the means (there is nothing to score against).

A prediction whose stem matches no reference is listed in ``summary.json`` under
``unreferenced_predictions`` and logged as a warning. Several predictions with one stem
(``x.json``, ``x.png``): the ``.json`` is scored, else the first by file name, and a warning
naming every file is logged and kept in the row's ``notes`` (:func:`sciflow.runs.items.pair_items`).

Every row records the ``metric_version`` (:data:`sciflow.metrics.METRIC_VERSION`) it was
scored under; a row from another version is never reused on resume. The manifest records the
metric version and the fingerprint of the reference set (:func:`reference_fingerprint`), so
that runs scored against different references or metric definitions are not compared by
accident (``sciflow summarize``).

Files written to the output folder: ``results.jsonl`` (one row per item, sorted by id,
appended and flushed as each item finishes), ``summary.json``, ``leaderboard.csv``,
``manifest.json`` and, for image predictions, ``parsed/<id>.json``. The output folder:

- is checked (an existing file, a folder that cannot be created) before any model loads,
  raising :class:`~sciflow.runs.files.OutputError`;
- is locked for the whole run (:class:`~sciflow.runs.files.OutputLock`, ``.sciflow.lock``
  holding the PID): a second run on the same folder fails at once with
  :class:`~sciflow.runs.files.OutputBusy` naming the holder's PID, so every file in it is
  written by the one run that holds the lock;
- is consistent at every moment. A run that scores anything removes ``summary.json`` and
  ``leaderboard.csv`` before it writes its ``manifest.json`` and starts ``results.jsonl``; at the
  end it writes ``results.jsonl`` (rewritten sorted), ``summary.json`` and ``leaderboard.csv``,
  in that order. So a folder holds either a finished run (summary and leaderboard present, and
  from the same run as the results and manifest) or an unfinished one (manifest and results
  log, no summary), which a rerun resumes. A run that only reuses rows also rewrites the three
  in that order, after removing the old summary and leaderboard;
- gets every finished file atomically (temp file in the same folder + ``os.replace``,
  :func:`~sciflow.runs.files.write_atomic`): an ``OSError`` while writing (a full disk) stops
  the run with one :class:`~sciflow.runs.files.OutputError` line (``disk full writing
  OUT/results.jsonl``) and leaves no temp file; the rows already logged are kept for the rerun.
  Temp files left by a killed run are removed when the next one starts.

:class:`~sciflow.runs.files.OutputError` and :class:`~sciflow.runs.files.OutputBusy` are
:class:`ScoringError` subclasses.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciflow.config import Config
from sciflow.format.benchmarks import benchmark_name, resolve_refs
from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph
from sciflow.format.hashing import json_sha256
from sciflow.metrics import METRIC_VERSION
from sciflow.models.strict import model_fallbacks
from sciflow.runs.executors import make_executor
from sciflow.runs.files import (
    OutputBusy,
    OutputError,
    OutputLock,
    json_text,
    prepare_folder,
    remove_quietly,
    remove_stale_temps,
    write_atomic,
)
from sciflow.runs.items import Item, ScoringError, input_hashes, is_image, pair_items
from sciflow.runs.manifest import build_manifest
from sciflow.runs.results import RESULTS_NAME, ResultsLog, finalize, read_log, reusable_rows
from sciflow.runs.samples import expand_samples, merge_samples, samples_summary
from sciflow.runs.summary import summarize_rows, write_leaderboard
from sciflow.runs.worker import WorkerSpec, zero_scores

__all__ = ["OutputBusy", "OutputError", "RunResult", "ScoringError", "reference_fingerprint", "run_scoring"]

#: the files that exist only for a finished run (removed while a run is under way)
FINISHED_FILES = ("summary.json", "leaderboard.csv")

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
    bytes only, not on the folder they lie in nor on the predictions or source figures. A bundled
    benchmark's folder also gets ``"benchmark": "NAME@VERSION"``
    (:func:`sciflow.format.benchmarks.benchmark_name`)."""
    pairs = sorted({(i.sample_of or i.id, inputs[i.id].get("reference_sha256", "")) for i in items})  # one per item
    out: dict[str, Any] = {"dir": str(ref_dir), "n": len(pairs), "sha256": json_sha256(pairs)}
    if (bench := benchmark_name(ref_dir)) is not None:
        out["benchmark"] = bench
    return out


def _finish_row(row: dict[str, Any], item: Item | None) -> dict[str, Any]:
    """Complete a row from the executor before it is logged: its ``metric_version`` (the
    worker's, when it recorded one) and, for the ``prediction_error`` row of a crashed worker
    (no scores: built by :func:`sciflow.runs.worker.error_row`), the area and difficulty of its
    reference, so that the failure counts 0 in its difficulty's and area's means too, and a 0 for
    every score key it would have had; when that reference cannot be loaded the row is a
    ``reference_error`` instead (left out of the means)."""
    row.setdefault("metric_version", METRIC_VERSION)
    if row.get("status") == "prediction_error" and row.get("scores") is None and item is not None:
        if item.reference is not None:
            try:
                ref = load_graph(item.reference)
            except Exception as exc:  # noqa: BLE001 - whatever the error, the reference is unusable
                reason = str(exc) if isinstance(exc, GraphFormatError) else f"{type(exc).__name__}: {exc}"
                row.update(status="reference_error",
                           error=f"{item.reference}: unusable reference: {reason} ({row.get('error')})")
                return row
            row["meta"] = {k: ref.meta[k] for k in ("area", "difficulty") if k in ref.meta}
        row["scores"] = zero_scores(with_image=is_image(item.prediction))
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
    min_reliability: float | None = None,
) -> RunResult:
    """Score every item and (when ``out_dir`` is given) write the results folder.

    ``ref_dir`` (and ``pred_dir``) is a folder or a bundled benchmark's name
    (``"sciflow-bench-60@1"``, :func:`sciflow.format.benchmarks.resolve_refs`).

    With ``resume`` (the default) an existing ``results.jsonl`` in ``out_dir`` is read first
    and every row whose config hash and input hashes are unchanged is kept, not recomputed.
    ``threads`` caps each worker's math thread pools (OCR, torch); 0 leaves one process's
    pools at the library default and gives each of several workers ``cores // jobs``.
    ``critique`` adds the critic's verdict, explanation and edit instructions to every row.
    ``device`` (cpu | cuda | cuda:N | auto, :func:`sciflow.models.device.resolve_device`) is where the
    models run: a runtime setting recorded in the manifest, never part of the config hash;
    :class:`~sciflow.models.device.DeviceError` when a requested GPU cannot be used.
    ``min_reliability`` leaves rows whose ``parse_reliability`` is below it out of the summary's
    means (:mod:`sciflow.runs.trust`); it is recorded in the summary and the manifest.
    """
    pred_dir, ref_dir = resolve_refs(pred_dir), resolve_refs(ref_dir)
    items, orphans = pair_items(pred_dir, ref_dir)
    out = Path(out_dir) if out_dir else None
    if out is not None:
        prepare_folder(out)  # before any model loads
    with OutputLock(out) if out is not None else contextlib.nullcontext():
        return _run_locked(items, orphans, pred_dir, ref_dir, out, config, run_name=run_name, executor=executor,
                           jobs=jobs, threads=threads, address=address, cache_dir=cache_dir, resume=resume,
                           critique=critique, device=device, on_item=on_item, on_start=on_start,
                           min_reliability=min_reliability)


def _run_locked(
    items: list[Item],
    orphans: list[str],
    pred_dir: Path,
    ref_dir: Path,
    out: Path | None,
    config: Config,
    *,
    run_name: str | None,
    executor: str,
    jobs: int,
    threads: int,
    address: str | None,
    cache_dir: Path | None,
    resume: bool,
    critique: bool,
    device: str,
    on_item: Callable[[dict[str, Any]], None] | None,
    on_start: Callable[[int], None] | None,
    min_reliability: float | None = None,
) -> RunResult:
    """:func:`run_scoring` once the output folder (if any) is locked."""
    if out is not None:
        remove_stale_temps(out)
        remove_stale_temps(out / "parsed")
    for stem in orphans:
        if stem.endswith("/"):
            log.warning("%s/%s is a folder whose name is no reference id in %s: its files are not scored "
                        "(layouts: <id>.png, or <id>/<k>.png and <id>_s<k>.png for several samples)",
                        pred_dir, stem, ref_dir)
        else:
            log.warning("prediction %r has no reference in %s; ignored", stem, ref_dir)
    for item in items:
        for note in item.notes:
            log.warning(note)
    items = expand_samples(items)  # several samples per prompt: each scored as an item, merged below
    results_path = out / RESULTS_NAME if out else None
    inputs = {i.id: _input_hashes(i) for i in items}
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
            manifest["fallback_details"] = [f.line() for f in model_fallbacks(models)]
            manifest["min_reliability"] = min_reliability
            manifest["executor"] = {"name": ex.name, "jobs": jobs, "threads_per_worker": ex.threads}
            log_file = None
            if out and results_path:
                # from here the folder describes this (unfinished) run: no summary of an older one
                remove_quietly(*(out / f for f in FINISHED_FILES))
                log_file = ResultsLog(results_path, keep_existing=bool(kept))
            try:
                if out:
                    write_atomic(out / "manifest.json", json_text(manifest))
                by_id = {i.id: i for i in todo}
                for item_id, row, parsed in ex.run(todo):
                    _finish_row(row, by_id.get(item_id))
                    if out and parsed is not None:
                        _write_parsed(out, item_id, parsed)
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
    merged = merge_samples(ordered)  # one row per item (results.jsonl keeps one per sample)
    summary = summarize_rows(merged, run=name, config_hash=config.hash, unreferenced=orphans,
                             fallbacks=manifest["fallbacks"], metric_version=METRIC_VERSION, references=references,
                             min_reliability=min_reliability)
    if (spread := samples_summary(merged)) is not None:
        summary["samples"] = spread
    if out and manifest.get("min_reliability") != min_reliability:  # a reused manifest, another filter
        manifest = {**manifest, "min_reliability": min_reliability}
        write_atomic(out / "manifest.json", json_text(manifest))
    if out and results_path:
        remove_quietly(*(out / f for f in FINISHED_FILES))
        finalize(results_path, ordered)
        write_atomic(out / "summary.json", json_text(summary))
        write_leaderboard([summary], out / "leaderboard.csv")
    return RunResult(out, merged, summary, manifest, n_reused=len(kept))


def _input_hashes(item: Item) -> dict[str, str]:
    """:func:`input_hashes`, or a marker that matches no row when a file cannot be read (the
    worker then reports the file; the row is never reused)."""
    try:
        return input_hashes(item)
    except OSError as exc:
        return {"unreadable": str(exc)}


def _write_parsed(out: Path, item_id: str, parsed: dict[str, Any]) -> None:
    """``OUT/parsed/<id>.json``, atomically (the bytes :meth:`DiagramGraph.save` writes)."""
    folder = out / "parsed"
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {folder}: {exc.strerror or exc}") from exc
    write_atomic(folder / f"{item_id}.json", json_text(DiagramGraph.from_dict(parsed).to_dict()))


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
