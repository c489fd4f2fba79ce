"""What people look at: graph renderings, comparison diffs, parse overlays, notebook helpers.

Every function here only *renders* what the format and the metrics already hold; nothing is
scored here except when a caller asks :func:`render_graph` / :func:`show_diff` for a diff
without passing a precomputed result (then :func:`sciflow.metrics.graph_level.graph_level`
runs once).

Renderings use Graphviz (the ``graphviz`` package and the ``dot`` binary):

- :func:`to_dot` draws one :class:`~sciflow.format.graph.DiagramGraph` (rounded boxes, groups as
  clusters, left-to-right unless the prompt/meta layout says top-to-bottom);
- :func:`diff_dot` draws the *reference* graph coloured by a comparison:

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

- :func:`render_graph` writes ``.svg`` or ``.png`` (chosen by the suffix);
- :func:`overlay` draws a graph's node boxes and centre-to-centre arrows over its image.

The same inputs always give the same DOT source (nodes get positional names ``r0``, ``p3``,
never user ids, so odd characters in ids cannot break the DOT syntax; labels are escaped).

Example
-------
>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "Encoder"},
...     {"id": "b", "label": "Decoder"}], "edges": [{"source": "a", "target": "b"}]})
>>> dot = to_dot(g)
>>> dot.graph_attr["rankdir"], "Encoder" in dot.source
('LR', True)
>>> rows = diagnostics_table({"missing_nodes": [{"id": "n2", "label": "Head"}]})
>>> [(r["kind"], r["item"]) for r in rows]
[('missing node', 'Head')]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape as html_escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

import graphviz
from PIL import Image, ImageDraw, ImageFont

from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph
from sciflow.metrics.graph_level import GraphLevelResult

if TYPE_CHECKING:  # pragma: no cover
    from sciflow.config import MatchingConfig

__all__ = [
    "COLORS",
    "DiagnosticsTable",
    "diagnostics_rows",
    "diagnostics_table",
    "diff_dot",
    "graph_diagnostics",
    "item_graphs",
    "legend_dot",
    "load_image",
    "load_results",
    "overlay",
    "render_graph",
    "resolve_path",
    "rankdir_for",
    "show_diff",
    "show_graph",
    "to_dot",
]

# (line colour, fill colour)
COLORS: dict[str, tuple[str, str]] = {
    "plain": ("#37474f", "#eef2f5"),
    "matched": ("#2e7d32", "#e3f4e4"),
    "missing": ("#c62828", "#fdecec"),
    "hallucinated": ("#e65100", "#fff0de"),
    "reversed": ("#7b1fa2", "#f3e5f5"),
}
FONT = "DejaVu Sans,Helvetica,Arial,sans-serif"


# ---------------------------------------------------------------- DOT helpers
def _label(*lines: str) -> graphviz.quoting.NoHtml:
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


def _digraph(name: str, rankdir: str) -> graphviz.Digraph:
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


def _add_nodes_clustered(
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
                sub.attr(label=_label(g.label or ""), style="rounded,dashed", color="#90a4ae",
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
    dot = _digraph(graph.id or "graph", rankdir or rankdir_for(graph))
    line, fill = COLORS["plain"]
    names = {n.id: f"n{i}" for i, n in enumerate(graph.nodes)}

    def node_stmt(target: graphviz.Digraph, i: int, n: Any) -> None:
        attrs = {"color": line, "fillcolor": fill}
        if n.kind in ("operator", "circle", "ellipse"):
            attrs["shape"] = "ellipse"
        target.node(f"n{i}", _label(n.label), **attrs)

    _add_nodes_clustered(dot, graph, node_stmt)
    for e in graph.edges:
        attrs: dict[str, str] = {"color": line}
        if e.style in ("dashed", "dotted"):
            attrs["style"] = e.style
        if e.label:
            attrs["label"] = _label(e.label)
        dot.edge(names[e.source], names[e.target], **attrs)
    return dot


# ------------------------------------------------------------------ diffs
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


def _pred_labels(diag: Mapping[str, Any], pred: DiagramGraph | None) -> dict[str, str]:
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
    pred_labels = _pred_labels(diag, pred)
    halluc = set(diag.get("hallucinated_nodes", []))
    order = [n.id for n in pred.nodes] if pred is not None else sorted(halluc)
    d.hallucinated = {i: pred_labels.get(i, i) for i in order if i in halluc}
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
    dot = _digraph(f"diff_{ref.id}", rankdir or rankdir_for(ref))
    names = {n.id: f"r{i}" for i, n in enumerate(ref.nodes)}
    # Hallucinated predicted nodes: d.hallucinated is in predicted document order.
    pnames = {pid: f"p{k}" for k, pid in enumerate(d.hallucinated)}

    def node_stmt(target: graphviz.Digraph, i: int, n: Any) -> None:
        if n.id in d.matched:
            line, fill = COLORS["matched"]
            pl = d.matched[n.id]
            lab = _label(n.label) if pl == n.label else _label(n.label, f"drawn: {pl}")
            target.node(f"r{i}", lab, color=line, fillcolor=fill)
        elif n.id in d.missing:
            line, fill = COLORS["missing"]
            target.node(f"r{i}", _label(n.label, "(missing)"), color=line, fillcolor=fill,
                        fontcolor=line, style="rounded,dashed,filled")
        else:  # not covered by the diagnostics (should not happen): plain
            line, fill = COLORS["plain"]
            target.node(f"r{i}", _label(n.label), color=line, fillcolor=fill)

    _add_nodes_clustered(dot, ref, node_stmt)
    line, fill = COLORS["hallucinated"]
    for pid, lab in d.hallucinated.items():
        dot.node(pnames[pid], _label(lab, "(hallucinated)"), color=line, fillcolor=fill, fontcolor=line)

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
    dot = _digraph("legend", "LR")
    dot.node("legend", _legend_html(), shape="plaintext", style="", fontsize="10", margin="0")
    return dot


def _compare(pred: DiagramGraph, ref: DiagramGraph, matching: MatchingConfig | None) -> GraphLevelResult:
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
) -> Path:
    """Write ``graph`` as ``.svg`` or ``.png`` (by the suffix of ``out_path``).

    With ``diff`` (the reference graph) the diff rendering of :func:`diff_dot` is written
    instead: ``graph`` is the prediction; ``result`` is used when given, else the graphs are
    compared with :func:`sciflow.metrics.graph_level.graph_level` (``matching`` config;
    default: the pinned one, which loads the embedding model). Returns the path written.

    >>> import tempfile
    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "A"}], "edges": []})
    >>> p = render_graph(g, Path(tempfile.mkdtemp()) / "t.svg")
    >>> p.read_text().lstrip().startswith("<?xml")
    True
    """
    out = Path(out_path)
    fmt = out.suffix.lower().lstrip(".")
    if fmt not in ("svg", "png"):
        raise ValueError(f"{out}: the file name must end in .svg or .png")
    if diff is not None:
        res = result if result is not None else _compare(graph, diff, matching)
        dot = diff_dot(graph, diff, res, rankdir=rankdir)
    else:
        dot = to_dot(graph, rankdir=rankdir)
    if fmt == "png":
        dot.graph_attr["dpi"] = str(dpi)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(dot.pipe(format=fmt))
    return out


# ---------------------------------------------------------------- overlay
def load_image(image: str | Path | Image.Image | Any) -> Image.Image:
    """An RGB PIL image from a path (raster, SVG or PDF, through :mod:`sciflow.format.imageio` so the
    pixels are those the parser saw), a PIL image or a numpy array."""
    if isinstance(image, Image.Image):
        return image.convert("RGB")
    from sciflow.format.imageio import load_image as _load
    from sciflow.format.imageio import to_rgb

    arr = _load(image) if isinstance(image, str | Path) else to_rgb(image)
    return Image.fromarray(arr, "RGB")


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _centre(b: Sequence[float]) -> tuple[float, float]:
    return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2


def _clip_to_box(c: tuple[float, float], toward: tuple[float, float], b: Sequence[float]) -> tuple[float, float]:
    """The point where the segment from the centre ``c`` of box ``b`` toward ``toward`` leaves the box."""
    dx, dy = toward[0] - c[0], toward[1] - c[1]
    hw, hh = max((b[2] - b[0]) / 2, 1e-6), max((b[3] - b[1]) / 2, 1e-6)
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf, 1.0)
    return c[0] + dx * t, c[1] + dy * t


def overlay(
    image: str | Path | Image.Image | Any,
    graph: DiagramGraph,
    *,
    diagnostics: GraphLevelResult | Mapping[str, Any] | None = None,
    labels: bool = True,
) -> Image.Image:
    """The image (same size) with ``graph``'s node boxes, centre-to-centre arrows and labels
    drawn over it; nodes or edges without a bbox are left out.

    With ``diagnostics`` (of this graph as the prediction) boxes and arrows are coloured:
    matched green, hallucinated orange, reversed purple, other wrong edges orange; else blue.

    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "A", "bbox": [5, 5, 40, 30]},
    ...     {"id": "b", "label": "B", "bbox": [60, 5, 95, 30]}], "edges": [{"source": "a", "target": "b"}]})
    >>> overlay(Image.new("RGB", (100, 40), "white"), g).size
    (100, 40)
    """
    base = load_image(image)
    w, h = base.size
    canvas = base.convert("RGBA")
    layer = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    scale = max(1.0, max(w, h) / 900)
    width = max(2, round(2 * scale))
    font = _font(max(11, round(12 * scale)))

    diag = graph_diagnostics(diagnostics)
    default = "#1565c0"
    node_color = {n.id: default for n in graph.nodes}
    edge_color: dict[tuple[str, str], str] = {}
    if diag:
        for p in diag.get("matched_nodes", []):
            node_color[p["pred_id"]] = COLORS["matched"][0]
        for pid in diag.get("hallucinated_nodes", []):
            node_color[pid] = COLORS["hallucinated"][0]
        for e in graph.edges:
            edge_color[(e.source, e.target)] = COLORS["matched"][0]
        for key, color in (("reversed_edges", COLORS["reversed"][0]),
                           ("unsupported_edges", COLORS["hallucinated"][0]),
                           ("unmatched_endpoint_edges", COLORS["hallucinated"][0])):
            for e in diag.get(key, []):
                edge_color[(e["source"], e["target"])] = color

    def rgba(hex_color: str, alpha: int = 255) -> tuple[int, int, int, int]:
        c = hex_color.lstrip("#")
        return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16), alpha

    boxes = {n.id: n.bbox for n in graph.nodes if n.bbox is not None}
    for n in graph.nodes:
        if n.bbox is None:
            continue
        x0, y0, x1, y1 = n.bbox
        c = node_color[n.id]
        draw.rectangle([x0, y0, x1, y1], outline=rgba(c), fill=rgba(c, 28), width=width)
    head = 9 * scale
    for e in graph.edges:
        if e.source not in boxes or e.target not in boxes or e.source == e.target:
            continue
        bs, bt = boxes[e.source], boxes[e.target]
        cs, ct = _centre(bs), _centre(bt)
        p0, p1 = _clip_to_box(cs, ct, bs), _clip_to_box(ct, cs, bt)
        if math.dist(p0, p1) < 1:  # overlapping boxes: fall back to centre to centre
            p0, p1 = cs, ct
        c = rgba(edge_color.get((e.source, e.target), "#ad1457"))
        draw.line([p0, p1], fill=c, width=width)
        ang = math.atan2(p1[1] - p0[1], p1[0] - p0[0])
        wing = math.radians(25)
        pts = [p1,
               (p1[0] - head * math.cos(ang - wing), p1[1] - head * math.sin(ang - wing)),
               (p1[0] - head * math.cos(ang + wing), p1[1] - head * math.sin(ang + wing))]
        draw.polygon(pts, fill=c)
    if labels:
        for n in graph.nodes:
            if n.bbox is None:
                continue
            x0, y0 = n.bbox[0], n.bbox[1]
            text = n.label if len(n.label) <= 40 else n.label[:39] + "…"
            tb = draw.textbbox((0, 0), text, font=font)
            tw, th = tb[2] - tb[0], tb[3] - tb[1]
            ty = y0 - th - 6 if y0 - th - 6 >= 0 else y0 + 2
            tx = min(max(0, x0), max(0, w - tw - 6))
            draw.rectangle([tx, ty, tx + tw + 6, ty + th + 5], fill=rgba(node_color[n.id], 215))
            draw.text((tx + 3 - tb[0], ty + 2 - tb[1]), text, fill=(255, 255, 255, 255), font=font)
    return Image.alpha_composite(canvas, layer).convert("RGB")


# ------------------------------------------------------------ results folders
def load_results(results_dir: str | Path) -> list[dict[str, Any]]:
    """The rows of a results folder's ``results.jsonl``."""
    path = Path(results_dir) / "results.jsonl"
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


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


# ---------------------------------------------------------------- notebook
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
        result = _compare(pred, ref, matching)
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
    pred_labels = _pred_labels(diag, pred)
    if matched:
        for p in diag.get("matched_nodes", []):
            same = p["pred_label"] == p["ref_label"]
            rows.append({"kind": "matched node", "item": p["ref_label"],
                         "detail": ("" if same else f"drawn as {p['pred_label']!r}; ")
                         + f"similarity {p['similarity']:.3f}"})
    for m in diag.get("missing_nodes", []):
        rows.append({"kind": "missing node", "item": m["label"], "detail": "in the reference, not in the diagram"})
    for pid in diag.get("hallucinated_nodes", []):
        label = pid["label"] if isinstance(pid, Mapping) else pred_labels.get(pid, pid)
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
