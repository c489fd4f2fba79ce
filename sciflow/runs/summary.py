"""Aggregation of results rows into summaries and leaderboards (pure functions, plus the
CSV writer and the reader of results folders).

Definition of the means (``summary["means"]``, and every cell of ``by_difficulty`` and
``by_area``):

- The *averaged rows* are the rows whose ``status`` is ``ok``, ``missing_prediction`` or
  ``prediction_error`` (:data:`SCORED_STATUSES`). Rows with ``reference_error`` never enter a
  mean (there is nothing to score against); they are counted in ``n_reference_errors`` and
  listed in ``errors``.
- The *score keys* of a run (``summary["score_keys"]``) are decided once for the whole run:
  every key that appears in the ``scores`` of any averaged row, headline keys first in the
  order of :data:`MEAN_KEYS`, then the others sorted; ``image`` and ``overall`` come together
  (an image run has both, even when judge failures left every row without ``overall``).
- Every averaged row enters the mean of every score key, with **0 where its value is absent
  or None**: a failure counts 0 in every mean it would have entered. This covers a crashed
  worker's row (``scores: null``), a ``.json`` prediction in an image run (no image level, no
  overall), a judge failure (text level not scored, so no text and no overall).
- The one exception is an image-level term (:data:`IMAGE_TERMS`) that ``image_level``
  reported unavailable (None) in a row whose ``image`` score is a number: such a row is a
  *partial* image score, not a failure (its weights were renormalised over the terms it
  has), so it is left out of that term's mean only, and still enters every other mean.
- Each cell is ``{"n": N, <key>: mean, ..., "n_unavailable": {<term>: k}}``: ``N`` is the
  number of averaged rows in the cell, and every key's mean is taken over exactly those
  ``N`` rows, except a term named in ``n_unavailable``, whose mean is over ``N - k`` rows
  (``n_unavailable`` is empty when no row was partial). A mean is None only when it is over
  0 rows. ``summary["means"]["n"]`` is ``n_scored + n_missing + n_prediction_errors``
  (``n_scored`` counts the ``ok`` rows only).

A summary also records the run's ``metric_version`` (:data:`sciflow.metrics.METRIC_VERSION`
when it was scored) and ``references``, the fingerprint of its reference set
(``{"dir", "n", "sha256"}``, :func:`sciflow.runs.scoring.reference_fingerprint`); either is None for
a run from before they were recorded. :func:`run_differences` says where runs put side by
side differ in them, in config hash or in fallbacks.

Intervals (``summary["intervals"]``, a structure parallel to the means, so the cells
themselves keep their shape): ``{"confidence": 0.95, "resamples": 1000, "method":
"percentile bootstrap over items", "means": {<key>: [lo, hi]}, "by_difficulty": {<d>:
{<key>: [lo, hi]}}, "by_area": {<area>: {<key>: [lo, hi]}}}``. Each ``[lo, hi]`` is a 95%
percentile bootstrap interval of that cell's mean: the very values the mean is over (0 for a
failure, a partial row left out of its term) resampled with replacement 1000 times with
numpy, ``lo``/``hi`` the 2.5th/97.5th percentiles of the resampled means, widened to the
mean itself in the rare case it falls outside (so an interval always covers its mean). The
generator is seeded from a SHA-256 of the cell and the key (:func:`bootstrap_seed`; not of
the run name, so the same rows give the same summary under any name), so a rerun gives
bit-identical intervals. A key whose mean is None
has the interval None; one row gives ``[mean, mean]``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sciflow.runs.files import write_atomic
from sciflow.runs.results import read_log
from sciflow.runs.trust import below, flag_counts

DIFFICULTIES = ("easy", "medium", "hard")
SCORED_STATUSES = ("ok", "missing_prediction", "prediction_error")
MEAN_KEYS = (
    "overall", "graph", "text", "image",
    "node_f1", "edge_f1", "node_precision", "node_recall", "edge_precision", "edge_recall",
)
#: terms of the image level that may be unavailable (None) in a partial, still valid image score
IMAGE_TERMS = ("semantic_consistency", "perceptual_similarity", "visual_flow")
#: the level keys that get ``_lo``/``_hi`` columns in the leaderboard
INTERVAL_KEYS = ("overall", "graph", "text", "image")
CONFIDENCE = 0.95
RESAMPLES = 1000
#: the marker appended to a leaderboard value that differs from the first run's
DIFFERS = "*"
#: the leaderboard value of a provenance field a run did not record
UNKNOWN = "?"


class SummaryError(ValueError):
    """A results folder that cannot be summarized."""


def score_keys(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The score keys of a run: every key in the ``scores`` of any averaged row (status in
    :data:`SCORED_STATUSES`), plus ``overall`` when ``image`` is one and ``image`` when
    ``overall`` is one (an image run has both even when no row got an overall score); those of
    :data:`MEAN_KEYS` first in that order, the rest sorted."""
    present = {k for r in rows if r.get("status") in SCORED_STATUSES and r.get("scores") for k in r["scores"]}
    if present & {"image", "overall"}:
        present |= {"image", "overall"}
    return [k for k in MEAN_KEYS if k in present] + sorted(present - set(MEAN_KEYS))


