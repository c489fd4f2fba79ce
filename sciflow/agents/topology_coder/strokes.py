"""The ``strokes`` backend: the steps of the package docstring, in order.

:class:`StrokeTopology` holds the parameters and runs the steps, each a plain function of
its own module: masks (:mod:`.masks`), pieces (:mod:`.components`), dash bridging
(:mod:`.dashes`), contacts and attachment (:mod:`.attach`), container borders
(:mod:`.frames`), strokes under free text (:mod:`.underpass`), arrowheads (:mod:`.heads`),
edges (:mod:`.edges`, :mod:`.reach`) and edge labels (:mod:`.labels`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import Diagram, EdgeEvidence, GroundedNode, Stroke
from sciflow.agents.topology_coder.attach import (
    Contact,
    extend_dangling,
    find_contacts,
    merge_same_target,
    nearest_targets,
    passes_text,
    shapes_win,
)
from sciflow.agents.topology_coder.blocks import block_edges, block_pieces, continues_behind
from sciflow.agents.topology_coder.components import Comp, ink_components, union_find
from sciflow.agents.topology_coder.dashes import bridge_dashes
from sciflow.agents.topology_coder.edges import connector_edges, plain_to_operators
from sciflow.agents.topology_coder.fans import fan_tail
from sciflow.agents.topology_coder.frames import bridge_beside_text, bridge_containers, retarget_container_ends
from sciflow.agents.topology_coder.heads import (
    arrowhead,
    compare_ends,
    detected_head,
    double_heads,
    hidden_head,
    loose_pieces,
)
from sciflow.agents.topology_coder.labels import edge_labels
from sciflow.agents.topology_coder.masks import stroke_masks
from sciflow.agents.topology_coder.reach import reachability
from sciflow.agents.topology_coder.solid_heads import solid_ends
from sciflow.agents.topology_coder.underpass import bridge_grazes, bridge_text

log = logging.getLogger(__name__)


class StrokeTopology:
    """The stroke-tracing topology of the package docstring."""

    def __init__(self, params: Mapping[str, Any]):
        p = dict(params)
        self.params = p
        self.ink_threshold = int(p.get("ink_threshold", 60))
        self.node_pad = int(p.get("node_pad", 1))
        self.text_pad = int(p.get("text_pad", 1))
        self.contact = float(p.get("contact", 0.45))
        self.head = float(p.get("head", 0.9))
        self.dash_gap = float(p.get("dash_gap", 0.6))
        self.dash_gap_min = float(p.get("dash_gap_min", 6))
        self.label_dist = float(p.get("label_dist", 1.5))
        self.extend = float(p.get("extend", 1.5))
        self.layout_min_conf = float(p.get("layout_min_conf", 0.5))
        self.layout_veto_margin = float(p.get("layout_veto_margin", 0.0))
        self.block_reach = float(p.get("block_reach", 3.0))

    def fingerprint(self) -> dict[str, Any]:
        # 2: dashed/rounded frames, inline label boxes, outline-corrected hidden heads (issue 17);
        # 3: shallow frame crossings, grazes, seen heads over inferred ones, weakest head as tail;
        # 4: frame dash remnants are no head wings;
        # 5: labels beside a line are no ends, a hidden head is a blob of the stroke's own end;
        # 6: labels along a short line are no ends, lines crossing a text's box stay ink;
        # 7: a line running along a text must go on past both its ends (a brace's hooked end);
        # 8: a stroke crossing a container outline beside a text (title, edge label) passes under it;
        # 9: an arrowhead's wing (a spur of the skeleton) is no dangling end to follow, nor a dash end;
        # a dangling end is not followed into a text or frame its connector passes under;
        # 10: a run of dots goes on in its own direction (onto its head); small heads of thick lines;
        # 11: block arrows (closed arrow shapes between two boxes); the branching contact of an
        # all-heads connector is its tail (a fan out of one point of a box)
        # 12: compare_ends measures the outer thirds on the shaft's own width
        # 13: container bands as wide as their measured outline; a crossing joins pieces on
        # opposite sides of the outline; 14: short double-headed arrows (compare_ends)
        # 15: every piece of a dotted line passing under a text passes; label boxes packed
        # tightly are told from outlined ones by whole lined sides; compare_ends takes a head of
        # twice the shaft's width; 16: filled heads read from the stroke's thickness (solid_ends);
        # two dots lead on to their head; 17: a thick stroke's square end is one line end, thick
        # dashes join across gaps of up to 5 widths, compare_ends tries the outer 45 % too; the
        # branching end of a two-contact connector with two heads is its tail; two three-way
        # junctions a short branch apart are one crossing (strokes crossing at a shallow angle);
        # a stroke through a crossing with a head at each end has its tail at the barely read one
        # 18: lines leaving one port side by side branch on a wider ring (fans.py), and the
        # branching end is found before the weakest head is taken for the tail; 19: a piece's
        # second contact beside its joined frame crossing (a title the line is drawn over) goes too
        # 20: the head probe at an inline label's contact stops short of the piece's other end;
        # 21: only a bundle's branching is decided before the weakest head, the rest after it
        # as before; a contact on a container is never a fan's tail
        # 22: a head whose window reaches round the line's corner is tested in half the window
        # 23: block arrows are taken out before pieces are joined (no bridge, no contacts),
        # except a thick dashed line's last dash with its head
        # 24: an end on a titled container's outline stays there unless a node inside lies at
        # the frame or a stroke goes on to it; a piece leaving the outline inward is no end of it
        return {"backend": "strokes", "version": 24}

    def trace(self, d: Diagram) -> None:
        """Fill ``d.strokes`` and ``d.edges``."""
        th = d.text_height()
        ink, tmap, band, targets, raw, band_w = stroke_masks(d, self.ink_threshold, self.node_pad, self.text_pad)
        # a few px around every container outline: the leftovers of a frame's dashes
        k = 2 * (self.node_pad + 3) + 1
        near_frame = cv2.dilate((band > 0).astype(np.uint8), np.ones((k, k), np.uint8)) > 0
        labels, comps = ink_components(ink)
        # step 5b's block arrows are no strokes: out before any piece is joined or attached (but
        # a thick dashed line's last dash with its head has the same silhouette)
        blocks = block_pieces(comps, th) if self.block_reach > 0 else {}
        blocks = {i: a for i, a in blocks.items() if not continues_behind(a, i, labels, comps, blocks)}
        block_comps = {i: comps.pop(i) for i in blocks}
        if blocks:
            labels = np.where(np.isin(labels, list(blocks)), 0, labels)
        if not comps and not blocks:
            d.strokes, d.edges = [], []
            return
        # distance to / identity of the nearest target pixel
        near = nearest_targets(tmap)
        if near is None:
            d.strokes, d.edges = [], []
            return
        dist, nearest = near
        r_contact = max(4.0, self.contact * th)
        contacts: list[Contact] = []
        for c in comps.values():
            contacts.extend(find_contacts(c, dist, nearest, r_contact, th, targets))
        # union-find over components: dashes and container crossings
        parent, find = union_find(comps)
        bridges: list[tuple[float, float, float, float]] = []  # gaps joined, for path tracing
        gap = max(self.dash_gap_min, self.dash_gap * th)
        # half the head window: a branch as short runs from an arrowhead's corner to its middle (a
        # wing); the stub of line left between a head and a frame crossing it is longer
        spur = 0.5 * max(6.0, self.head * th)
        dashed_groups = bridge_dashes(comps, gap, find, parent, labels, bridges, spur)
        found = {(ct.comp, ct.target) for ct in contacts}
        contacts = bridge_containers(
            contacts, targets, band_w, r_contact, find, parent, bridges, comps, th, self.head
        )
        contacts = bridge_text(contacts, comps, targets, th, self.head, find, parent, bridges, d.text_lines, d.image)
        contacts = bridge_beside_text(contacts, targets, band_w, r_contact, find, parent, bridges)
        contacts = bridge_grazes(contacts, comps, targets, th, self.head, find, parent, bridges)
        kept = retarget_container_ends(contacts, targets, th, max(6.0, self.head * th))
        # connectors that lost an end on a container that is no node (a panel's port, an
        # untitled frame): it is a line end all the same, so their contacts are not all their ends
        kept_ids = {id(k) for k in kept}
        ported = {find(ct.comp) for ct in contacts if id(ct) not in kept_ids}
        contacts = kept
        groups: dict[int, list[int]] = {}
        for i in sorted(comps):
            groups.setdefault(find(i), []).append(i)
        by_group: dict[int, list[Contact]] = {}
        for ct in contacts:
            by_group.setdefault(find(ct.comp), []).append(ct)
        # the texts and frames a connector was bridged through are no ends of it
        passed: dict[int, set[int]] = {}
        for comp, t in found - {(ct.comp, ct.target) for ct in contacts}:
            if targets[t].kind in ("text", "container"):  # not a box's corner it grazed
                passed.setdefault(find(comp), set()).add(t)
        extend_dangling(
            groups, by_group, comps, dist, nearest, targets, r_contact, self.extend * th, spur, passed
        )
        strokes: list[Stroke] = []
        edges: list[EdgeEvidence] = []
        gid_of_stroke: dict[int, int] = {}
        for g in sorted(groups):
            members = groups[g]
            cts = merge_same_target(by_group.get(g, []))
            cts = passes_text(cts, members, comps, targets, th, self.head)
            cts = shapes_win(cts, targets, th, self.head, dropped=int(g in ported))
            self._read_heads(d, cts, members, comps, groups, find, raw, targets, th, near_frame, g in ported)
            if g in ported and cts and all(c.head for c in cts):
                cts_edges: list[Contact] = []  # its tail was the port: no edge among its heads
            else:
                cts_edges = cts
            if log.isEnabledFor(logging.DEBUG) and cts:
                log.debug("connector %d (%d pieces): %s", g, len(members),
                          [(targets[c.target].label[:20], round(c.x), round(c.y), c.head) for c in cts])
            style = "solid"
            if g in dashed_groups:
                style = dashed_groups[g]
            sid = len(strokes)
            xs0 = min(comps[m].x0 for m in members)
            ys0 = min(comps[m].y0 for m in members)
            xs1 = max(comps[m].x0 + comps[m].mask.shape[1] for m in members)
            ys1 = max(comps[m].y0 + comps[m].mask.shape[0] for m in members)
            width = float(np.median([comps[m].width for m in members]))
            if not cts:
                continue
            strokes.append(
                Stroke(
                    sid,
                    tuple((ct.x, ct.y) for ct in cts),
                    tuple((targets[ct.target].id, ct.x, ct.y, ct.head) for ct in cts),
                    style,
                    width,
                    (float(xs0), float(ys0), float(xs1), float(ys1)),
                )
            )
            gid_of_stroke[sid] = g
            reach = None
            if len(cts) >= 3 and any(c.head for c in cts) and not all(c.head for c in cts):
                reach = reachability(cts, [comps[m] for m in members], bridges, width, th)
            edges.extend(connector_edges(cts_edges, targets, style, sid, reach))
        edges = plain_to_operators(strokes, edges, targets)
        edge_labels(edges, labels, groups, gid_of_stroke, self.label_dist, th, targets)
        # step 5b: block arrows, closed shapes between the boxes they join; pieces left to
        # tracing (a filled arrow with a thick piece behind it) count where they gave no edge
        if self.block_reach > 0:
            traced = {gid_of_stroke[e.stroke_id] for e in edges if e.stroke_id is not None}
            untraced = {ms[0]: comps[ms[0]] for g, ms in groups.items() if g not in traced and len(ms) == 1}
            blocks.update(block_pieces(untraced, th))
            block_comps.update(untraced)
            edges += block_edges(blocks, block_comps, dist, nearest, targets, th, r_contact, reach=self.block_reach)
        d.strokes = strokes
        d.edges = edges
        ev = d.evidence.setdefault("topology_coder", {})
        ev["bridges"] = [tuple(round(v, 1) for v in b) for b in bridges]
        # every block arrow read, tail to tip (for the debug overlay)
        ev["block_arrows"] = [tuple(round(v, 1) for v in (*blocks[i].tail, *blocks[i].tip)) for i in sorted(blocks)]
        d.nodes = list(targets)  # inline label boxes bridged in step 3c are free text now

    def _read_heads(
        self,
        d: Diagram,
        cts: list[Contact],
        members: list[int],
        comps: dict[int, Comp],
        groups: dict[int, list[int]],
        find: Callable[[int], int],
        raw: np.ndarray,
        targets: list[GroundedNode],
        th: float,
        near_frame: np.ndarray | None = None,
        ported: bool = False,
    ) -> None:
        """Decide which of one connector's contacts ``cts`` carry an arrowhead. Loose pieces
        lying on a container outline are leftover dashes of the frame, not the wings of a head
        (:func:`frame_remnant`). On a ``ported`` connector (an end dropped on a container that
        is no node) the weakest head is not taken for the tail: the dropped end may be it."""
        hidden: list[Contact] = []
        for ct in cts:
            # the head window never reaches past half-way to the nearest other contact
            others = [math.hypot(o.x - ct.x, o.y - ct.y) for o in cts if o is not ct]
            limit = 0.45 * min(others) if others else math.inf
            loose = loose_pieces(ct, comps, groups, find, th, self.head)
            pieces = members + [m for m in loose if near_frame is None or not frame_remnant(comps[m], near_frame)]
            arrowhead(ct, comps, pieces, th, self.head, limit)
            if not ct.head:
                hidden_head(d, ct, raw, targets, comps, members, th, limit, self.head, self.ink_threshold)
                if ct.head:
                    hidden.append(ct)
            if d.layout:
                detected_head(d, ct, th, limit, self.head, self.layout_min_conf, self.layout_veto_margin)
        visible_over_hidden(cts, hidden)
        if len(cts) == 2:  # the branching end of two before the wider head wins
            fan_tail(cts, comps, members, th, self.head, targets)
        if len(cts) >= 3:  # lines leaving one port side by side: their bundle reads as a head
            fan_tail(cts, comps, members, th, self.head, targets, inner=False)
        double_heads(cts)
        if not ported:
            weakest_head_is_tail(cts)
        if len(cts) >= 3:  # after the weakest head: on a bus a frame crossing reads as branching
            fan_tail(cts, comps, members, th, self.head, targets)
        compare_ends(cts, comps, members)
        solid_ends(cts, comps, members, max(6.0, self.head * th))


def visible_over_hidden(cts: list[Contact], hidden: list[Contact]) -> None:
    """On a two-contact connector with a head at both ends, one seen on the connector's own
    pixels and one only inferred from the unmasked ink under a node's outline
    (:func:`~sciflow.agents.topology_coder.heads.hidden_head`), the seen one is the head: the
    inferred one is the weaker evidence (a stroke leaving a thick rounded corner looks solid
    there too), and one-headed arrows are the common case."""
    if len(cts) == 2 and all(c.head for c in cts) and len(hidden) == 1 and hidden[0] in cts:
        hidden[0].head = False


def weakest_head_is_tail(cts: list[Contact]) -> None:
    """On a connector of three or more contacts that all read as heads, the one that passed
    the head test by far the least (margin under 0.5 and under half the next smallest) is
    its source: a fan-out has one tail, and a plain line end whose anti-aliased edge or an
    outline remnant widens it just past the bound is the likeliest misreading. Nothing
    changes when no contact stands out (a bus drawn with heads everywhere).

    >>> from sciflow.agents.topology_coder.attach import Contact
    >>> cts = [Contact(0, 0, 0.0, 0.0, head=True, margin=m) for m in (0.07, 1.0, 0.9)]
    >>> weakest_head_is_tail(cts); [c.head for c in cts]
    [False, True, True]
    >>> cts = [Contact(0, 0, 0.0, 0.0, head=True, margin=m) for m in (0.6, 1.0, 0.9)]
    >>> weakest_head_is_tail(cts); [c.head for c in cts]
    [True, True, True]
    """
    if len(cts) < 3 or not all(c.head for c in cts):
        return
    order = sorted(cts, key=lambda c: c.margin)
    if order[0].margin < 0.5 and order[0].margin < 0.5 * order[1].margin:
        order[0].head = False


def frame_remnant(c: Comp, near_frame: np.ndarray) -> bool:
    """Whether at least half of piece ``c``'s pixels lie in ``near_frame`` (the few pixels
    around every container outline): a dash of the frame that its band did not cover.

    >>> m = np.zeros((20, 20), bool); m[2:4, 0:20] = True
    >>> frame_remnant(Comp(0, 0, 2, np.ones((2, 6), bool)), m), frame_remnant(Comp(0, 0, 10, np.ones((2, 6), bool)), m)
    (True, False)
    """
    hh, ww = c.mask.shape
    sub = near_frame[c.y0 : c.y0 + hh, c.x0 : c.x0 + ww]
    if sub.shape != c.mask.shape:
        return False
    return bool(sub[c.mask].mean() >= 0.5) if c.mask.any() else False
