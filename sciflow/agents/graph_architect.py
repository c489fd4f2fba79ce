"""Graph Architect: builds the :class:`~sciflow.format.graph.DiagramGraph` from grounded evidence.

Backend ``default``, exact behaviour:

1. Nodes: every non-candidate node, plus candidate nodes (free text, containers) that an
   edge attaches to. Nodes with an empty label are dropped with their edges.
   A titled container node's items (nodes inside it at any depth) are its content and are
   dropped when no traced stroke touches any of them (:func:`container_content`).
2. Duplicates merge: two nodes with the same case/space-folded label whose boxes overlap
   (IoU >= ``dup_iou``) are one node (the first in reading order is kept).
3. Edges: self-loops and edges between two free-standing texts are dropped (except a
   block arrow's: a drawn flow symbol whose ends are read from its own shape); parallel
   edges between the same ordered pair are one edge
   (highest confidence; label and style of that edge, or the first non-empty label).
4. Ids: ``n1..nK`` in reading order of node boxes (top-to-bottom by centre row, then
   left-to-right). Node ``group`` refers to kept groups ``g1..``; groups keep the containers
   found by the Grounder that hold a kept node, in the same order.
5. Coordinates are converted back to the input image (divided by ``diagram.scale``).
6. ``meta["free_texts"]``: the free-standing text labels (titles, captions, legends, stray
   words) that became neither a kept node nor an arrow label, in reading order, when they
   hold at least two letters or digits (a lone glyph is more often an arrowhead misread
   than a word). The text level counts them as statements (faithfulness).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sciflow.agents import overlay
from sciflow.agents.diagram import BBox, Diagram
from sciflow.agents.registry import AGENTS, BackendAgent, Registry
from sciflow.agents.text_filters import fold_label
from sciflow.format.graph import DiagramGraph, Edge, Group, Node

BACKENDS = Registry("graph_architect backend")


def _iou(a: BBox, b: BBox) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


@BACKENDS.register("default")
class DefaultArchitect:
    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)
        self.dup_iou = float(self.params.get("dup_iou", 0.3))

    def fingerprint(self) -> dict[str, Any]:
        # 2: meta["free_texts"]; 3: block arrows join texts; 4: a container node's content
        return {"backend": "default", "version": 4}

    def build(self, d: Diagram) -> DiagramGraph:
        s = d.scale or 1.0
        kind = {n.id: n.kind for n in d.nodes}
        # a line between two free-standing texts is not evidence of two components (a pointer
        # from a caption or legend); a block arrow is: a drawn flow symbol, read from its own shape
        edges = [e for e in d.edges
                 if e.style == "block" or not (kind.get(e.source) == "text" and kind.get(e.target) == "text")]
        attached = {e.source for e in edges} | {e.target for e in edges}
        content = container_content(d, attached)
        keep = [n for n in d.nodes
                if (not n.candidate or n.id in attached) and n.label.strip() and n.id not in content]

        def order_key(n: Any) -> tuple[float, float]:
            return (round((n.bbox[1] + n.bbox[3]) / 2 / max(d.text_height(), 1.0)), (n.bbox[0] + n.bbox[2]) / 2)

        keep.sort(key=order_key)
        alias: dict[str, str] = {}
        kept: list[Any] = []
        for n in keep:
            dup = next(
                (k for k in kept
                 if fold_label(k.label) == fold_label(n.label) and _iou(k.bbox, n.bbox) >= self.dup_iou),
                None,
            )
            if dup is not None:
                alias[n.id] = dup.id
            else:
                kept.append(n)
                alias[n.id] = n.id
        new_id = {n.id: f"n{i + 1}" for i, n in enumerate(kept)}
        used_groups: list[str] = []
        for n in kept:
            if n.group and n.group not in used_groups:
                used_groups.append(n.group)
        gmap = {g: f"g{i + 1}" for i, g in enumerate(used_groups)}
        ev_groups = {g.id: g for g in d.groups}
        groups = []
        for gid in used_groups:
            g = ev_groups.get(gid)
            if g is None:
                continue
            groups.append(Group(gmap[gid], g.label, gmap.get(g.parent) if g.parent else None, _scale(g.bbox, s)))
        gids = {g.id for g in groups}
        nodes = [
            Node(
                new_id[n.id],
                n.label,
                n.kind,
                _scale(n.bbox, s),
                gmap.get(n.group) if n.group and gmap.get(n.group) in gids else None,
                round(float(n.confidence), 4),
            )
            for n in kept
        ]
        best: dict[tuple[str, str], Any] = {}
        for e in edges:
            a, b = alias.get(e.source), alias.get(e.target)
            if a is None or b is None or a == b:
                continue
            key = (new_id[a], new_id[b])
            old = best.get(key)
            if old is None or e.confidence > old.confidence:
                label = e.label or (old.label if old else None)
                best[key] = Edge(key[0], key[1], label, e.style, round(float(e.confidence), 4))
            elif e.label and not old.label:
                best[key] = Edge(old.source, old.target, e.label, old.style, old.confidence)
        edges = [best[k] for k in sorted(best, key=lambda k: (int(k[0][1:]), int(k[1][1:])))]
        g = DiagramGraph(
            id=d.item_id,
            nodes=tuple(nodes),
            edges=tuple(edges),
            groups=tuple(groups),
            meta={"parser": "sciflow", "scale": round(s, 6), "free_texts": _free_texts(d, keep, edges)},
        )
        return g


def container_content(d: Diagram, attached: set[str]) -> set[str]:
    """Ids of the nodes that are a container node's content, not components.

    A titled container that an edge attaches to (``attached``: the ids edges join) is a node,
    named by its title; the items drawn inside it, nested at any depth, are its content when
    no arrow touches any of them one by one (the annotation protocol: a card listing
    "search", "math", "llm" under "Tools"). Touching is read from the traced strokes
    (``d.strokes``' contacts), not only from the edges: an item that a stroke joins to another
    node, whose edge was not read (its head missed, say), is still drawn as a component; a
    stroke meeting one node only (an icon drawn in a box) touches nothing. Where any item
    inside is touched, the container is a group of components and every item stays.

    >>> from sciflow.agents.diagram import GroundedNode as N, GroupEvidence as G, Stroke
    >>> d = Diagram(image=np.zeros((1, 1, 3), np.uint8))
    >>> d.nodes = [N("g1", "Tools", (0, 0, 9, 9), "container", 1.0, (), True),
    ...            N("s1", "search", (1, 1, 8, 4), "rect", 1.0, (), group="g1"),
    ...            N("s2", "math", (1, 5, 8, 8), "rect", 1.0, (), group="g1")]
    >>> d.groups = [G("g1", "Tools", (0, 0, 9, 9))]
    >>> sorted(container_content(d, {"g1", "s0"}))
    ['s1', 's2']
    >>> sorted(container_content(d, {"g1", "s2"}))   # an item with its own edge: a group
    []
    >>> sorted(container_content(d, {"s0"}))         # the container is no node: items stay
    []
    >>> d.strokes = [Stroke(0, (), (("s2", 4.0, 8.0, False),), "solid", 1.0, (0, 0, 9, 9))]
    >>> sorted(container_content(d, {"g1", "s0"}))   # ink on one item only: no arrow
    ['s1', 's2']
    >>> d.strokes = [Stroke(0, (), (("s2", 4.0, 8.0, False), ("s9", 4.0, 20.0, False)), "solid", 1.0, (0, 0, 9, 9))]
    >>> sorted(container_content(d, {"g1", "s0"}))   # a stroke joins an item to a node: a group
    []
    """
    # a stroke that meets one target only is no arrow (an icon's ink inside a box, a stub)
    links = [{c[0] for c in st.contacts} for st in d.strokes]
    touched = set(attached).union(*(ids for ids in links if len(ids) >= 2))
    parent = {g.id: g.parent for g in d.groups}

    def holders(n: Any) -> set[str]:
        out: set[str] = set()
        g = n.group
        while g is not None and g not in out:
            out.add(g)
            g = parent.get(g)
        return out

    inside: dict[str, list[str]] = {}
    for n in d.nodes:
        for g in holders(n):
            inside.setdefault(g, []).append(n.id)
    content: set[str] = set()
    for c in d.nodes:
        items = inside.get(c.id, [])
        titled_node = c.kind == "container" and c.label.strip() and c.id in attached
        if titled_node and items and not any(i in touched for i in items):
            content.update(items)
    return content


def _free_texts(d: Diagram, kept_nodes: list[Any], edges: list[Edge]) -> list[str]:
    """Free text labels used by no kept node and no arrow label (module docstring, step 6)."""
    used = {i for n in kept_nodes for i in n.text_ids}
    arrow_labels = {e.label for e in edges if e.label}
    labels = sorted(d.free_text, key=lambda lb: (lb.bbox[1], lb.bbox[0]))
    return [
        lb.text for lb in labels
        if not used & set(lb.line_ids) and lb.text not in arrow_labels and sum(ch.isalnum() for ch in lb.text) >= 2
    ]


def _scale(b: BBox, s: float) -> tuple[float, float, float, float]:
    return tuple(round(v / s, 1) for v in b)  # type: ignore[return-value]


@AGENTS.register("graph_architect")
class GraphArchitect(BackendAgent):
    overlay_legend = (("graph node", overlay.GREEN), ("graph edge", overlay.RED))
    """The Graph Architect agent; sets ``diagram.graph``."""

    backends = BACKENDS
    default_backend = "default"

    def run(self, diagram: Diagram) -> None:
        diagram.graph = self.backend.build(diagram)
        diagram.evidence["graph_architect"] = {
            "nodes": len(diagram.graph.nodes),
            "edges": len(diagram.graph.edges),
        }

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """The graph built, back in working-image pixels: node boxes (green) with id and label,
        and each edge as a red arrow between box centres. Nothing before a graph is built."""
        if diagram.graph is None:
            return
        s = diagram.scale or 1.0
        pos = {}
        for n in diagram.graph.nodes:
            if n.bbox:
                b = [v * s for v in n.bbox]
                overlay.box(canvas, b, overlay.GREEN, 2)
                overlay.text(canvas, f"{n.id}:{n.label}", b[0], b[1] - 2, overlay.BLACK)
                pos[n.id] = b
        for e in diagram.graph.edges:
            a, b = pos.get(e.source), pos.get(e.target)
            if a and b:
                overlay.centre_arrow(canvas, a, b, overlay.RED)
