"""Diff renderings: a reference graph coloured by its comparison with a prediction.

Nothing is scored here except when a caller asks :func:`render_graph` (or
:func:`sciflow.views.notebook.show_diff`) for a diff without passing a precomputed result (then
:func:`sciflow.metrics.graph_level.graph_level` runs once, through :func:`compare`).

:func:`diff_dot` draws the *reference* graph coloured by a comparison:

===============================  ==========================================================
matched reference node           green box (second line: the predicted label when it differs)
missing reference node           red dashed box
hallucinated predicted node      orange box (added)
recovered reference edge         green
reference edge credited by skip  green dashed, labelled "skip" (the diagram skipped the
                                 red dashed nodes on it and drew a shortcut)
missing reference edge           red dashed
reversed predicted edge          purple, drawn in the *predicted* direction
unsupported / unmatched-endpoint orange
===============================  ==========================================================

:func:`legend_dot` is that legend alone; :func:`render_graph` writes a graph, or its diff
against a reference, as ``.svg`` or ``.png``. The drawing itself (boxes, clusters, escaping,
positional node names ``r0``, ``p3``) is that of :mod:`sciflow.bench.drawing`, so the same
inputs always give the same DOT source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape as html_escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import graphviz

from sciflow.bench.drawing import (
    PLAIN,
    add_nodes_clustered,
    dot_label,
    new_digraph,
    output_format,
    rankdir_for,
    to_dot,
    write_dot,
)
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.graph_level import GraphLevelResult

if TYPE_CHECKING:  # pragma: no cover
    from sciflow.config import MatchingConfig

__all__ = [
    "COLORS",
    "compare",
    "diff_dot",
    "graph_diagnostics",
    "legend_dot",
    "pred_labels",
    "render_graph",
]

# (line colour, fill colour)
COLORS: dict[str, tuple[str, str]] = {
    "plain": PLAIN,
    "matched": ("#2e7d32", "#e3f4e4"),
    "missing": ("#c62828", "#fdecec"),
    "hallucinated": ("#e65100", "#fff0de"),
    "reversed": ("#7b1fa2", "#f3e5f5"),
}


def graph_diagnostics(result: GraphLevelResult | Mapping[str, Any] | None) -> dict[str, Any]:
    """The diagnostics dict (``GraphLevelResult.diagnostics()`` layout) from a result, a results
    row, a row's ``graph_level`` dict or the diagnostics themselves; ``{}`` when there is none."""
    if result is None:
        return {}
    if isinstance(result, GraphLevelResult):
        return result.diagnostics()
    if "graph_level" in result:
        return graph_diagnostics(result["graph_level"])
    if "diagnostics" in result:
        return dict(result["diagnostics"] or {})
    return dict(result)


@dataclass
class _Diff:
    """A comparison resolved onto drawable nodes: reference ids and hallucinated predicted ids."""

    matched: dict[str, str] = field(default_factory=dict)  # ref id -> pred label
    pred_to_ref: dict[str, str] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)
    hallucinated: dict[str, str] = field(default_factory=dict)  # pred id -> label (pred order)
    direct: set[tuple[str, str]] = field(default_factory=set)  # reference edges
    skip: set[tuple[str, str]] = field(default_factory=set)
    missing_edges: set[tuple[str, str]] = field(default_factory=set)
    wrong: list[tuple[str, str, str]] = field(default_factory=list)  # (verdict, pred src, pred tgt)


_WRONG_KINDS = (("reversed_edges", "reversed"), ("unsupported_edges", "unsupported"),
                ("unmatched_endpoint_edges", "unmatched_endpoint"), ("two_way_edges", "two_way"))


def pred_labels(diag: Mapping[str, Any], pred: DiagramGraph | None) -> dict[str, str]:
    """Predicted node id -> label, from ``pred`` or (without it) from the labelled edge lists."""
    labels = {n.id: n.label for n in pred.nodes} if pred is not None else {}
    for key in ("reversed_edges", "unsupported_edges", "unmatched_endpoint_edges", "two_way_edges", "excused_edges"):
        for e in diag.get(key, []):
            labels.setdefault(e["source"], e.get("source_label", e["source"]))
            labels.setdefault(e["target"], e.get("target_label", e["target"]))
    for p in diag.get("matched_nodes", []):
        labels.setdefault(p["pred_id"], p["pred_label"])
    return labels


