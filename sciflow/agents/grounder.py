"""Grounder: fuses text lines, shapes and operators into node candidates and groups.

Backend ``rules`` (default), exact behaviour:

1. Each OCR line goes to the innermost shape whose outline contains the line's centre and
   whose bbox holds at least ``inside_frac`` of the line's box.
2. A shape that (directly or through nested shapes) holds a shape with text is a
   *container*: it becomes a :class:`GroupEvidence` and a candidate node of kind
   ``"container"`` (a graph node only when an edge attaches to the container itself). Its
   label is the free text line group nearest its top edge, inside it or straddling the top
   side with its centre inside and at most half its height above (:func:`_title_place`:
   OCR boxes are padded, so a title set just under the line has a box reaching above it),
   that has no other such group in its row (:func:`_same_row`: a row of captions over the
   panel's items names the items).
3. Any other shape with text is a node; its label is all its lines in reading order joined
   by spaces, except on a text card (:func:`~sciflow.agents.card_header.card_header`: a title
   at least ``header_ratio`` x taller than a body of ``header_min_body`` or more lines below
   it), whose label is its title; ``kind`` is the shape kind; confidence = shape confidence x
   min line confidence.
4. Each operator symbol is a node of kind ``"operator"`` labelled with the symbol, unless it
   lies inside a node shape; its outline is the untexted shape that holds nothing but it
   (:func:`operator_box`: a ``⊕`` typed as a box's label), else its circle. A node shape whose
   text is one symbol the OCR misread (:func:`~sciflow.agents.text_filters.symbol_reading`,
   ``⊕`` read as ``④``) around exactly one operator is labelled with the operator's symbol.
5. Lines not inside a node shape are grouped into labels (Text Spotter grouping rules) and
   become candidate nodes of kind ``"text"`` (labels of more than ``max_words`` words are
   captions or paragraphs and are not candidates): the Topology Coder attaches arrows to them; the
   Graph Architect keeps only those an edge touches (others are titles, captions, edge
   labels). With a Layout Detector (``diagram.layout``) and ``layout_nodes``, a free label
   inside a detected ``node`` box (score >= ``layout_min_conf``) that shares with no
   shape-based node more than a third of the smaller box is instead a node of kind ``"detected"`` with that
   box as outline (a node whose border the shape hunter missed: a faint fill, no outline).
6. Labelled icons: see :meth:`RuleGrounder._captioned_icons` (ids ``i<k>``).
7. Node ids are ``s<k>`` for shapes, ``o<k>`` for operators, ``t<k>`` for text candidates,
   ``d<k>`` for detected nodes, ``g<k>`` for containers (``k`` from the evidence ids), so they
   are deterministic.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from sciflow.agents import overlay
from sciflow.agents.captions import icon_outline
from sciflow.agents.card_header import card_header
from sciflow.agents.diagram import (
    Diagram,
    GroundedNode,
    GroupEvidence,
    LayoutBox,
    Operator,
    Shape,
    TextBox,
    bbox_area,
    bbox_intersection,
)
from sciflow.agents.layout_evidence import enclosing_node_box
from sciflow.agents.registry import AGENTS, BackendAgent, Registry
from sciflow.agents.text_filters import symbol_reading
from sciflow.agents.text_spotter import group_lines, make_label

log = logging.getLogger(__name__)

BACKENDS = Registry("grounder backend")


def _inside_box(p: tuple[float, float], box: tuple[float, float, float, float]) -> bool:
    return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]


def _contains_point(shape: Shape, x: float, y: float) -> bool:
    poly = np.array(shape.polygon, np.float32).reshape(-1, 1, 2)
    return cv2.pointPolygonTest(poly, (float(x), float(y)), False) >= 0


def operator_box(op: Operator, shapes: list[Shape], operators: list[Operator], texted: set[int]) -> Shape | None:
    """The shape that is operator ``op``'s own box: the smallest shape holding its centre
    that holds no text (``texted``: shapes with text inside, containers), no other shape and
    no other operator. A symbol such as ``⊕`` typed as a box's label is drawn small inside
    it; the arrows end on the box, not on the symbol's circle. ``None`` when there is none.

    >>> from sciflow.agents.diagram import Operator, Shape
    >>> sq = lambda i, b, parent=None: Shape(i, "rect", b, ((b[0], b[1]), (b[2], b[1]), (b[2], b[3]), (b[0], b[3])),
    ...                                     (255, 255, 255), 0.9, (b[2] - b[0]) * (b[3] - b[1]), parent)
    >>> op = Operator("⊕", (50.0, 30.0), 7.0, 1.0)
    >>> operator_box(op, [sq(0, (0, 0, 100, 60))], [op], set()).id
    0
    >>> operator_box(op, [sq(0, (0, 0, 100, 60)), sq(1, (70, 10, 90, 50), 0)], [op], set()) is None
    True
    >>> operator_box(op, [sq(0, (0, 0, 100, 60))], [op], {0}) is None
    True
    """
    cx, cy = op.center
    best: Shape | None = None
    for s in shapes:
        if s.id in texted or s.kind == "image" or not _contains_point(s, cx, cy):
            continue
        if any(o is not op and _contains_point(s, *o.center) for o in operators):
            continue
        if any(t.parent == s.id for t in shapes):
            continue
        if best is None or s.area < best.area:
            best = s
    return best


@BACKENDS.register("rules")
class RuleGrounder:
    """The rule-based grounding described in the module docstring."""

    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)
        self.inside_frac = float(self.params.get("inside_frac", 0.6))
        self.line_gap = float(self.params.get("line_gap", 0.6))
        self.word_gap = float(self.params.get("word_gap", 0.5))
        self.max_words = int(self.params.get("max_words", 12))
        self.layout_nodes = bool(self.params.get("layout_nodes", True))
        self.layout_min_conf = float(self.params.get("layout_min_conf", 0.5))
        self.header_ratio = float(self.params.get("header_ratio", 1.35))
        self.header_min_body = int(self.params.get("header_min_body", 3))

    def fingerprint(self) -> dict[str, Any]:
        # 2: titles reaching above the frame; 3: an operator in a box of its own takes the box,
        # a one-symbol misreading around an operator is its symbol; 4: a text card is named by
        # its title, a container's title stands alone in its row; 5: a captioned icon is
        # outlined by its pictures' box and its caption's, not the box round both
        return {"backend": "rules", "version": 5}

    def _captioned_icons(
        self,
        diagram: Diagram,
        labels: list[Any],
        lines_in: dict[int, list[TextBox]],
        texted_desc: set[int],
        by_id: dict[int, TextBox],
        titles: set[int] = frozenset(),  # type: ignore[assignment]
    ) -> tuple[list[Any], list[GroundedNode]]:
        """A free label of at most ``max_words`` words directly below (gap <= 1.2 th) or
        above an untexted, non-container shape that overlaps it horizontally (>= 50 % of the
        narrower) names that icon, together with untexted shapes stacked on it (gaps <=
        0.8 th). The icon becomes a candidate node of kind ``"icon"`` labelled by the caption,
        outlined by its pictures' box and the caption's (:func:`icon_outline`);
        the caption is no longer free text. A container's title names the container, never
        an icon, and an icon's caption lies inside the same containers as the icon (a region
        that lines and container borders enclose between two containers is not an icon)."""
        th = diagram.text_height()
        bare = [
            s for s in diagram.shapes if s.id not in lines_in and s.id not in texted_desc and s.area >= (0.8 * th) ** 2
        ]
        # shapes nested in a bare shape belong to it
        bare_ids = {s.id for s in bare}
        bare = [s for s in bare if s.parent is None or s.parent not in bare_ids]
        used: set[int] = set()
        keep: list[Any] = []
        icons: list[GroundedNode] = []
        shapes = {s.id: s for s in diagram.shapes}
        conts = [s for s in diagram.shapes if s.id in texted_desc]

        def holders(b: tuple[float, ...]) -> frozenset[int]:
            cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
            return frozenset(c.id for c in conts if _contains_point(shapes[c.id], cx, cy))

        for lb in labels:
            if len(lb.text.split()) > self.max_words or lb.id in titles:
                keep.append(lb)
                continue
            best, best_gap = None, 1.2 * th
            lb_in = holders(lb.bbox)
            for s in bare:
                if s.id in used or _xoverlap(s.bbox, lb.bbox) < 0.5 or holders(s.bbox) != lb_in:
                    continue
                gap = min(abs(lb.bbox[1] - s.bbox[3]), abs(s.bbox[1] - lb.bbox[3]))
                if (lb.bbox[1] >= s.bbox[3] - 2 or s.bbox[1] >= lb.bbox[3] - 2) and gap <= best_gap:
                    best, best_gap = s, gap
            if best is None:
                keep.append(lb)
                continue
            group = [best]
            grew = True
            while grew:
                grew = False
                for s in bare:
                    if s in group or s.id in used:
                        continue
                    if any(
                        _xoverlap(s.bbox, g.bbox) >= 0.5
                        and min(abs(s.bbox[1] - g.bbox[3]), abs(g.bbox[1] - s.bbox[3])) <= 0.8 * th
                        for g in group
                    ):
                        group.append(s)
                        grew = True
            used.update(s.id for s in group)
            x0 = min([s.bbox[0] for s in group] + [lb.bbox[0]])
            y0 = min([s.bbox[1] for s in group] + [lb.bbox[1]])
            x1 = max([s.bbox[2] for s in group] + [lb.bbox[2]])
            y1 = max([s.bbox[3] for s in group] + [lb.bbox[3]])
            members = [by_id[i] for i in lb.line_ids]
            lab = make_label(lb.id, members)
            box = (min(g.bbox[0] for g in group), min(g.bbox[1] for g in group),
                   max(g.bbox[2] for g in group), max(g.bbox[3] for g in group))
            icons.append(
                GroundedNode(
                    id=f"i{lb.id}",
                    label=lab.text,
                    bbox=(x0, y0, x1, y1),
                    kind="icon",
                    confidence=float(lab.confidence * min(s.confidence for s in group)),
                    polygon=icon_outline(box, lb.bbox),
                    candidate=True,
                    shape_id=best.id,
                    text_ids=lab.line_ids,
                )
            )
        return keep, icons

    def _detected_node(
        self, diagram: Diagram, label_box: tuple[float, float, float, float], nodes: list[GroundedNode]
    ) -> LayoutBox | None:
        """The Layout Detector's node box around a free label, when the shape hunter found no
        shape there: a box holding the label that shares with no shape-based node more than a
        third of the smaller of the two. ``None`` without a detector or with ``layout_nodes = false``."""
        if not (self.layout_nodes and diagram.layout):
            return None
        box = enclosing_node_box(diagram.layout, label_box, min_conf=self.layout_min_conf)
        if box is None:
            return None
        area = bbox_area(box.bbox)
        for n in nodes:
            small = min(area, bbox_area(n.bbox))
            if n.kind not in ("text", "container") and bbox_intersection(n.bbox, box.bbox) > small / 3:
                return None
        return box

    def ground(self, diagram: Diagram) -> None:
        shapes = {s.id: s for s in diagram.shapes}
        lines_in: dict[int, list[TextBox]] = {}
        free: list[TextBox] = []
        for t in diagram.text_lines:
            cx, cy = (t.bbox[0] + t.bbox[2]) / 2, (t.bbox[1] + t.bbox[3]) / 2
            area = max((t.bbox[2] - t.bbox[0]) * (t.bbox[3] - t.bbox[1]), 1e-9)
            best: Shape | None = None
            for s in shapes.values():
                if bbox_intersection(t.bbox, s.bbox) / area < self.inside_frac:
                    continue
                if not _contains_point(s, cx, cy):
                    continue
                if best is None or s.area < best.area:
                    best = s
            if best is None:
                free.append(t)
            else:
                lines_in.setdefault(best.id, []).append(t)
        # containers: shapes with a texted descendant
        texted_desc: set[int] = set()
        for sid in lines_in:
            p = shapes[sid].parent
            while p is not None:
                texted_desc.add(p)
                p = shapes[p].parent
        nodes: list[GroundedNode] = []
        groups: list[GroupEvidence] = []
        node_shape_ids: set[int] = set()
        for s in diagram.shapes:
            if s.id in texted_desc:
                continue
            if s.id in lines_in:
                lab = make_label(0, lines_in[s.id])
                node_shape_ids.add(s.id)
                title = card_header(lines_in[s.id], ratio=self.header_ratio, min_body=self.header_min_body)
                text = make_label(0, title).text if title else lab.text
                if symbol_reading(text):  # a drawn operator the OCR misread as another glyph
                    inside = [o for o in diagram.operators if _inside_box(o.center, lab.bbox)]
                    text = inside[0].symbol if len(inside) == 1 else text
                nodes.append(
                    GroundedNode(
                        id=f"s{s.id}",
                        label=text,
                        bbox=s.bbox,
                        kind=s.kind,
                        confidence=float(s.confidence * lab.confidence),
                        polygon=s.polygon,
                        shape_id=s.id,
                        text_ids=lab.line_ids,
                    )
                )
        # lines inside containers (not in a node) are free text too
        for sid, ls in lines_in.items():
            if sid in texted_desc:
                free.extend(ls)
        free.sort(key=lambda t: t.id)
        labels = group_lines(free, line_gap=self.line_gap, word_gap=self.word_gap, image=diagram.image)
        by_id = {t.id: t for t in diagram.text_lines}
        titles: set[int] = set()
        for s in diagram.shapes:
            if s.id not in texted_desc:
                continue
            placed = [lb for lb in labels if _title_place(lb.bbox, s.bbox)]
            own = [lb for lb in placed if not any(_same_row(lb.bbox, o.bbox) for o in placed if o is not lb)]
            title = min(own, key=lambda lb: lb.bbox[1] - s.bbox[1]) if own else None
            if title is not None:
                titles.add(title.id)
            parent = s.parent
            while parent is not None and parent not in texted_desc:
                parent = shapes[parent].parent
            groups.append(
                GroupEvidence(
                    id=f"g{s.id}",
                    label=title.text if title else None,
                    bbox=s.bbox,
                    parent=f"g{parent}" if parent is not None else None,
                )
            )
            nodes.append(
                GroundedNode(
                    id=f"g{s.id}",
                    label=title.text if title else "",
                    bbox=s.bbox,
                    kind="container",
                    confidence=float(s.confidence),
                    polygon=s.polygon,
                    candidate=True,
                    shape_id=s.id,
                    text_ids=title.line_ids if title else (),
                )
            )
        # labelled icons: untexted shapes stacked directly above (or below) a free label
        labels, icons = self._captioned_icons(diagram, labels, lines_in, texted_desc, by_id, titles)
        nodes.extend(icons)
        for k, op in enumerate(diagram.operators):
            cx, cy = op.center
            if any(_contains_point(shapes[sid], cx, cy) for sid in node_shape_ids):
                continue
            r = op.radius
            poly = tuple(
                (float(cx + r * np.cos(a)), float(cy + r * np.sin(a)))
                for a in np.linspace(0, 2 * np.pi, 24, endpoint=False)
            )
            bbox = op.bbox
            box = operator_box(op, diagram.shapes, diagram.operators, set(lines_in) | texted_desc)
            if box is not None:  # the symbol typed in a box of its own: the box is its outline
                poly, bbox = box.polygon, box.bbox
            nodes.append(
                GroundedNode(
                    id=f"o{k}",
                    label=op.symbol,
                    bbox=bbox,
                    kind="operator",
                    confidence=float(op.confidence),
                    polygon=poly,
                    shape_id=box.id if box is not None else None,
                )
            )
        for lb in labels:
            if len(lb.text.split()) > self.max_words:
                continue  # a caption or paragraph, not an input/output name
            members = [by_id[i] for i in lb.line_ids]
            lab = make_label(lb.id, members)
            # a free label inside a detected node box is that node; otherwise a candidate
            detected = self._detected_node(diagram, lab.bbox, nodes)
            box = detected.bbox if detected is not None else lab.bbox
            nodes.append(
                GroundedNode(
                    id=f"{'t' if detected is None else 'd'}{lb.id}",
                    label=lab.text,
                    bbox=box,
                    kind="text" if detected is None else "detected",
                    confidence=float(lab.confidence * (1.0 if detected is None else detected.confidence)),
                    polygon=_rect(box),
                    candidate=detected is None,
                    text_ids=lab.line_ids,
                )
            )
        # group membership: innermost container holding the node's centre
        group_of: dict[str, str] = {}
        conts = sorted((n for n in nodes if n.kind == "container"), key=lambda n: _area(n.bbox))
        for n in nodes:
            cx, cy = (n.bbox[0] + n.bbox[2]) / 2, (n.bbox[1] + n.bbox[3]) / 2
            for c in conts:
                if c.id != n.id and _inside(n.bbox, c.bbox) and _contains_point(shapes[c.shape_id], cx, cy):
                    group_of[n.id] = c.id
                    break
        diagram.nodes = [
            GroundedNode(
                n.id,
                n.label,
                n.bbox,
                n.kind,
                n.confidence,
                n.polygon,
                n.candidate,
                n.shape_id,
                n.text_ids,
                group_of.get(n.id),
            )
            for n in nodes
        ]
        diagram.groups = groups
        diagram.free_text = labels


def _rect(b: tuple[float, float, float, float]) -> tuple[tuple[float, float], ...]:
    x0, y0, x1, y1 = b
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _xoverlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Horizontal overlap as a fraction of the narrower box."""
    ov = min(a[2], b[2]) - max(a[0], b[0])
    return ov / max(min(a[2] - a[0], b[2] - b[0]), 1e-9)


