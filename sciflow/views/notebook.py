"""Notebook helpers: graphs and diffs for inline display, and the diagnostics of one item as a
table (``kind``, ``item``, ``detail``).

>>> rows = diagnostics_table({"missing_nodes": [{"id": "n2", "label": "Head"}]})
>>> [(r["kind"], r["item"]) for r in rows]
[('missing node', 'Head')]
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape as html_escape
from typing import TYPE_CHECKING, Any

import graphviz

from sciflow.bench.drawing import to_dot
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.graph_level import GraphLevelResult
from sciflow.views.diff import compare, diff_dot, graph_diagnostics, pred_labels

if TYPE_CHECKING:  # pragma: no cover
    from sciflow.config import MatchingConfig

__all__ = ["DiagnosticsTable", "diagnostics_rows", "diagnostics_table", "show_diff", "show_graph"]


def show_graph(graph: DiagramGraph, *, rankdir: str | None = None) -> graphviz.Digraph:
    """The graph for inline display in Jupyter (a ``graphviz.Digraph``)."""
    return to_dot(graph, rankdir=rankdir)


def show_diff(
    pred: DiagramGraph | None,
    ref: DiagramGraph,
    result: GraphLevelResult | Mapping[str, Any] | None = None,
    *,
    matching: MatchingConfig | None = None,
) -> graphviz.Digraph:
    """The diff rendering for inline display; ``result`` is computed when not given."""
    if result is None:
        if pred is None:
            raise ValueError("show_diff needs a predicted graph or a result")
        result = compare(pred, ref, matching)
    return diff_dot(pred, ref, result)


class DiagnosticsTable(list):
    """A list of dicts (one per diagnostic) that shows itself as an HTML table in Jupyter."""

    columns = ("kind", "item", "detail")

    def to_html(self) -> str:
        head = "".join(f"<th>{c}</th>" for c in self.columns)
        body = "".join(
            f'<tr class="d-{html_escape(str(r["kind"]).replace(" ", "-"))}">'
            + "".join(f"<td>{html_escape(str(r.get(c, '')))}</td>" for c in self.columns)
            + "</tr>"
            for r in self
        )
        return f'<table class="diagnostics"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'

    def _repr_html_(self) -> str:
        return self.to_html()


def _edge_text(e: Mapping[str, Any]) -> str:
    return f"{e.get('source_label', e.get('source'))} → {e.get('target_label', e.get('target'))}"


def diagnostics_rows(
    diag: Mapping[str, Any], *, pred: DiagramGraph | None = None, matched: bool = True
) -> DiagnosticsTable:
    """The rows of :func:`diagnostics_table` as a :class:`DiagnosticsTable` (no pandas)."""
    rows = DiagnosticsTable()
    labels = pred_labels(diag, pred)
    if matched:
        for p in diag.get("matched_nodes", []):
            same = p["pred_label"] == p["ref_label"]
            rows.append({"kind": "matched node", "item": p["ref_label"],
                         "detail": ("" if same else f"drawn as {p['pred_label']!r}; ")
                         + f"similarity {p['similarity']:.3f}"})
    for m in diag.get("missing_nodes", []):
        rows.append({"kind": "missing node", "item": m["label"], "detail": "in the reference, not in the diagram"})
    for pid in diag.get("hallucinated_nodes", []):
        label = pid["label"] if isinstance(pid, Mapping) else labels.get(pid, pid)
        rows.append({"kind": "hallucinated node", "item": label, "detail": "in the diagram, not in the reference"})
    for key, kind, detail in (
        ("missing_edges", "missing edge", "reference edge not recovered"),
        ("reversed_edges", "reversed edge", "drawn in the opposite direction"),
        ("unsupported_edges", "unsupported edge", "no such relation in the reference"),
        ("unmatched_endpoint_edges", "unmatched-endpoint edge", "an endpoint matches no reference node"),
    ):
        for e in diag.get(key, []):
            rows.append({"kind": kind, "item": _edge_text(e), "detail": detail})
    for e in diag.get("two_way_edges", []):
        rows.append({"kind": "two-way edge", "item": _edge_text(e), "detail": "drawn both ways: no direction"})
    for s in diag.get("excused_edges", []):
        n = len(s.get("skipped_ref_edges", []))
        rows.append({"kind": "excused skip", "item": _edge_text(s),
                     "detail": f"drawn straight through {n - 1} left-out box{'es' * (n != 2)}: not counted, "
                               "recovers nothing"})
    return rows


def diagnostics_table(
    result_or_row: GraphLevelResult | Mapping[str, Any] | None,
    *,
    pred: DiagramGraph | None = None,
    matched: bool = True,
) -> Any:
    """One row per diagnostic (``kind``, ``item``, ``detail``): matched nodes (unless
    ``matched=False``), missing/hallucinated nodes, missing/reversed/unsupported/unmatched-
    endpoint edges and skip-path credits (``pred``, the predicted graph, names hallucinated
    nodes when the diagnostics alone do not), from a :class:`GraphLevelResult`, a results row,
    its ``graph_level`` dict or the diagnostics dict.

    Returns a ``pandas.DataFrame`` when pandas is installed, else a :class:`DiagnosticsTable`
    (a list of dicts that renders as an HTML table in Jupyter). A row whose item was not
    scored (missing prediction, errors) gives one ``error`` row.
    """
    rows = diagnostics_rows(graph_diagnostics(result_or_row), pred=pred, matched=matched)
    if isinstance(result_or_row, Mapping) and result_or_row.get("status") not in (None, "ok"):
        rows.insert(0, {"kind": "error", "item": result_or_row["status"], "detail": result_or_row.get("error") or ""})
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(list(rows), columns=list(DiagnosticsTable.columns))
