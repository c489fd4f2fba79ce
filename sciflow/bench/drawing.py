"""Exact Graphviz drawings of one graph: the diagnostic reference renderer of the benchmark.

:func:`to_dot` draws one :class:`~sciflow.format.graph.DiagramGraph` (rounded boxes, groups as
clusters, edge labels and styles kept, left-to-right unless the prompt/meta layout says
top-to-bottom); :func:`render_graph` writes it as ``.svg`` or ``.png`` (chosen by the suffix).
The ``graphviz`` generator (:mod:`sciflow.bench.generators`) draws its images with it, and the
diff renderings of :mod:`sciflow.views.diff` are built from the same pieces
(:func:`new_digraph`, :func:`add_nodes_clustered`, :func:`dot_label`, :func:`write_dot`).

Renderings use Graphviz (the ``graphviz`` package and the ``dot`` binary). The same inputs
always give the same DOT source (nodes get positional names ``n0``, ``n3``, never user ids, so
odd characters in ids cannot break the DOT syntax; labels are escaped).

Example
-------
>>> g = DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "Encoder"},
...     {"id": "b", "label": "Decoder"}], "edges": [{"source": "a", "target": "b"}]})
>>> dot = to_dot(g)
>>> dot.graph_attr["rankdir"], "Encoder" in dot.source
('LR', True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import graphviz

from sciflow.format.graph import DiagramGraph

__all__ = [
    "FONT",
    "PLAIN",
    "add_nodes_clustered",
    "dot_label",
    "new_digraph",
    "output_format",
    "rankdir_for",
    "render_graph",
    "to_dot",
    "write_dot",
]

#: (line colour, fill colour) of a plain node or edge
PLAIN: tuple[str, str] = ("#37474f", "#eef2f5")
FONT = "DejaVu Sans,Helvetica,Arial,sans-serif"


def dot_label(*lines: str) -> graphviz.quoting.NoHtml:
    """A DOT label of plain text lines (backslashes escaped, never read as HTML)."""
    return graphviz.nohtml(r"\n".join(graphviz.escape(str(s)) for s in lines))


def rankdir_for(graph: DiagramGraph | None) -> str:
    """``"TB"`` when the prompt's (or meta's) layout says top-to-bottom, else ``"LR"``.

    >>> g = DiagramGraph.from_dict({"id": "x", "nodes": [], "edges": [], "meta": {"layout": "top-to-bottom"}})
    >>> rankdir_for(g), rankdir_for(None)
    ('TB', 'LR')
    """
    if graph is None:
        return "LR"
    hints = []
    if graph.prompt is not None and graph.prompt.layout:
        hints.append(graph.prompt.layout)
    if isinstance(graph.meta.get("layout"), str):
        hints.append(graph.meta["layout"])
    for hint in hints:
        h = " ".join(hint.lower().replace("-", " ").replace("_", " ").split())
        if h in ("tb", "td", "vertical") or h.startswith(("top to bottom", "top down", "top bottom")):
            return "TB"
    return "LR"


def new_digraph(name: str, rankdir: str) -> graphviz.Digraph:
    return graphviz.Digraph(
        name=name,
        graph_attr={"rankdir": rankdir, "fontname": FONT, "fontsize": "12", "nodesep": "0.35",
                    "ranksep": "0.45", "newrank": "true"},
        node_attr={"shape": "box", "style": "rounded,filled", "fontname": FONT, "fontsize": "12",
                   "margin": "0.15,0.06", "penwidth": "1.4"},
        edge_attr={"fontname": FONT, "fontsize": "10", "arrowsize": "0.8", "penwidth": "1.3"},
    )


def _group_tree(graph: DiagramGraph) -> tuple[dict[str | None, list[int]], dict[str, int]]:
    """Children of each group (None = top level) as indices into ``graph.groups``."""
    index = {g.id: i for i, g in enumerate(graph.groups)}
    children: dict[str | None, list[int]] = {}
    for i, g in enumerate(graph.groups):
        parent = g.parent if g.parent in index and g.parent != g.id else None
        children.setdefault(parent, []).append(i)
    return children, index


def add_nodes_clustered(
    dot: graphviz.Digraph,
    graph: DiagramGraph,
    node_stmt: Any,
) -> None:
    """Add every node of ``graph`` (``node_stmt(target, i, node)``), groups as nested clusters."""
    children, index = _group_tree(graph)
    members: dict[str | None, list[int]] = {}
    for i, n in enumerate(graph.nodes):
        members.setdefault(n.group if n.group in index else None, []).append(i)
    seen: set[int] = set()

    def fill(target: graphviz.Digraph, gid: str | None) -> None:
        for ci in children.get(gid, []):
            if ci in seen:  # a cycle in parents; draw each group once
                continue
            seen.add(ci)
            g = graph.groups[ci]
            with target.subgraph(name=f"cluster_{ci}") as sub:
                sub.attr(label=dot_label(g.label or ""), style="rounded,dashed", color="#90a4ae",
                         fontcolor="#455a64", fontname=FONT, fontsize="11")
                fill(sub, g.id)
        for i in members.get(gid, []):
            node_stmt(target, i, graph.nodes[i])

    fill(dot, None)
    # Groups unreachable from the top (parent cycles): their nodes still appear.
    for gid, idx in members.items():
        if gid is not None and index[gid] not in seen:
            for i in idx:
                node_stmt(dot, i, graph.nodes[i])


def to_dot(graph: DiagramGraph, *, rankdir: str | None = None) -> graphviz.Digraph:
    """The graph as a ``graphviz.Digraph``: rounded boxes, groups as clusters, edge labels and
    styles (dashed/dotted) kept. ``rankdir`` defaults to :func:`rankdir_for` (``LR`` / ``TB``).

    A ``Digraph`` shows itself inline in Jupyter; ``.source`` is the DOT text.

    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "<EOS>"}], "edges": []})
    >>> '"<EOS>"' in to_dot(g).source   # never read as an HTML label
    True
    """
    dot = new_digraph(graph.id or "graph", rankdir or rankdir_for(graph))
    line, fill = PLAIN
    names = {n.id: f"n{i}" for i, n in enumerate(graph.nodes)}

    def node_stmt(target: graphviz.Digraph, i: int, n: Any) -> None:
        attrs = {"color": line, "fillcolor": fill}
        if n.kind in ("operator", "circle", "ellipse"):
            attrs["shape"] = "ellipse"
        target.node(f"n{i}", dot_label(n.label), **attrs)

    add_nodes_clustered(dot, graph, node_stmt)
    for e in graph.edges:
        attrs: dict[str, str] = {"color": line}
        if e.style in ("dashed", "dotted"):
            attrs["style"] = e.style
        if e.label:
            attrs["label"] = dot_label(e.label)
        dot.edge(names[e.source], names[e.target], **attrs)
    return dot


def output_format(out_path: str | Path) -> tuple[Path, str]:
    """``(path, "svg" | "png" | "pdf")`` from the suffix of ``out_path``; ``ValueError`` for any other."""
    out = Path(out_path)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("svg", "png", "pdf"):
        raise ValueError(f"{out}: the file name must end in .svg, .png or .pdf")
    return out, fmt


def write_dot(dot: graphviz.Digraph, out_path: str | Path, *, dpi: int = 144) -> Path:
    """Write ``dot`` as ``.svg``, ``.png`` or ``.pdf`` (by the suffix; ``dpi`` for PNG), making the folder;
    returns the path written."""
    out, fmt = output_format(out_path)
    if fmt == "png":
        dot.graph_attr["dpi"] = str(dpi)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(dot.pipe(format=fmt))
    return out


def render_graph(
    graph: DiagramGraph,
    out_path: str | Path,
    *,
    rankdir: str | None = None,
    dpi: int = 144,
) -> Path:
    """Write ``graph`` (drawn by :func:`to_dot`) as ``.svg`` or ``.png`` (by the suffix of
    ``out_path``). Returns the path written. (The diff rendering of a prediction against its
    reference: :func:`sciflow.views.diff.render_graph`.)

    >>> import tempfile
    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "A"}], "edges": []})
    >>> p = render_graph(g, Path(tempfile.mkdtemp()) / "t.svg")
    >>> p.read_text().lstrip().startswith("<?xml")
    True
    """
    return write_dot(to_dot(graph, rankdir=rankdir), out_path, dpi=dpi)