def _inside(a: tuple[float, ...], b: tuple[float, ...], tol: float = 2.0) -> bool:
    return a[0] >= b[0] - tol and a[1] >= b[1] - tol and a[2] <= b[2] + tol and a[3] <= b[3] + tol


def _title_place(label: tuple[float, ...], frame: tuple[float, ...], tol: float = 2.0) -> bool:
    """Whether a label at ``label`` can title the container ``frame``: inside it, or
    straddling its top side (a title drawn on the frame line, or an OCR box padded above a
    title set just under it) with its centre inside and at most half its height above.

    >>> _title_place((10, 5, 50, 25), (0, 10, 100, 100)), _title_place((10, -5, 50, 15), (0, 10, 100, 100))
    (True, False)
    """
    if _inside(label, frame, tol):
        return True
    h = label[3] - label[1]
    cy = (label[1] + label[3]) / 2
    return (
        label[0] >= frame[0] - tol
        and label[2] <= frame[2] + tol
        and label[3] <= frame[3] + tol
        and label[1] >= frame[1] - 0.5 * h
        and frame[1] < cy
    )


def _same_row(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    """Whether two labels share a row: their vertical extents overlap by more than half the
    smaller height. A heading stands alone in its row; a row of texts (the captions over a
    panel's items) names the items, not the panel.

    >>> _same_row((0, 0, 40, 20), (60, 5, 90, 25)), _same_row((0, 0, 40, 20), (0, 30, 40, 50))
    (True, False)
    """
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    return overlap > 0.5 * min(a[3] - a[1], b[3] - b[1])


def _area(b: tuple[float, ...]) -> float:
    return (b[2] - b[0]) * (b[3] - b[1])


@AGENTS.register("grounder")
class Grounder(BackendAgent):
    overlay_legend = (("node", overlay.GREEN), ("candidate (free text, icon, container)", overlay.GREY))
    """The Grounder agent; fills ``diagram.nodes``, ``diagram.groups``, ``diagram.free_text``."""

    backends = BACKENDS
    default_backend = "rules"

    def run(self, diagram: Diagram) -> None:
        self.backend.ground(diagram)
        diagram.evidence["grounder"] = {
            "nodes": [(n.id, n.label, n.kind, n.candidate) for n in diagram.nodes],
            "groups": [(g.id, g.label) for g in diagram.groups],
        }

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """Each node box (green; grey for a mere candidate) with its id and label."""
        for n in diagram.nodes:
            color = overlay.GREY if n.candidate else overlay.GREEN
            overlay.box(canvas, n.bbox, color, 2)
            overlay.text(canvas, f"{n.id}:{n.label}", n.bbox[0], n.bbox[1] - 2, overlay.BLACK)