def _resolve(pred: DiagramGraph | None, ref: DiagramGraph, diag: Mapping[str, Any]) -> _Diff:
    d = _Diff()
    for p in diag.get("matched_nodes", []):
        d.matched[p["ref_id"]] = p["pred_label"]
        d.pred_to_ref[p["pred_id"]] = p["ref_id"]
    d.missing = {m["id"] for m in diag.get("missing_nodes", [])}
    labels = pred_labels(diag, pred)
    halluc = set(diag.get("hallucinated_nodes", []))
    order = [n.id for n in pred.nodes] if pred is not None else sorted(halluc)
    d.hallucinated = {i: labels.get(i, i) for i in order if i in halluc}
    ref_edges = {(e.source, e.target) for e in ref.edges}
    d.missing_edges = {(m["source"], m["target"]) for m in diag.get("missing_edges", [])} & ref_edges
    for s in diag.get("excused_edges", []):  # skipped reference edges (still missing)
        d.skip.update((a, b) for a, b in s.get("skipped_ref_edges", []))
    d.direct = ref_edges - d.missing_edges  # recovered: drawn directly, alone
    d.skip -= d.direct
    for key, verdict in _WRONG_KINDS:
        d.wrong += [(verdict, e["source"], e["target"]) for e in diag.get(key, [])]
    return d


_LEGEND_ROWS = (
    ("box", "matched", "solid", "matched node"),
    ("box", "missing", "dashed", "missing node (in reference, not drawn)"),
    ("box", "hallucinated", "solid", "hallucinated node (drawn, not in reference)"),
    ("edge", "matched", "━━▶", "recovered edge"),
    ("edge", "missing", "╍╍▶ skipped", "skipped by an excused arrow (not recovered)"),
    ("edge", "missing", "╍╍▶", "missing edge"),
    ("edge", "reversed", "━━▶", "reversed edge (as drawn)"),
    ("edge", "hallucinated", "━━▶", "unsupported / unmatched-endpoint edge"),
)


def _legend_html() -> str:
    cells = []
    for kind, color, style, text in _LEGEND_ROWS:
        line, fill = COLORS[color]
        if kind == "box":
            dashed = ",dashed" if style == "dashed" else ""
            sample = f'<TD BGCOLOR="{fill}" COLOR="{line}" BORDER="2" STYLE="rounded{dashed}" WIDTH="30"> </TD>'
        else:
            sample = f'<TD BORDER="0"><FONT COLOR="{line}">{html_escape(style)}</FONT></TD>'
        cells.append(f'{sample}<TD BORDER="0" ALIGN="LEFT">{html_escape(text)}</TD>')
    rows = ['<TR><TD COLSPAN="4" ALIGN="LEFT"><B>legend</B></TD></TR>']
    boxes = [c for c, r in zip(cells, _LEGEND_ROWS, strict=True) if r[0] == "box"]
    edges = [c for c, r in zip(cells, _LEGEND_ROWS, strict=True) if r[0] == "edge"]
    blank = '<TD BORDER="0"> </TD><TD BORDER="0"> </TD>'
    rows += [f"<TR>{boxes[i] if i < len(boxes) else blank}{e}</TR>" for i, e in enumerate(edges)]
    table = '<TABLE BORDER="1" COLOR="#b0bec5" CELLBORDER="0" CELLSPACING="2" CELLPADDING="2">'
    return "<" + table + "".join(rows) + "</TABLE>>"


