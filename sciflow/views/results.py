"""Results folders as the views read them: the rows of ``results.jsonl``, the paths they name,
and the prediction and reference graphs of one row."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph

__all__ = ["item_graphs", "load_results", "resolve_path"]


def load_results(results_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of a results folder's ``results.jsonl``, one per item (the samples of an item
    merged, :func:`sciflow.runs.samples.merge_samples`)."""
    from sciflow.runs.samples import merge_samples

    path = Path(results_dir) / "results.jsonl"
    with path.open(encoding="utf-8") as f:
        return merge_samples([json.loads(line) for line in f if line.strip()])


def resolve_path(results_dir: str | Path, path: str | Path | None) -> Path | None:
    """A path stored in a results row, as an existing file: absolute; relative to the current
    folder (where ``sciflow score`` ran); relative to the results folder or one of its parents.
    ``None`` when it cannot be found."""
    if not path:
        return None
    p = Path(path)
    if p.is_absolute():
        return p if p.exists() else None
    if p.exists():
        return p.resolve()
    base = Path(results_dir).resolve()
    for d in (base, *base.parents):
        if (d / p).exists():
            return d / p
    return None


def _is_graph_file(p: Path | None) -> bool:
    return p is not None and p.suffix.lower() == ".json"


def item_graphs(results_dir: str | Path, row: Mapping[str, Any]) -> tuple[DiagramGraph | None, DiagramGraph | None]:
    """``(prediction graph, reference graph)`` of a results row, each ``None`` when missing or
    unreadable. For an image prediction the graph is the row's ``parsed_graph`` (a path
    relative to the results folder)."""

    def load(p: Path | None) -> DiagramGraph | None:
        if p is None:
            return None
        try:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return load_graph(p)
        except (GraphFormatError, OSError, ValueError):
            return None

    ref = load(resolve_path(results_dir, row.get("reference")))
    pred_path = resolve_path(results_dir, row.get("prediction"))
    if _is_graph_file(pred_path):
        pred = load(pred_path)
    else:
        pg = row.get("parsed_graph")
        pred = load(resolve_path(results_dir, pg)) if pg else None
    return pred, ref
