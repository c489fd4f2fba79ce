"""Two runs compared item by item: is A better than B, and can we trust it?

:func:`compare_runs` takes two results folders (what ``sciflow score`` writes) and pairs the
items both scored, by id (averaged rows only, status in
:data:`sciflow.runs.summary.SCORED_STATUSES`; each item's value is what it gives the mean,
0 for a failure, see :func:`sciflow.runs.summary.item_value`). For every level key both runs
have (``overall``, ``graph``, ``text``, ``image``), over all paired items and per difficulty
and per research area (taken from A's row), it reports::

    {"n": 60, "mean_a": 0.81, "mean_b": 0.75, "diff": 0.061, "ci": [0.032, 0.090],
     "p": 0.0003, "significant": true}

``diff`` is the mean of the per-item differences A − B (each rounded to 12 decimals, so a
run against itself gives exactly 0), ``ci`` a paired percentile bootstrap 95% interval of it
(the items resampled 1000 times with numpy, seeded from the cell and the key), ``p`` the
two-sided Wilcoxon signed-rank p-value (``scipy.stats.wilcoxon``, zero
differences dropped; 1.0 when every difference is 0). ``significant``: ``p < alpha`` (0.05)
and the interval excludes 0.

The result: ``{"a", "b", "n_common", "only_a", "only_b", "alpha", "confidence", "resamples",
"levels": {<key>: stats}, "by_difficulty": {<d>: {<key>: stats}}, "by_area": {<area>: {<key>:
stats}}, "verdicts": [one line per level]}``. Runs against different reference sets or metric
versions (or where one did not record them) are refused with :class:`CompareError`, as
``sciflow summarize`` refuses them.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sciflow.runs.results import read_log
from sciflow.runs.summary import (
    CONFIDENCE,
    DIFFICULTIES,
    INTERVAL_KEYS,
    RESAMPLES,
    SCORED_STATUSES,
    SummaryError,
    bootstrap_seed,
    item_value,
    read_summary,
    run_differences,
)

ALPHA = 0.05


class CompareError(SummaryError):
    """Two runs that cannot be compared (one line)."""


def _p_value(diffs: np.ndarray) -> float:
    if not np.any(diffs != 0):
        return 1.0
    from scipy.stats import wilcoxon

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = float(wilcoxon(diffs).pvalue)
    return 1.0 if np.isnan(p) else p


def paired_stats(a: Sequence[float], b: Sequence[float], seed: int, alpha: float = ALPHA) -> dict[str, Any]:
    """Mean difference A − B of paired values, its paired bootstrap interval and Wilcoxon p."""
    va, vb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diffs = np.round(va - vb, 12)
    n = len(diffs)
    diff = float(round(float(diffs.mean()), 12))
    rng = np.random.default_rng(seed)
    boot = diffs[rng.integers(0, n, size=(RESAMPLES, n))].mean(axis=1)
    tail = (1.0 - CONFIDENCE) / 2 * 100
    lo, hi = (float(round(float(x), 12)) for x in np.percentile(boot, [tail, 100 - tail]))
    lo, hi = min(lo, diff), max(hi, diff)
    p = _p_value(diffs)
    return {"n": n, "mean_a": float(va.mean()), "mean_b": float(vb.mean()), "diff": diff, "ci": [lo, hi],
            "p": p, "significant": bool(p < alpha and (lo > 0 or hi < 0))}


def _cell(pairs: list[tuple[dict, dict]], keys: Sequence[str], cell: str) -> dict[str, Any]:
    out = {}
    for k in keys:
        vals = [(item_value(ra, k), item_value(rb, k)) for ra, rb in pairs]
        vals = [(x, y) for x, y in vals if x is not None and y is not None]
        if vals:
            out[k] = paired_stats([x for x, _ in vals], [y for _, y in vals],
                                  bootstrap_seed("compare", cell, k))
    return out


def _fmt_p(p: float) -> str:
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"


def verdict(key: str, st: dict[str, Any], a: str, b: str) -> str:
    """One line, e.g. ``gen-a beats gen-b on graph by 0.061 [0.032, 0.090], p = 0.0003, n = 60``."""
    lo, hi = st["ci"]
    tail = f"p = {_fmt_p(st['p'])}, n = {st['n']}"
    if st["significant"]:
        if st["diff"] > 0:
            return f"{a} beats {b} on {key} by {st['diff']:.3f} [{lo:.3f}, {hi:.3f}], {tail}"
        return f"{b} beats {a} on {key} by {-st['diff']:.3f} [{-hi:.3f}, {-lo:.3f}], {tail}"
    return f"no significant difference on {key} ({a} − {b} = {st['diff']:.3f} [{lo:.3f}, {hi:.3f}], {tail})"


def compare_rows(rows_a: Sequence[dict[str, Any]], rows_b: Sequence[dict[str, Any]],
                 a: str = "A", b: str = "B") -> dict[str, Any]:
    """:func:`compare_runs` on rows already read (no reference-set or metric-version check)."""
    ra = {r["id"]: r for r in rows_a if r.get("status") in SCORED_STATUSES}
    rb = {r["id"]: r for r in rows_b if r.get("status") in SCORED_STATUSES}
    common = sorted(set(ra) & set(rb))
    if not common:
        raise CompareError(f"{a} and {b} have no scored item in common")

    def present(rows: dict[str, dict]) -> set[str]:
        keys = {k for r in rows.values() for k in (r.get("scores") or {})}
        return keys | ({"image", "overall"} if keys & {"image", "overall"} else set())

    keys = [k for k in INTERVAL_KEYS if k in present(ra) & present(rb)]
    pairs = [(ra[i], rb[i]) for i in common]

    def meta(r: dict) -> dict:
        return r.get("meta") or {}

    levels = _cell(pairs, keys, "all")
    by_diff = {d: _cell([p for p in pairs if meta(p[0]).get("difficulty") == d], keys, f"difficulty:{d}")
               for d in DIFFICULTIES if any(meta(p[0]).get("difficulty") == d for p in pairs)}
    areas = sorted({meta(p[0])["area"] for p in pairs if meta(p[0]).get("area")})
    by_area = {ar: _cell([p for p in pairs if meta(p[0]).get("area") == ar], keys, f"area:{ar}")
               for ar in areas}
    return {
        "a": a, "b": b, "n_common": len(common),
        "only_a": sorted(set(ra) - set(rb)), "only_b": sorted(set(rb) - set(ra)),
        "alpha": ALPHA, "confidence": CONFIDENCE, "resamples": RESAMPLES,
        "levels": levels, "by_difficulty": by_diff, "by_area": by_area,
        "verdicts": [verdict(k, st, a, b) for k, st in levels.items()],
    }


def compare_runs(a: str | Path, b: str | Path) -> dict[str, Any]:
    """Compare two results folders (see the module docstring for the result). Raises
    :class:`CompareError` (a :class:`~sciflow.runs.summary.SummaryError`) when they differ in
    reference set or metric version, or share no scored item."""
    sa, sb = read_summary(a), read_summary(b)
    blocking = [d for d in run_differences([sa, sb]) if d.blocking]
    if blocking:
        raise CompareError("not comparable: " + " | ".join(d.describe() for d in blocking))
    from sciflow.runs.samples import merge_samples  # one row per item, as the summaries have

    return compare_rows(merge_samples(read_log(Path(a) / "results.jsonl")),
                        merge_samples(read_log(Path(b) / "results.jsonl")), str(sa["run"]), str(sb["run"]))
