"""Parse reliability in results rows and summaries.

A row of a parsed image prediction carries ``parse_reliability`` and ``reliability_signals``
(from the parsed graph's ``meta``, written by :mod:`sciflow.agents.reliability`) and
``low_reliability``: true when ``parse_reliability < [trust] min_reliability_flag``. A row
without a parse (a graph prediction, a missing or failed one) has both fields null and is never
flagged.

Summaries (:func:`sciflow.runs.summary.summarize_rows`) report under ``summary["reliability"]``
the flag threshold, how many rows were parsed and flagged, the share flagged, and the means
over every averaged row and over the unflagged ones only. With ``min_reliability = X``
(``--min-reliability X`` on ``sciflow score`` / ``summarize``) rows whose reliability is below
``X`` are dropped from every mean (:func:`below`), and the summary (and a score run's manifest)
records ``min_reliability`` and how many rows were dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sciflow.format.graph import DiagramGraph


def reliability_fields(parsed: DiagramGraph, flag_below: float) -> dict[str, Any]:
    """The three row fields of a parsed prediction (the module docstring)."""
    meta: Mapping[str, Any] = parsed.meta or {}
    r = meta.get("parse_reliability")
    signals = meta.get("reliability_signals")
    if not isinstance(r, (int, float)) or isinstance(r, bool):
        return {"parse_reliability": None, "reliability_signals": None, "low_reliability": False}
    return {
        "parse_reliability": float(r),
        "reliability_signals": dict(signals) if isinstance(signals, Mapping) else None,
        "low_reliability": float(r) < flag_below,
        "reliability_threshold": flag_below,
    }


def reliability_of(row: Mapping[str, Any]) -> float | None:
    r = row.get("parse_reliability")
    return float(r) if isinstance(r, (int, float)) and not isinstance(r, bool) else None


def below(row: Mapping[str, Any], min_reliability: float | None) -> bool:
    """True when ``min_reliability`` is set and the row's reliability is a number below it."""
    r = reliability_of(row)
    return min_reliability is not None and r is not None and r < min_reliability


def flag_counts(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``threshold`` (the pinned one the rows were flagged with, None when none was parsed),
    ``n_parsed``, ``n_flagged``, ``share_flagged`` (None without parsed rows) and ``mean_reliability``."""
    parsed = [r for r in rows if reliability_of(r) is not None]
    flagged = [r for r in parsed if r.get("low_reliability")]
    thresholds = sorted({float(r["reliability_threshold"]) for r in parsed
                         if r.get("reliability_threshold") is not None})
    return {
        "threshold": thresholds[0] if len(thresholds) == 1 else (thresholds or None),
        "n_parsed": len(parsed),
        "n_flagged": len(flagged),
        "share_flagged": len(flagged) / len(parsed) if parsed else None,
        "mean_reliability": sum(reliability_of(r) or 0.0 for r in parsed) / len(parsed) if parsed else None,
        "flagged": sorted(str(r.get("id")) for r in flagged),
    }


def reliability_line(summary: Mapping[str, Any]) -> str | None:
    """One line for the terminal: how many parsed items were flagged and the graph mean with and
    without them, or None when the run parsed nothing."""
    rel = summary.get("reliability") or {}
    if not rel.get("n_parsed"):
        return None
    with_, without = rel.get("means_with_flagged") or {}, rel.get("means_without_flagged") or {}

    def show(v: Any) -> str:
        return "n/a" if v is None else f"{v:.3f}"

    line = (f"low parse reliability: {rel['n_flagged']} of {rel['n_parsed']} parsed items below "
            f"{rel.get('threshold')} ({100 * (rel.get('share_flagged') or 0):.0f}%); graph mean "
            f"{show(with_.get('graph'))} with them, {show(without.get('graph'))} without")
    if summary.get("min_reliability") is not None:
        line += (f"; --min-reliability {summary['min_reliability']:g} left "
                 f"{summary.get('n_dropped_low_reliability', 0)} items out of the means")
    return line
