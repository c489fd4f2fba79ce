"""The report's data: the results folders it shows, read once (rows, manifest, summary), and
the choices made from them (the main metric, each run's own configuration)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciflow.views.report.verdicts import load_claims_results
from sciflow.views.results import load_results

log = logging.getLogger("sciflow.views.report.html")  # the name it logged under before the split

__all__ = ["DIFFICULTIES", "Run", "config_for", "load_run", "main_metric", "read_json"]

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass
class Run:
    name: str
    path: Path
    rows: list[dict[str, Any]]
    manifest: dict[str, Any]
    summary: dict[str, Any]
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: item id -> claims result (``<path>/claims/<id>.json``, :mod:`sciflow.views.report.verdicts`)
    claims: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def fallbacks(self) -> list[str]:
        return list(self.manifest.get("fallbacks") or self.summary.get("fallbacks") or [])


# ------------------------------------------------------------------ loading
def read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        log.warning("%s: unreadable (%s); ignored", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def load_run(path: Path) -> Run:
    from sciflow.runs.summary import read_summary

    if not (path / "results.jsonl").is_file():
        raise FileNotFoundError(f"{path}: no results.jsonl (is this a sciflow results folder?)")
    rows = load_results(path)
    manifest = read_json(path / "manifest.json")
    summary = read_summary(path)
    run = Run(summary.get("run") or path.name, path, rows, manifest, summary)
    run.by_id = {r["id"]: r for r in rows}
    run.claims = load_claims_results(path)
    return run


def main_metric(runs: Sequence[Run]) -> str:
    if runs and all(r.summary.get("means", {}).get("overall") is not None for r in runs):
        return "overall"
    return "graph"


def config_for(run: Run) -> Any:
    from sciflow.config import ConfigError, load_config

    overrides = run.manifest.get("config")
    try:
        return load_config(overrides=overrides if isinstance(overrides, Mapping) else None)
    except (ConfigError, KeyError, TypeError, ValueError) as exc:
        log.warning("%s: manifest config not usable (%s); using the pinned defaults", run.path, exc)
        return load_config()
