"""Topology Coder: traces connectors between node candidates and reads their direction.

Backend ``strokes`` (default), exact behaviour (``th`` = median OCR line height):

1. *Ink* is every pixel whose max channel difference from the local background (the
   global background, or a container's fill inside that container) exceeds
   ``ink_threshold``. Node outlines (grown by ``node_pad`` px), every OCR line box and every
   container outline band are masked out; what remains are connector strokes. A band is
   ``2 node_pad + 3`` px wide, or, over an outline more than 2 px thick, ``2 ceil(r) + 2
   node_pad + 1`` where its ink reaches ``r`` px from the polygon (medians over points along
   it, :func:`~.masks.outline_reach`), so no fringe of a thick frame is left as a stroke. Acute
   polygon corners that the contour simplification cut off (a short edge between two
   edges converging at < 75 degrees within ``th``) are restored to their apex first, so
   a diamond's outline tip is masked with the node.
2. Strokes are the 8-connected ink components of at least 2 px. Pieces are joined into one
   connector when (a) a skeleton end's tangent runs into another piece within
   ``g = max(dash_gap_min, dash_gap * th)`` px, or (b) two skeleton ends closer than ``g``
   point at each other (within 45 degrees; dots need no tangent). A connector of three or
   more joined pieces is ``dashed`` (pieces at least 2 x stroke width long) or ``dotted``.
3. A *contact* is a cluster of stroke pixels within ``max(4, contact * th)`` px of a node
   candidate (the nearest one wins). A contact whose stroke continues on two opposite sides
   (a ring of radius ``1.2 th`` around it meets the stroke in two arcs more than 100 degrees
   apart) is a stroke passing by and is dropped. Two contacts of different pieces on the
   same container band within the band width plus two contact radii, one piece leaving the
   outline into the container and the other out of it, are one stroke crossing the outline
   (joined, contacts dropped; two arrows ending side by side on one side stay two); two
   contacts on the same free text whose strokes leave in opposite directions along the
   line joining them are one stroke passing under the text (joined, dropped). The same
   holds for an *inline label box* (a drawn box holding one text line tightly: at most 1.8
   line heights tall, at most ``2 th`` wider than the line, with no outline of its own) when
   neither contact carries a head; a bend just outside the label is allowed for it
   (contacts on opposite sides, both strokes leaving away from the box).
   A label box whose every contact was bridged becomes free text (and so the connector's
   label in step 6). A remaining end on a titled container's outline whose piece leaves it
   outward stays on the container (an arrow to the container), unless a node inside lies at
   the frame there or another stroke touches a node inside within ``2.5 th`` straight on
   from the piece (the stroke goes on to it); a piece leaving the outline inward (a panel's
   port) goes to a node inside only where one lies at the frame there, else it is dropped; an
   end on an untitled container goes to the node inside nearest to it (within ``2.5 th``),
   else is dropped; where the outline does not tell the piece's direction, the nearest node
   inside within ``2.5 th``, else a titled container, takes the end
   (:func:`~.frames.retarget_container_ends`). A connector that lost an end so (*ported*)
   counts it among its ends below: a free-text contact beside a node's is a label as on three
   ends, its weakest head is not its tail, and when every remaining contact reads as a head
   it gives no edge (its tail was the dropped end: a port's line forking to two boxes). A
   connector end that stops short of everything is followed along its tangent for
   ``extend * th`` px and attached to the first candidate it reaches. A container
   contact within ``1.5 R`` of a contact on a drawn node is dropped (a frame the stroke
   passes just before it reaches the node), and so, on connectors with 3+ contacts, is a
   free-text one (a label beside the node; on two contacts it is a short arrow's tail).
   Strokes crossing a container outline at a shallow angle are joined too: two contacts on
   the same band up to ``4 th`` apart whose pieces leave in opposite directions along the
   line joining them (within 30 degrees).
4. Arrowhead at a contact: among the connector's pixels (plus small loose pieces, e.g. the
   wings of a head whose tip was masked) within ``R = max(6, head * th)`` px of the contact
   (at most 0.45 x the distance to the connector's nearest other contact), the spread
   across the stroke direction is at least ``max(2.5 w, w + 3)`` and the ink area at least
   ``1.15 w R`` or 1.25 x the ink of the next ``R`` px of the stroke (thin diagonal lines),
   and the spread reaches both sides of the head's axis (each side >= 25 %; a polyline
   corner near the node spreads to one side only; such a one-sided window of 12 px or
   more is tested again within ``R / 2``, where a head just before the corner shows)
   (``w``: the length-weighted median stroke width, from the distance transform on the
   skeleton); this holds for filled, open and chevron heads. The area bound uses
   ``min(R, L + 1)`` for ``R`` where ``L`` is the farthest window pixel (a stroke cut short by
   an edge label's mask). A contact on a shape without such a head is looked at again on
   the unmasked ink within ``R`` outside the node's interior (polygon eroded by ``w + 2``):
   at least ``2 k^2`` px surviving an opening with a ``k = w + 2`` square is a filled head
   that landed on the outline at a shallow angle (skipped for dark-filled nodes). With a
   Layout Detector (``diagram.layout``), a detected ``arrowhead`` (score >=
   ``layout_min_conf``) whose box, grown by ``R / 2``, holds the contact makes it a head;
   ``layout_veto_margin`` > 0 also drops a geometric head that passed its test by less than
   that margin with no detection near it. The hidden-head area is measured again at the two
   points of the node's outline ``2 R`` away on either side and the smaller is subtracted (a
   thick outline survives the opening too). A two-contact connector with no head at either
   end after all this is split in thirds: when one outer third spreads across the line joining
   the contacts at least ``max(2 w, w + 3)`` and 1.6 x the other, which stays under
   ``max(2.5 w, w + 3)``, that end is the head (a short arrow whose head sits under the outline mask).
   When both ends spread alike (within 1.5 x) at least ``max(2 s, s + 3)`` over a straight
   shaft ``s`` wide (the middle third's spread), every third centred on the line joining the
   contacts and each end narrowing to its contact, both ends are heads (a short
   double-headed arrow, also where the window test found one of them).
   On a connector of three or more contacts that all read as heads, the one contact on a
   drawn node where the connector branches (a ring of ``1.25 R`` around it is crossed by two
   or more arcs of the connector, every other contact's by at most one; or, where lines leave
   one port side by side, its one arc on that ring is at least ``max(1.8 w, w + 2.5)`` long
   and a ring twice as wide is crossed in two or more) is its tail
   (:func:`~sciflow.agents.topology_coder.fans.fan_tail`: lines fanning out of one point);
   a bundle's branching is decided before the weakest head is taken for the tail, a branching
   on the inner ring after it (on a bus a dashed frame's crossing branches there too), and a
   contact on a container is never the tail.
5. Edges per connector: on a connector with 3+ contacts, some with and some without a
   head, each tail gets an edge to every head its path reaches along the connector's
   skeleton (see :func:`~sciflow.agents.topology_coder.reach.reachability`: straight on
   through crossings, any turn at merges and splits). Otherwise, with tails T and heads H:
   one tail -> an edge to every head (fan-out); one head -> an edge from every tail (fan-in); several of
   both -> each head pairs with the tail best aligned with the stroke direction leaving that
   head; no tail and two heads -> two edges (double-headed) when their spreads
   differ by at most 1.5x, else the wider one is the only head; no head -> an edge only when
   one end is an operator that already has an outgoing (resp. incoming) headed edge, in
   which case the line flows into (resp. out of) the operator; otherwise nothing.
5b. Block arrows (:mod:`.blocks`): an ink piece whose silhouette reads as an arrow (a
   shaft at least ``max(6, 0.3 th)`` px wide, a wider head narrowing to a tip) is taken
   out before step 2 joins pieces (its wide tail would read as a head, and a bridge through
   a free-text label between two stacked block arrows would make one double-headed
   connector), unless it is filled and a piece as thick as its shaft lies behind its tail
   (a thick dashed line's last dash with its head); such pieces, and one-piece connectors
   that gave no edge, are tested again after tracing. An outline must be closed (no long
   skeleton branch hangs off it except where a mask cut it open at its tail or tip). A block
   arrow joins the node a ray from its tail meets to the node a ray from its tip meets, each
   within ``block_reach`` (3) text heights or the arrow's length.
6. Edge confidence = ``0.6 + 0.4 x`` the head's evidence margin, times 0.9 for dashed or
   dotted connectors. Free text labels that are not edge ends and lie within
   ``label_dist * th`` of exactly one connector with exactly one edge become its label. Hyphens at
   either end of such a label (the line read as glyphs) are stripped.

Each step is a module of plain functions (:mod:`.masks` 1, :mod:`.components` and
:mod:`.dashes` 2, :mod:`.attach`, :mod:`.frames` and :mod:`.underpass` 3, :mod:`.heads` 4,
:mod:`.edges` and :mod:`.reach` 5, :mod:`.blocks` 5b, :mod:`.labels` 6); :mod:`.strokes`
runs them in order.
"""