def diff_dot(
    pred: DiagramGraph | None,
    ref: DiagramGraph,
    result: GraphLevelResult | Mapping[str, Any],
    *,
    rankdir: str | None = None,
    legend: bool = True,
) -> graphviz.Digraph:
    """The reference graph coloured by its comparison with ``pred`` (see the module table).

    ``result`` is the :class:`GraphLevelResult` of ``graph_level(pred, ref)``, or its stored
    diagnostics (a results row, its ``graph_level`` dict, or the diagnostics dict). ``pred``
    may be ``None`` when only stored diagnostics are at hand (recovered edges are then every
    reference edge that is neither missing nor skip-credited).

    >>> from sciflow.config import MatchingConfig
    >>> from sciflow.metrics.graph_level import graph_level
    >>> ref = DiagramGraph.from_dict({"id": "r", "nodes": [{"id": k, "label": k} for k in "ABC"],
    ...     "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "C"}]})
    >>> pred = DiagramGraph.from_dict({"id": "p", "nodes": [{"id": k, "label": k} for k in "AC"],
    ...     "edges": [{"source": "A", "target": "C"}]})
    >>> src = diff_dot(pred, ref, graph_level(pred, ref, MatchingConfig(embedder="none"))).source
    >>> "skip" in src and "dashed" in src
    True
    """
    diag = graph_diagnostics(result)
    d = _resolve(pred, ref, diag)
    dot = new_digraph(f"diff_{ref.id}", rankdir or rankdir_for(ref))
    names = {n.id: f"r{i}" for i, n in enumerate(ref.nodes)}
    # Hallucinated predicted nodes: d.hallucinated is in predicted document order.
    pnames = {pid: f"p{k}" for k, pid in enumerate(d.hallucinated)}

    def node_stmt(target: graphviz.Digraph, i: int, n: Any) -> None:
        if n.id in d.matched:
            line, fill = COLORS["matched"]
            pl = d.matched[n.id]
            lab = dot_label(n.label) if pl == n.label else dot_label(n.label, f"drawn: {pl}")
            target.node(f"r{i}", lab, color=line, fillcolor=fill)
        elif n.id in d.missing:
            line, fill = COLORS["missing"]
            target.node(f"r{i}", dot_label(n.label, "(missing)"), color=line, fillcolor=fill,
                        fontcolor=line, style="rounded,dashed,filled")
        else:  # not covered by the diagnostics (should not happen): plain
            line, fill = COLORS["plain"]
            target.node(f"r{i}", dot_label(n.label), color=line, fillcolor=fill)

    add_nodes_clustered(dot, ref, node_stmt)
    line, fill = COLORS["hallucinated"]
    for pid, lab in d.hallucinated.items():
        dot.node(pnames[pid], dot_label(lab, "(hallucinated)"), color=line, fillcolor=fill, fontcolor=line)

    for e in ref.edges:
        ab = (e.source, e.target)
        if ab in d.direct:
            attrs = {"color": COLORS["matched"][0]}
        elif ab in d.skip:
            attrs = {"color": COLORS["missing"][0], "style": "dashed", "label": "skipped",
                     "fontcolor": COLORS["missing"][0]}
        elif ab in d.missing_edges:
            attrs = {"color": COLORS["missing"][0], "style": "dashed"}
        else:
            attrs = {"color": COLORS["plain"][0]}
        dot.edge(names[e.source], names[e.target], **attrs)

    def end(pid: str) -> str | None:
        if pid in d.pred_to_ref:
            return names[d.pred_to_ref[pid]]
        return pnames.get(pid)

    for verdict, s, t in sorted(d.wrong, key=lambda w: (w[0], (end(w[1]) or ""), (end(w[2]) or ""))):
        u, v = end(s), end(t)
        if u is None or v is None:
            continue
        color = COLORS["reversed" if verdict == "reversed" else "hallucinated"][0]
        text = {"reversed": "reversed", "unsupported": "unsupported", "two_way": "two-way"}.get(verdict, "")
        attrs = {"color": color, "fontcolor": color, "penwidth": "1.8"}
        if text:
            attrs["label"] = text
        if verdict != "unmatched_endpoint":
            attrs["constraint"] = "false"
        dot.edge(u, v, **attrs)

    if legend:
        with dot.subgraph(name="cluster_legend") as lg:
            lg.attr(label="", style="invis")
            lg.node("legend", _legend_html(), shape="plaintext", style="", fontsize="10", margin="0")
    return dot


def legend_dot() -> graphviz.Digraph:
    """The legend of :func:`diff_dot` alone (for pages that show many diffs drawn without it)."""
    dot = new_digraph("legend", "LR")
    dot.node("legend", _legend_html(), shape="plaintext", style="", fontsize="10", margin="0")
    return dot


def compare(pred: DiagramGraph, ref: DiagramGraph, matching: MatchingConfig | None) -> GraphLevelResult:
    """:func:`sciflow.metrics.graph_level.graph_level` of ``pred`` against ``ref`` (imported here,
    when a diff is asked for without a result)."""
    from sciflow.metrics.graph_level import graph_level

    return graph_level(pred, ref, matching=matching)


def render_graph(
    graph: DiagramGraph,
    out_path: str | Path,
    *,
    diff: DiagramGraph | None = None,
    result: GraphLevelResult | Mapping[str, Any] | None = None,
    matching: MatchingConfig | None = None,
    rankdir: str | None = None,
    dpi: int = 144,
    legend: bool = True,
) -> Path:
    """Write ``graph`` as ``.svg``, ``.png`` or ``.pdf`` (by the suffix of ``out_path``), as
    :func:`sciflow.bench.drawing.render_graph` does.

    With ``diff`` (the reference graph) the diff rendering of :func:`diff_dot` is written
    instead: ``graph`` is the prediction; ``result`` is used when given, else the graphs are
    compared with :func:`sciflow.metrics.graph_level.graph_level` (``matching`` config;
    default: the pinned one, which loads the embedding model); ``legend=False`` leaves the colour
    legend out of it. Returns the path written.

    >>> import tempfile
    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "A"}], "edges": []})
    >>> p = render_graph(g, Path(tempfile.mkdtemp()) / "t.svg")
    >>> p.read_text().lstrip().startswith("<?xml")
    True
    """
    out, _ = output_format(out_path)  # a bad suffix fails before any comparison runs
    if diff is not None:
        res = result if result is not None else compare(graph, diff, matching)
        dot = diff_dot(graph, diff, res, rankdir=rankdir, legend=legend)
    else:
        dot = to_dot(graph, rankdir=rankdir)
    return write_dot(dot, out, dpi=dpi)

