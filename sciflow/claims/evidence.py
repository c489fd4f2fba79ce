"""Pixel regions of the evidence: node boxes and arrow polylines, in input-image pixels.

An image is parsed by :func:`parse_with_regions`, which runs the project's parser
(:class:`sciflow.pipeline.Parser`) and keeps, besides the graph, each graph edge's traced
connector polylines (:class:`sciflow.agents.diagram.Stroke`, divided by the working scale like
the graph's boxes). A graph file has no pixels, unless it is a saved parse whose nodes carry
boxes (then: boxes, no polylines). :class:`Regions` says which, in one sentence.

>>> from sciflow.format.graph import DiagramGraph
>>> Regions.from_graph(DiagramGraph.from_dict({"id": "g", "nodes": [{"id": "a", "label": "A"}], "edges": []})).note
'the input is a graph without pixel positions: no pixel regions'
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from sciflow.format.graph import DiagramGraph

log = logging.getLogger(__name__)

Polyline = tuple[tuple[float, float], ...]


@dataclass(frozen=True)
class Regions:
    """``boxes``: node id -> ``[x0, y0, x1, y1]``; ``polylines``: ``(source, target)`` -> the
    connector polylines drawn for that arrow; ``note``: what the input gives, in one sentence."""

    boxes: dict[str, tuple[float, float, float, float]] = field(default_factory=dict)
    polylines: dict[tuple[str, str], tuple[Polyline, ...]] = field(default_factory=dict)
    note: str = ""

    @property
    def pixels(self) -> bool:
        return bool(self.boxes)

    @classmethod
    def from_graph(cls, graph: DiagramGraph) -> Regions:
        boxes = {n.id: n.bbox for n in graph.nodes if n.bbox is not None}
        if not boxes:
            return cls(note="the input is a graph without pixel positions: no pixel regions")
        return cls(boxes=boxes, note="node boxes from the graph file; arrow polylines are not stored in graphs")

    def of(self, nodes: tuple[str, ...], edges: tuple[tuple[str, str], ...], graph: DiagramGraph,
           absent: tuple[tuple[str, str], ...] = ()) -> list[dict]:
        """The regions of the evidence: one ``node`` region per node with a box, one ``edge``
        region per arrow (its polylines, and the union of its end boxes), one ``absent_edge``
        region (the union of the end boxes) per arrow looked for and not found."""
        label = {n.id: n.label for n in graph.nodes}
        out: list[dict[str, Any]] = []
        for n in nodes:
            if n in self.boxes:
                out.append({"kind": "node", "id": n, "label": label.get(n), "bbox": list(self.boxes[n])})
        for kind, pairs in (("edge", edges), ("absent_edge", absent)):
            for u, v in pairs:
                ends = [self.boxes[x] for x in (u, v) if x in self.boxes]
                if not ends:
                    continue
                box = [min(b[0] for b in ends), min(b[1] for b in ends), max(b[2] for b in ends),
                       max(b[3] for b in ends)]
                region: dict[str, Any] = {"kind": kind, "source": u, "target": v, "bbox": box}
                if kind == "edge":
                    region["polylines"] = [[list(p) for p in line] for line in self.polylines.get((u, v), ())]
                out.append(region)
        return out


class _Capture:
    """A last pipeline step that keeps the :class:`~sciflow.agents.diagram.Diagram` it is handed."""

    backend_name = "claims-capture"

    def __init__(self) -> None:
        self.diagram: Any = None

    def run(self, diagram: Any) -> None:
        self.diagram = diagram


def _iou(a: Any, b: Any) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def regions_of_diagram(diagram: Any, graph: DiagramGraph) -> Regions:
    """Boxes of ``graph``'s nodes and, per graph edge, the polylines of the connectors the
    Topology Coder traced for it (a grounded node stands for the graph node with the same
    label whose box overlaps it most, IoU >= 0.3, the Graph Architect's duplicate rule)."""
    s = diagram.scale or 1.0
    boxes = {n.id: n.bbox for n in graph.nodes if n.bbox is not None}
    alias: dict[str, str] = {}
    for gn in diagram.nodes:
        box = tuple(v / s for v in gn.bbox)
        best = max(((_iou(box, n.bbox), n.id) for n in graph.nodes
                    if n.bbox is not None and " ".join(n.label.lower().split()) == " ".join(gn.label.lower().split())),
                   default=(0.0, None))
        if best[1] is not None and best[0] >= 0.3:
            alias[gn.id] = best[1]
    strokes = {st.id: st for st in diagram.strokes}
    lines: dict[tuple[str, str], list[Polyline]] = {}
    for e in diagram.edges:
        a, b = alias.get(e.source), alias.get(e.target)
        st = strokes.get(e.stroke_id) if e.stroke_id is not None else None
        if a is None or b is None or st is None:
            continue
        line = tuple((round(x / s, 1), round(y / s, 1)) for x, y in st.polyline)
        if line not in lines.setdefault((a, b), []):
            lines[(a, b)].append(line)
    return Regions(boxes=boxes, polylines={k: tuple(v) for k, v in lines.items()},
                   note="node boxes and arrow polylines of the parse, in input-image pixels")


def parse_with_regions(image: Any, config: Any = None, parser: Any = None) -> tuple[DiagramGraph, Regions]:
    """Parse ``image`` (a path or an array) and return the graph and its :class:`Regions`.

    ``parser``: a :class:`sciflow.pipeline.Parser` to reuse (models load once); it is left
    as it was."""
    from sciflow.pipeline import Parser

    parser = parser or Parser(config)
    capture = _Capture()
    parser.agents["claims_capture"] = capture
    try:
        result = parser(image)
    finally:
        parser.agents.pop("claims_capture", None)
    return result.graph, regions_of_diagram(capture.diagram, result.graph)