from __future__ import annotations

import cv2
import numpy as np

from sciflow.agents.diagram import Diagram
from sciflow.agents.overlay import BLUE, GREEN, ORANGE, PURPLE, RED, centre_arrow
from sciflow.agents.registry import AGENTS, BackendAgent, Registry
from sciflow.agents.topology_coder.strokes import StrokeTopology

__all__ = ["BACKENDS", "StrokeTopology", "TopologyCoder"]

BACKENDS = Registry("topology_coder backend")
BACKENDS.add("strokes", StrokeTopology)


@AGENTS.register("topology_coder")
class TopologyCoder(BackendAgent):
    """The Topology Coder agent; fills ``diagram.strokes`` and ``diagram.edges``."""

    overlay_legend = (
        ("contact with a head", RED),
        ("contact without a head", BLUE),
        ("gap bridged (dash, frame crossing, label)", GREEN),
        ("block arrow", PURPLE),
        ("edge", ORANGE),
    )

    backends = BACKENDS
    default_backend = "strokes"

    def run(self, diagram: Diagram) -> None:
        self.backend.trace(diagram)
        ev = diagram.evidence.setdefault("topology_coder", {})
        ev["strokes"] = len(diagram.strokes)
        ev["edges"] = [(e.source, e.target, e.style, e.label) for e in diagram.edges]

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """Contacts as dots (red: with a head, blue: without), every gap the tracer bridged
        (dash gaps, frame crossings, lines through labels) as a green line, every block arrow
        read as a purple arrow from its tail to its tip, and each edge as an orange arrow
        between its nodes' box centres."""
        ev = diagram.evidence.get("topology_coder", {})
        for x0, y0, x1, y1 in ev.get("bridges", []):
            cv2.line(canvas, (int(x0), int(y0)), (int(x1), int(y1)), GREEN, 3)
        for x0, y0, x1, y1 in ev.get("block_arrows", []):
            cv2.arrowedLine(canvas, (int(x0), int(y0)), (int(x1), int(y1)), PURPLE, 3, tipLength=0.3)
        for s in diagram.strokes:
            for _nid, x, y, head in s.contacts:
                cv2.circle(canvas, (int(x), int(y)), 4, RED if head else BLUE, -1)
        pos = {n.id: n.bbox for n in diagram.nodes}
        for e in diagram.edges:
            a, b = pos.get(e.source), pos.get(e.target)
            if a and b:
                centre_arrow(canvas, a, b, ORANGE)
