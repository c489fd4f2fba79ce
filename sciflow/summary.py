"""Aggregation of results rows into summaries and leaderboards (pure functions, plus the
CSV writer and the reader of results folders)."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciflow.runs.results import read_log

DIFFICULTIES = ("easy", "medium", "hard")
SCORED_STATUSES = ("ok", "missing_prediction", "prediction_error")
MEAN_KEYS = (
    "overall", "graph", "text", "image",
    "node_f1", "edge_f1", "node_precision", "node_recall", "edge_precision", "edge_recall",
)


class SummaryError(ValueError):
    """A results folder that cannot be summarized."""


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _means(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    for k in keys:
        vals = [r["scores"][k] for r in rows if r.get("scores") and r["scores"].get(k) is not None]
        out[k] = _mean(vals)
    return out


def summarize_rows(
    rows: Sequence[dict[str, Any]],
    run: str,
    config_hash: str,
    unreferenced: Sequence[str] = (),
    fallbacks: Sequence[str] = (),
) -> dict[str, Any]:
    """Means over scored items (a missing or unreadable prediction counts as 0), overall,
    by difficulty and by research area, with the items behind each cell counted.

    Items whose reference is unusable are counted and listed but excluded from the means.
    """
    scored = [r for r in rows if r["status"] in SCORED_STATUSES]
    keys = [k for k in MEAN_KEYS if any(r.get("scores") and k in r["scores"] for r in scored)]
    # later metric levels' parts aggregate the same way
    extra = sorted({k for r in scored if r.get("scores") for k in r["scores"]} - set(keys))
    keys += extra
    by_diff = {
        d: _means([r for r in scored if r["meta"].get("difficulty") == d], keys)
        for d in DIFFICULTIES
        if any(r["meta"].get("difficulty") == d for r in scored)
    }
    areas = sorted({r["meta"]["area"] for r in scored if r["meta"].get("area")})
    by_area = {a: _means([r for r in scored if r["meta"].get("area") == a], keys) for a in areas}
    return {
        "run": run,
        "config_hash": config_hash,
        "fallbacks": list(fallbacks),
        "n_items": len(rows),
        "n_scored": sum(r["status"] == "ok" for r in rows),
        "n_missing": sum(r["status"] == "missing_prediction" for r in rows),
        "n_prediction_errors": sum(r["status"] == "prediction_error" for r in rows),
        "n_reference_errors": sum(r["status"] == "reference_error" for r in rows),
        "means": _means(scored, keys),
        "by_difficulty": by_diff,
        "by_area": by_area,
        "missing": [r["id"] for r in rows if r["status"] == "missing_prediction"],
        "errors": [
            {"id": r["id"], "status": r["status"], "error": r["error"]}
            for r in rows
            if r["status"] in ("prediction_error", "reference_error")
        ],
        "unreferenced_predictions": list(unreferenced),
    }


def leaderboard_rows(summaries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat row per run: counts, mean scores, and the graph score per difficulty."""
    out = []
    for s in summaries:
        row: dict[str, Any] = {
            "run": s["run"],
            "n_items": s["n_items"],
            "n_missing": s["n_missing"],
            "n_errors": s["n_prediction_errors"] + s["n_reference_errors"],
        }
        for k, v in s["means"].items():
            if k != "n":
                row[k] = v
        for d in DIFFICULTIES:
            cell = s["by_difficulty"].get(d)
            row[f"graph_{d}"] = cell["graph"] if cell else None
            row[f"n_{d}"] = cell["n"] if cell else 0
        row["fallbacks"] = ";".join(s.get("fallbacks", []))
        row["config_hash"] = s["config_hash"][:12]
        out.append(row)
    return out


def write_leaderboard(summaries: Sequence[dict[str, Any]], path: Path) -> list[dict[str, Any]]:
    rows = leaderboard_rows(summaries)
    fields: list[str] = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else (f"{v:.6f}" if isinstance(v, float) else v)) for k, v in r.items()})
    return rows


def read_summary(results_dir: str | Path) -> dict[str, Any]:
    """Rebuild a run's summary from its ``results.jsonl`` (and ``manifest.json``)."""
    d = Path(results_dir)
    results = d / "results.jsonl"
    if not results.is_file():
        raise SummaryError(f"{d}: no results.jsonl (is this a sciflow results folder?)")
    rows = read_log(results)
    manifest: dict[str, Any] = {}
    if (d / "manifest.json").is_file():
        manifest = json.loads((d / "manifest.json").read_text("utf-8"))
    old: dict[str, Any] = {}
    if (d / "summary.json").is_file():
        old = json.loads((d / "summary.json").read_text("utf-8"))
    return summarize_rows(
        rows,
        run=old.get("run", d.name),
        config_hash=manifest.get("config_hash", old.get("config_hash", "")),
        unreferenced=old.get("unreferenced_predictions", []),
        fallbacks=manifest.get("fallbacks", old.get("fallbacks", [])),
    )