def _unavailable_term(row: dict[str, Any], key: str) -> bool:
    """True when ``key`` is an image-level term left out of a partial image score (a number)."""
    scores = row.get("scores") or {}
    return key in IMAGE_TERMS and key in scores and scores[key] is None and scores.get("image") is not None


def item_value(row: dict[str, Any], key: str) -> float | None:
    """The value an averaged row gives the mean of ``key``: the score, 0 where it is absent or
    None, None where the row is left out of that mean (a partial image score's missing term)."""
    if _unavailable_term(row, key):
        return None
    v = (row.get("scores") or {}).get(key)
    return 0.0 if v is None else float(v)


def _values(rows: Sequence[dict[str, Any]], key: str) -> list[float]:
    return [v for v in (item_value(r, key) for r in rows) if v is not None]


def _means(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """One cell: ``n``, the mean of every key (0 for an absent or None value, see the module
    docstring) and ``n_unavailable``."""
    out: dict[str, Any] = {"n": len(rows)}
    unavailable: dict[str, int] = {}
    for k in keys:
        vals = _values(rows, k)
        if len(vals) < len(rows):
            unavailable[k] = len(rows) - len(vals)
        out[k] = sum(vals) / len(vals) if vals else None
    out["n_unavailable"] = unavailable
    return out


def bootstrap_seed(*parts: Any) -> int:
    """A fixed seed from the given parts (cell, key): the first 8 bytes of their SHA-256."""
    digest = hashlib.sha256("\0".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def bootstrap_interval(values: Sequence[float], seed: int, resamples: int = RESAMPLES,
                       confidence: float = CONFIDENCE) -> list[float] | None:
    """The percentile bootstrap interval ``[lo, hi]`` of the mean of ``values`` (None when there
    are none), widened to cover the mean itself; deterministic for a given seed."""
    if not len(values):
        return None
    vals = np.asarray(values, dtype=float)
    mean = float(sum(values) / len(values))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(vals), size=(resamples, len(vals)))
    boot = vals[idx].mean(axis=1)
    tail = (1.0 - confidence) / 2 * 100
    lo, hi = (float(x) for x in np.percentile(boot, [tail, 100 - tail]))
    return [min(lo, mean), max(hi, mean)]


def _intervals(rows: Sequence[dict[str, Any]], keys: Sequence[str], cell: str) -> dict[str, Any]:
    return {k: bootstrap_interval(_values(rows, k), bootstrap_seed(cell, k)) for k in keys}


def summarize_rows(
    rows: Sequence[dict[str, Any]],
    run: str,
    config_hash: str,
    unreferenced: Sequence[str] = (),
    fallbacks: Sequence[str] = (),
    metric_version: int | None = None,
    references: dict[str, Any] | None = None,
    min_reliability: float | None = None,
) -> dict[str, Any]:
    """Means over the averaged rows, overall, by difficulty and by research area, each cell
    with the number of rows it averaged (definitions in the module docstring).

    ``metric_version`` and ``references`` (the reference-set fingerprint) are recorded as
    given; None means unknown (a run from before they were recorded). ``min_reliability``:
    rows whose ``parse_reliability`` is below it are left out of every mean
    (:mod:`sciflow.runs.trust`); ``summary["reliability"]`` holds the flag counts and the means
    with and without the flagged rows.
    """
    all_scored = [r for r in rows if r["status"] in SCORED_STATUSES]
    keys = score_keys(all_scored)
    scored = [r for r in all_scored if not below(r, min_reliability)]

    def meta(r: dict[str, Any]) -> dict[str, Any]:
        return r.get("meta") or {}

    by_diff = {
        d: _means([r for r in scored if meta(r).get("difficulty") == d], keys)
        for d in DIFFICULTIES
        if any(meta(r).get("difficulty") == d for r in scored)
    }
    areas = sorted({meta(r)["area"] for r in scored if meta(r).get("area")})
    by_area = {a: _means([r for r in scored if meta(r).get("area") == a], keys) for a in areas}
    intervals = {
        "confidence": CONFIDENCE, "resamples": RESAMPLES, "method": "percentile bootstrap over items",
        "means": _intervals(scored, keys, "means"),
        "by_difficulty": {d: _intervals([r for r in scored if meta(r).get("difficulty") == d], keys,
                                        f"difficulty:{d}") for d in by_diff},
        "by_area": {a: _intervals([r for r in scored if meta(r).get("area") == a], keys, f"area:{a}")
                    for a in areas},
    }
    return {
        "run": run,
        "config_hash": config_hash,
        "metric_version": metric_version,
        "references": references,
        "fallbacks": list(fallbacks),
        "n_items": len(rows),
        "n_scored": sum(r["status"] == "ok" for r in rows),
        "n_missing": sum(r["status"] == "missing_prediction" for r in rows),
        "n_prediction_errors": sum(r["status"] == "prediction_error" for r in rows),
        "n_reference_errors": sum(r["status"] == "reference_error" for r in rows),
        "score_keys": keys,
        "means": _means(scored, keys),
        "by_difficulty": by_diff,
        "by_area": by_area,
        "intervals": intervals,
        "missing": [r["id"] for r in rows if r["status"] == "missing_prediction"],
        "errors": [
            {"id": r["id"], "status": r["status"], "error": r.get("error")}
            for r in rows
            if r["status"] in ("prediction_error", "reference_error")
        ],
        "unreferenced_predictions": list(unreferenced),
        "min_reliability": min_reliability,
        "n_dropped_low_reliability": len(all_scored) - len(scored),
        "reliability": _reliability_block(all_scored, keys),
    }


def _reliability_block(scored: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """Flag counts and the means (with intervals) over every averaged row and over the rows
    not flagged ``low_reliability`` (:mod:`sciflow.runs.trust`)."""
    clean = [r for r in scored if not r.get("low_reliability")]
    return {
        **flag_counts(scored),
        "means_with_flagged": _means(scored, keys),
        "means_without_flagged": _means(clean, keys),
        "intervals_with_flagged": _intervals(scored, keys, "reliability:with"),
        "intervals_without_flagged": _intervals(clean, keys, "reliability:without"),
    }


# ------------------------------------------------------------------ comparing runs
def _references_value(s: dict[str, Any]) -> str | None:
    ref = s.get("references")
    if not isinstance(ref, dict) or not ref.get("sha256"):
        return None
    return f"{ref['sha256'][:12]} ({ref.get('n', '?')} references)"


def _metric_value(s: dict[str, Any]) -> str | None:
    v = s.get("metric_version")
    return None if v is None else str(v)


def _config_value(s: dict[str, Any]) -> str | None:
    return str(s.get("config_hash") or "")[:12] or None


def _fallbacks_value(s: dict[str, Any]) -> str | None:
    return ";".join(s.get("fallbacks") or []) or "none"


@dataclass(frozen=True)
class Aspect:
    """Something runs in one table should share: its name, how to read it off a summary (None
    when the run did not record it), and whether a difference forbids one table."""

    name: str
    label: str
    value: Callable[[dict[str, Any]], str | None]
    blocking: bool
    verb: str = "differs"  # "<label> differs"


ASPECTS = (
    Aspect("references", "reference set", _references_value, True),
    Aspect("metric_version", "metric version", _metric_value, True),
    Aspect("config", "config hash", _config_value, False),
    Aspect("fallbacks", "fallbacks", _fallbacks_value, False, verb="differ"),
)
_ASPECTS = {a.name: a for a in ASPECTS}


@dataclass(frozen=True)
class Difference:
    """Runs that differ in one :class:`Aspect`: each distinct value (``None``: not recorded)
    with the runs that have it, in the order the runs were given."""

    aspect: Aspect
    groups: tuple[tuple[str | None, tuple[str, ...]], ...]

    @property
    def blocking(self) -> bool:
        return self.aspect.blocking

    def describe(self) -> str:
        """One line, e.g. ``reference set differs: a, b: 1f2e3d4c5b6a (5 references); c: unknown``."""
        parts = [f"{', '.join(runs)}: {'unknown' if v is None else v}" for v, runs in self.groups]
        return f"{self.aspect.label} {self.aspect.verb}: " + "; ".join(parts)


def run_differences(summaries: Sequence[dict[str, Any]]) -> list[Difference]:
    """The aspects (:data:`ASPECTS`) in which the runs differ; a run that did not record an
    aspect has the value "unknown", which differs from every recorded value."""
    out = []
    for aspect in ASPECTS:
        groups: dict[str | None, list[str]] = {}
        for s in summaries:
            groups.setdefault(aspect.value(s), []).append(str(s.get("run")))
        if len(groups) > 1:
            out.append(Difference(aspect, tuple((v, tuple(runs)) for v, runs in groups.items())))
    return out


def unrecorded(summary: dict[str, Any]) -> list[str]:
    """Labels of the blocking aspects a run did not record (a run from before they were)."""
    return [a.label for a in ASPECTS if a.blocking and a.value(summary) is None]


# ------------------------------------------------------------------ leaderboard
def _marked(shown: str | None, aspect: str, s: dict[str, Any], first: dict[str, Any], empty: str = "") -> str:
    """``shown`` ("?" when None), with :data:`DIFFERS` appended when ``s`` differs from ``first``
    in ``aspect`` (an empty value then reads ``empty``)."""
    a = _ASPECTS[aspect]
    text = UNKNOWN if shown is None else shown
    if s is first or a.value(s) == a.value(first):
        return text
    return (text or empty) + DIFFERS


def leaderboard_rows(summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per run.

    Columns: ``run``; ``n_items`` (every item, reference errors included), ``n_missing``,
    ``n_errors`` (prediction and reference errors); ``n_averaged``, the rows every mean is
    over (``means["n"]``); one column per score key with its mean, and ``<key>_lo``/``<key>_hi``
(its 95% bootstrap interval, see the module docstring) after each of :data:`INTERVAL_KEYS`
the run has (empty for a summary without intervals); ``n_<term>`` for an
    image-level term averaged over fewer rows (partial image scores); ``graph_<difficulty>``
    and ``n_<difficulty>`` (that cell's graph mean and row count); then provenance:
    ``fallbacks`` (``;``-joined, "" for none), ``config`` (the config hash's first 12 hex
    digits), ``refs`` (the reference-set fingerprint's first 12 hex digits) and
    ``metric_version``, "?" when a run did not record one. A provenance value that differs
    from the first run's ends in ``*`` (a run without fallbacks then reads ``none*``). Last,
    ``share_low_reliability`` and ``graph_without_low_reliability`` (empty for a run that parsed
    nothing) and ``min_reliability`` (``--min-reliability``, empty when not given;
    :mod:`sciflow.runs.trust`).
    """
    out = []
    first = summaries[0] if summaries else {}
    for s in summaries:
        means = s["means"]
        row: dict[str, Any] = {
            "run": s["run"],
            "n_items": s["n_items"],
            "n_missing": s["n_missing"],
            "n_errors": s["n_prediction_errors"] + s["n_reference_errors"],
            "n_averaged": means.get("n", 0),
        }
        cis = (s.get("intervals") or {}).get("means") or {}
        for k, v in means.items():
            if k not in ("n", "n_unavailable"):
                row[k] = v
                if k in INTERVAL_KEYS:
                    ci = cis.get(k)
                    row[f"{k}_lo"], row[f"{k}_hi"] = (ci[0], ci[1]) if ci else (None, None)
        for k, missing in sorted((means.get("n_unavailable") or {}).items()):
            row[f"n_{k}"] = means.get("n", 0) - missing
        for d in DIFFICULTIES:
            cell = s["by_difficulty"].get(d)
            row[f"graph_{d}"] = cell.get("graph") if cell else None
            row[f"n_{d}"] = cell["n"] if cell else 0

        fb = ";".join(s.get("fallbacks") or [])
        row["fallbacks"] = _marked(fb, "fallbacks", s, first, empty="none")
        row["config"] = _marked(_config_value(s), "config", s, first)
        row["refs"] = _marked(_references_value(s) and s["references"]["sha256"][:12], "references", s, first)
        row["metric_version"] = _marked(_metric_value(s), "metric_version", s, first)
        rel = s.get("reliability") or {}
        row["share_low_reliability"] = rel.get("share_flagged")
        row["graph_without_low_reliability"] = (rel.get("means_without_flagged") or {}).get("graph")
        row["min_reliability"] = s.get("min_reliability")
        out.append(row)
    return out


def write_leaderboard(summaries: Sequence[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    """Write :func:`leaderboard_rows` as CSV (floats with 6 decimals, None as ""), atomically
    (:func:`sciflow.runs.files.write_atomic`; a full disk raises its one-line
    :class:`~sciflow.runs.files.OutputError`); returns the rows."""
    rows = leaderboard_rows(summaries)
    fields: list[str] = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if v is None else (f"{v:.6f}" if isinstance(v, float) else v)) for k, v in r.items()})
    write_atomic(Path(path), buf.getvalue())
    return rows


def read_summary(results_dir: str | Path, min_reliability: float | None = None) -> dict[str, Any]:
    """Rebuild a run's summary from its ``results.jsonl`` (and ``manifest.json``).

    The config hash, fallbacks, metric version and reference fingerprint come from the
    manifest, else from an existing ``summary.json``; None when neither records them.
    ``min_reliability`` drops rows below it from the means (:func:`summarize_rows`).
    """
    d = Path(results_dir)
    results = d / "results.jsonl"
    if not results.is_file():
        raise SummaryError(f"{d}: no results.jsonl (is this a sciflow results folder?)")
    from sciflow.runs.samples import merge_samples, samples_summary

    rows = merge_samples(read_log(results))  # one row per item when the run had several samples per prompt
    manifest: dict[str, Any] = {}
    if (d / "manifest.json").is_file():
        manifest = json.loads((d / "manifest.json").read_text("utf-8"))
    old: dict[str, Any] = {}
    if (d / "summary.json").is_file():
        old = json.loads((d / "summary.json").read_text("utf-8"))
    summary = summarize_rows(
        rows,
        run=old.get("run", d.name),
        config_hash=manifest.get("config_hash", old.get("config_hash", "")),
        unreferenced=old.get("unreferenced_predictions", []),
        fallbacks=manifest.get("fallbacks", old.get("fallbacks", [])),
        metric_version=manifest.get("metric_version", old.get("metric_version")),
        references=manifest.get("references", old.get("references")),
        min_reliability=min_reliability,
    )
    if (spread := samples_summary(rows)) is not None:
        summary["samples"] = spread
    return summary
