"""Several samples per prompt: each scored on its own, then averaged per item with the spread.

A generator is often sampled K times per prompt. ``PRED_DIR/<id>/<k>.png`` (a folder named after
the reference) or ``PRED_DIR/<id>_s<k>.png`` are the K samples of item ``<id>``
(:func:`sciflow.runs.items.pair_items` finds them). :func:`expand_samples` turns such an item into
one item per sample, id ``<id>~<k>`` with ``sample_of = <id>``; they are scored, cached, logged
and resumed like any item, so ``results.jsonl`` holds one row per sample. Every reader of a
results folder then calls :func:`merge_samples`, which gives one row per item:

- ``scores``: the mean over the samples of each score (a failed sample counts 0, as a failed
  item does in the run's means; a term no sample has stays None);
- ``status``: ``ok`` when at least one sample was scored, else the first sample's status;
- ``samples``: ``{"n", "ids", "status", "scores": {key: [per sample]}, "sd": {key: sample
  standard deviation}, "min": {...}, "max": {...}}`` -- the spread over the samples;
- the diagnostics (graph, text and image level, parsed graph) of the first scored sample;
- ``parse_reliability``: the mean over the parsed samples (``reliability_samples`` lists them),
  and ``low_reliability`` from that mean (:func:`_merged_reliability`).

>>> rows = [{"id": "a~1", "sample_of": "a", "status": "ok", "scores": {"graph": 0.5}},
...         {"id": "a~2", "sample_of": "a", "status": "ok", "scores": {"graph": 1.0}},
...         {"id": "b", "status": "ok", "scores": {"graph": 0.2}}]
>>> merged = merge_samples(rows)
>>> [(r["id"], r["scores"]["graph"]) for r in merged]
[('a', 0.75), ('b', 0.2)]
>>> merged[0]["samples"]["n"], round(merged[0]["samples"]["sd"]["graph"], 4)
(2, 0.3536)
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from sciflow.runs.items import Item

__all__ = ["SAMPLE_SEPARATOR", "expand_samples", "merge_samples", "samples_summary"]

#: between an item id and its sample key in a sample's id (``cv_vit~3``)
SAMPLE_SEPARATOR = "~"


def expand_samples(items: Sequence[Item]) -> list[Item]:
    """Each item with ``samples`` replaced by one item per sample (id ``<id>~<k>``)."""
    out: list[Item] = []
    for item in items:
        if not item.samples:
            out.append(item)
            continue
        for key, path in item.samples:
            out.append(replace(item, id=f"{item.id}{SAMPLE_SEPARATOR}{key}", prediction=path, samples=[],
                               sample_of=item.id, notes=list(item.notes)))
    return out


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _merge(parent: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    if any(r.get("status") == "reference_error" for r in rows):  # the reference is at fault: one row for it
        return {**rows[0], "id": parent, "sample_of": None}
    scored = [r for r in rows if r.get("status") == "ok"]
    base = scored[0] if scored else rows[0]
    keys = list(dict.fromkeys(k for r in rows for k in (r.get("scores") or {})))
    per_key = {k: [(r.get("scores") or {}).get(k, 0.0 if r.get("status") != "ok" else None) for r in rows]
               for k in keys}
    scores = {k: _mean(v) for k, v in per_key.items()}
    spread: dict[str, dict[str, float]] = {"sd": {}, "min": {}, "max": {}}
    for k, values in per_key.items():
        present = [v for v in values if v is not None]
        if present:
            spread["min"][k], spread["max"][k] = min(present), max(present)
        if len(present) > 1:
            spread["sd"][k] = statistics.stdev(present)
    failed = [r for r in rows if r.get("status") != "ok"]
    error = None
    if failed:
        error = f"{len(failed)} of {len(rows)} samples not scored: " + "; ".join(
            f"{r['id']}: {r.get('error') or r.get('status')}" for r in failed)
    merged = {**base, "id": parent, "sample_of": None, "status": "ok" if scored else base.get("status"),
              "error": error if not scored else base.get("error"), "scores": scores}
    if scored and failed:
        merged["notes"] = [*(base.get("notes") or []), error]
    merged["samples"] = {"n": len(rows), "ids": [r["id"] for r in rows], "status": [r.get("status") for r in rows],
                         "scores": per_key, **spread}
    merged.update(_merged_reliability(rows))
    return merged


def _merged_reliability(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """An item's parse reliability over its samples: the mean of the samples' ``parse_reliability``
    (parsed samples only), flagged ``low_reliability`` when that mean is below the threshold the
    samples were flagged with (:mod:`sciflow.runs.trust`); nothing when no sample was parsed."""
    parsed = [r for r in rows if isinstance(r.get("parse_reliability"), (int, float))]
    if not parsed:
        return {}
    mean = sum(float(r["parse_reliability"]) for r in parsed) / len(parsed)
    threshold = parsed[0].get("reliability_threshold")
    out: dict[str, Any] = {"parse_reliability": mean, "reliability_samples": [r["parse_reliability"] for r in parsed]}
    if isinstance(threshold, (int, float)):
        out["low_reliability"] = mean < float(threshold)
    return out


def merge_samples(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per item: the sample rows of an item (``sample_of``) merged (module docstring),
    every other row as it is, in the order of their first row."""
    groups: dict[str, list[dict[str, Any]]] = {}
    order: list[tuple[str, Any]] = []
    for r in rows:
        parent = r.get("sample_of")
        if parent is None:
            order.append(("row", r))
        else:
            if parent not in groups:
                groups[parent] = []
                order.append(("item", parent))
            groups[parent].append(r)
    if not groups:
        return list(rows)
    return [x if kind == "row" else _merge(x, groups[x]) for kind, x in order]


def samples_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """For a run with samples (rows from :func:`merge_samples`): how many items had them, the
    samples per item, and the mean over items of each score's standard deviation; else None."""
    with_samples = [r for r in rows if r.get("samples")]
    if not with_samples:
        return None
    keys = list(dict.fromkeys(k for r in with_samples for k in r["samples"]["sd"]))
    return {
        "items": len(with_samples),
        "per_item": _mean([float(r["samples"]["n"]) for r in with_samples]),
        "mean_sd": {k: _mean([r["samples"]["sd"].get(k) for r in with_samples]) for k in keys},
    }
