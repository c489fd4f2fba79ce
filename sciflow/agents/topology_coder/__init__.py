"""Topology Coder: traces connectors between node candidates and reads their direction.

Backend ``strokes`` (default), exact behaviour (``th`` = median OCR line height):

1. *Ink* is every pixel whose max channel difference from the local background (the
   global background, or a container's fill inside that container) exceeds
   ``ink_threshold``. Node outlines (grown by ``node_pad`` px), every OCR line box and every
   container outline band are masked out; what remains are connector strokes. Acute
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
   same container band within the band width plus two contact radii are one stroke crossing
   the outline (joined, contacts dropped); two contacts on the same free text whose strokes
   leave in opposite directions along the line joining them are one stroke passing under
   the text (joined, dropped). A remaining end on a container outline goes to the node inside
   that container nearest to it (within ``2.5 th``), else stays on a titled container, else
   is dropped. A connector end that stops short of everything is followed along its tangent
   for ``extend * th`` px and attached to the first candidate it reaches. On connectors
   with 3+ contacts, a free-text contact within ``1.5 R`` of a
   contact on a drawn node is dropped.
4. Arrowhead at a contact: among the connector's pixels (plus small loose pieces, e.g. the
   wings of a head whose tip was masked) within ``R = max(6, head * th)`` px of the contact
   (at most 0.45 x the distance to the connector's nearest other contact), the spread
   across the stroke direction is at least ``max(2.5 w, w + 3)`` and the ink area at least
   ``1.15 w R`` or 1.25 x the ink of the next ``R`` px of the stroke (thin diagonal lines),
   and the spread reaches both sides of the head's axis (each side >= 25 %; a polyline
   corner near the node spreads to one side only) (``w``: the length-weighted median stroke
   width, from the distance transform
   on the skeleton); this holds for filled, open and chevron heads. The area bound uses
   ``min(R, L + 1)`` for ``R`` where ``L`` is the farthest window pixel (a stroke cut short by
   an edge label's mask). A contact on a shape without such a head is looked at again on
   the unmasked ink within ``R`` outside the node's interior (polygon eroded by ``w + 2``):
   at least ``2 k^2`` px surviving an opening with a ``k = w + 2`` square is a filled head
   that landed on the outline at a shallow angle (skipped for dark-filled nodes). With a
   Layout Detector (``diagram.layout``), a detected ``arrowhead`` (score >=
   ``layout_min_conf``) whose box, grown by ``R / 2``, holds the contact makes it a head;
   ``layout_veto_margin`` > 0 also drops a geometric head that passed its test by less than
   that margin with no detection near it.
5. Edges per connector: on a connector with 3+ contacts, some with and some without a
   head, each tail gets an edge to every head its path reaches along the connector's
   skeleton (see :func:`_reachability`: straight on through crossings, any turn at merges
   and splits). Otherwise, with tails T and heads H: one tail -> an
   edge to every head (fan-out); one head -> an edge from every tail (fan-in); several of
   both -> each head pairs with the tail best aligned with the stroke direction leaving that
   head; no tail and two heads -> two edges (double-headed) when their spreads
   differ by at most 1.5x, else the wider one is the only head; no head -> an edge only when
   one end is an operator that already has an outgoing (resp. incoming) headed edge, in
   which case the line flows into (resp. out of) the operator; otherwise nothing.
6. Edge confidence = ``0.6 + 0.4 x`` the head's evidence margin, times 0.9 for dashed or
   dotted connectors. Free text labels that are not edge ends and lie within
   ``label_dist * th`` of exactly one connector with exactly one edge become its label.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from scipy.spatial import cKDTree

from sciflow.agents.diagram import Diagram, EdgeEvidence, GroundedNode, Stroke
from sciflow.agents.layout_evidence import arrowhead_support
from sciflow.agents.registry import AGENTS, BackendAgent, Registry
from sciflow.agents.shape_hunter import background_color, channel_difference

log = logging.getLogger(__name__)

BACKENDS = Registry("topology_coder backend")


@dataclass
class _Contact:
    comp: int
    target: int
    x: float
    y: float
    head: bool = False
    margin: float = 0.0
    out_dir: tuple[float, float] = (0.0, 0.0)  # unit vector from the contact along the stroke
    spread: float = 0.0


@dataclass
class _Comp:
    idx: int
    x0: int
    y0: int
    mask: np.ndarray  # crop, bool
    ends: list[tuple[float, float, float, float]] = field(default_factory=list)  # x, y, dx, dy
    width: float = 1.0
    length: float = 0.0


def _skeleton(mask: np.ndarray) -> np.ndarray:
    from skimage.morphology import skeletonize  # noqa: PLC0415

    return skeletonize(mask)


def _endpoints(skel: np.ndarray) -> list[tuple[int, int]]:
    k = np.ones((3, 3), np.uint8)
    nb = cv2.filter2D(skel.astype(np.uint8), -1, k, borderType=cv2.BORDER_CONSTANT)
    ys, xs = np.nonzero(skel & (nb == 2))
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


@BACKENDS.register("strokes")
class StrokeTopology:
    """The stroke-tracing topology of the module docstring."""

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

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "strokes"}

    # ------------------------------------------------------------------ masks
    def _masks(self, d: Diagram) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[GroundedNode], np.ndarray]:
        h, w = d.height, d.width
        img = d.image
        bgimg = np.empty_like(img)
        bgimg[:] = background_color(img).astype(np.uint8)
        targets = list(d.nodes)
        shapes = {s.id: s for s in d.shapes}
        conts = sorted((n for n in targets if n.kind == "container"), key=lambda n: -_area(n.bbox))
        for c in conts:
            s = shapes.get(c.shape_id) if c.shape_id is not None else None
            if s is not None:
                cv2.fillPoly(bgimg, [np.round(np.array(c.polygon)).astype(np.int32)], tuple(int(v) for v in s.fill))
        diff = channel_difference(img, bgimg)
        ink = (diff > self.ink_threshold).astype(np.uint8)
        tmap = np.zeros((h, w), np.int32)  # target index + 1
        band = np.zeros((h, w), np.int32)
        for k, n in enumerate(targets):
            pts = np.round(np.array(n.polygon)).astype(np.int32)
            if n.kind == "container":
                cv2.polylines(band, [pts], True, k + 1, thickness=2 * self.node_pad + 3)
            else:
                pad = self.text_pad if n.kind == "text" else self.node_pad
                cv2.fillPoly(tmap, [pts], k + 1)
                cv2.polylines(tmap, [pts], True, k + 1, thickness=2 * pad + 1)
        th = d.text_height()
        for k, n in enumerate(targets):
            if n.kind in ("container", "text"):
                continue
            # outline tips cut off by the contour simplification stay ink otherwise and look
            # like arrowheads or attach passing strokes
            for tri in _cut_tips(n.polygon, th):
                cv2.fillPoly(tmap, [np.round(np.array(tri)).astype(np.int32)], k + 1)
        masked = (tmap > 0) | (band > 0)
        for t in d.text_lines:
            x0, y0, x1, y1 = (int(round(v)) for v in t.bbox)
            p = self.text_pad
            masked[max(0, y0 - p) : y1 + p, max(0, x0 - p) : x1 + p] = True
        raw = ink.copy()
        ink[masked] = 0
        both = np.where(tmap > 0, tmap, band)
        return ink, both, band, targets, raw

    # ------------------------------------------------------------------ main
    def trace(self, d: Diagram) -> None:
        th = d.text_height()
        ink, tmap, band, targets, raw = self._masks(d)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        comps: dict[int, _Comp] = {}
        for i in range(1, n):
            x, y, bw, bh, area = (int(v) for v in stats[i])
            if area < 2:
                continue
            m = labels[y : y + bh, x : x + bw] == i
            comps[i] = _Comp(i, x, y, m)
        if not comps:
            d.strokes, d.edges = [], []
            return
        for c in comps.values():
            self._describe(c)
        # distance to / identity of the nearest target pixel
        zero = (tmap == 0).astype(np.uint8)
        if zero.all():
            d.strokes, d.edges = [], []
            return
        dist, lab = cv2.distanceTransformWithLabels(zero, cv2.DIST_L2, 5, labelType=cv2.DIST_LABEL_PIXEL)
        lut = np.zeros(int(lab.max()) + 1, np.int32)
        zy, zx = np.nonzero(tmap > 0)
        lut[lab[zy, zx]] = tmap[zy, zx]
        nearest = lut[lab]  # target index + 1 for every pixel
        r_contact = max(4.0, self.contact * th)
        contacts: list[_Contact] = []
        for c in comps.values():
            contacts.extend(self._contacts(c, dist, nearest, r_contact, th, targets))
        # union-find over components: dashes and container crossings
        parent = {i: i for i in comps}

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        bridges: list[tuple[float, float, float, float]] = []  # gaps joined, for path tracing
        dashed_groups = self._bridge_dashes(comps, th, find, parent, labels, bridges)
        contacts = self._bridge_containers(contacts, targets, th, find, parent, bridges)
        contacts = self._bridge_text(contacts, comps, targets, th, find, parent, bridges)
        contacts = self._retarget_container_ends(contacts, targets, th)
        groups: dict[int, list[int]] = {}
        for i in sorted(comps):
            groups.setdefault(find(i), []).append(i)
        by_group: dict[int, list[_Contact]] = {}
        for ct in contacts:
            by_group.setdefault(find(ct.comp), []).append(ct)
        self._extend_dangling(groups, by_group, comps, dist, nearest, targets, r_contact, th)
        strokes: list[Stroke] = []
        edges: list[EdgeEvidence] = []
        gid_of_stroke: dict[int, int] = {}
        for g in sorted(groups):
            members = groups[g]
            cts = self._merge_same_target(by_group.get(g, []))
            cts = self._shapes_win(cts, targets, th)
            for ct in cts:
                # the head window never reaches past half-way to the nearest other contact
                others = [math.hypot(o.x - ct.x, o.y - ct.y) for o in cts if o is not ct]
                limit = 0.45 * min(others) if others else math.inf
                pieces = members + self._loose_pieces(ct, comps, groups, find, th)
                self._arrowhead(ct, comps, pieces, th, limit)
                if not ct.head:
                    self._hidden_head(d, ct, raw, targets, comps, members, th, limit)
                if d.layout:
                    self._detected_head(d, ct, th, limit)
            if len(cts) == 2 and cts[0].head and cts[1].head:
                # two "heads": keep both only when they look alike (a double-headed arrow)
                a, b = cts
                big = max(a.spread, b.spread) / max(min(a.spread, b.spread), 1e-6)
                if big > 1.5:
                    (a if a.spread < b.spread else b).head = False
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
                reach = _reachability(cts, [comps[m] for m in members], bridges, width, th)
            edges.extend(self._edges(cts, targets, style, sid, reach))
        edges = self._plain_to_operators(strokes, edges, targets)
        self._edge_labels(d, strokes, edges, labels, groups, gid_of_stroke, th, targets)
        d.strokes = strokes
        d.edges = edges

    # ------------------------------------------------------------ components
    def _describe(self, c: _Comp) -> None:
        m = c.mask
        hgt, wid = m.shape
        if max(hgt, wid) <= 3:
            cy, cx = np.nonzero(m)
            c.ends = [(c.x0 + float(cx.mean()), c.y0 + float(cy.mean()), 0.0, 0.0)]
            c.width = float(min(hgt, wid))
            c.length = float(max(hgt, wid))
            return
        sk = _skeleton(m)
        dt = cv2.distanceTransform(np.pad(m, 1).astype(np.uint8), cv2.DIST_L2, 3)[1:-1, 1:-1]
        vals = dt[sk]
        c.width = float(max(1.0, 2.0 * np.median(vals) - 0.5)) if vals.size else 1.0
        c.length = float(sk.sum())
        sy, sx = np.nonzero(sk)
        pts = np.stack([sx, sy], axis=1).astype(float)
        ends = []
        for ex, ey in _endpoints(sk):
            d2 = (pts[:, 0] - ex) ** 2 + (pts[:, 1] - ey) ** 2
            near = pts[(d2 <= 36) & (d2 > 0)]
            if len(near) == 0:
                dx = dy = 0.0
            else:
                v = np.array([ex, ey]) - near.mean(axis=0)
                nv = float(np.hypot(*v)) or 1.0
                dx, dy = float(v[0] / nv), float(v[1] / nv)
            ends.append((c.x0 + ex, c.y0 + ey, dx, dy))
        c.ends = ends

    def _contacts(
        self, c: _Comp, dist: np.ndarray, nearest: np.ndarray, r: float, th: float, targets: list[GroundedNode]
    ) -> list[_Contact]:
        hh, ww = c.mask.shape
        dcrop = dist[c.y0 : c.y0 + hh, c.x0 : c.x0 + ww]
        ncrop = nearest[c.y0 : c.y0 + hh, c.x0 : c.x0 + ww]
        near = c.mask & (dcrop <= r)
        if not near.any():
            return []
        out: list[_Contact] = []
        for t in np.unique(ncrop[near]).tolist():
            if t <= 0:
                continue
            sub = (near & (ncrop == t)).astype(np.uint8)
            k, lab = cv2.connectedComponents(sub, connectivity=8)
            for j in range(1, k):
                ys, xs = np.nonzero(lab == j)
                i = int(np.argmin(dcrop[ys, xs]))
                px, py = c.x0 + float(xs[i]), c.y0 + float(ys[i])
                ct = _Contact(c.idx, t - 1, px, py)
                if targets[t - 1].kind != "container" and self._passing(c, px, py, th, dcrop, r):
                    continue
                out.append(ct)
        return out

    def _passing(self, c: _Comp, px: float, py: float, th: float, dcrop: np.ndarray, r: float) -> bool:
        R = max(8.0, 1.2 * th)
        ys, xs = np.nonzero(c.mask)
        if xs.size == 0:
            return False
        dx = xs + c.x0 - px
        dy = ys + c.y0 - py
        dd = np.hypot(dx, dy)
        return _opposed(dx, dy, dd, R, 1.5)

    def _bridge_dashes(
        self,
        comps: dict[int, _Comp],
        th: float,
        find: Any,
        parent: dict[int, int],
        labels: np.ndarray,
        bridges: list[tuple[float, float, float, float]],
    ) -> dict[int, str]:
        gap = max(self.dash_gap_min, self.dash_gap * th)
        joined: set[int] = set()
        h, w = labels.shape
        # an end whose tangent runs into another piece within the gap (e.g. an arrowhead)
        for c in comps.values():
            for ex, ey, dx, dy in c.ends:
                if dx == 0 and dy == 0:
                    continue
                hit, hx, hy = 0, 0, 0
                for t in np.arange(1.0, gap + 0.5, 1.0):
                    for lat in (0.0, -1.0, 1.0):
                        px = int(round(ex + dx * t - dy * lat))
                        py = int(round(ey + dy * t + dx * lat))
                        if 0 <= px < w and 0 <= py < h:
                            j = int(labels[py, px])
                            if j and j != c.idx and j in comps:
                                hit, hx, hy = j, px, py
                                break
                    if hit:
                        break
                if hit:
                    parent[find(c.idx)] = find(hit)
                    joined.update((c.idx, hit))
                    bridges.append((ex, ey, float(hx), float(hy)))
        ends = []
        for c in comps.values():
            for e in c.ends:
                ends.append((c.idx, *e))
        if len(ends) < 2:
            return {}
        pts = np.array([[e[1], e[2]] for e in ends])
        tree = cKDTree(pts)
        for a, b in sorted(tree.query_pairs(gap)):
            ca, xa, ya, dxa, dya = ends[a]
            cb, xb, yb, dxb, dyb = ends[b]
            if ca == cb:
                continue
            v = np.array([xb - xa, yb - ya])
            nv = float(np.hypot(*v)) or 1.0
            v = v / nv
            ok_a = (dxa == 0 and dya == 0) or (dxa * v[0] + dya * v[1]) >= math.cos(math.radians(45))
            ok_b = (dxb == 0 and dyb == 0) or (-(dxb * v[0] + dyb * v[1])) >= math.cos(math.radians(45))
            if ok_a and ok_b:
                parent[find(ca)] = find(cb)
                joined.update((ca, cb))
                bridges.append((xa, ya, xb, yb))
        out: dict[int, str] = {}
        groups: dict[int, list[int]] = {}
        for i in joined:
            groups.setdefault(find(i), []).append(i)
        for g, mem in groups.items():
            if len(mem) >= 3:
                w = float(np.median([comps[m].width for m in mem]))
                ln = float(np.median([comps[m].length for m in mem]))
                out[g] = "dashed" if ln >= 2 * w + 1 else "dotted"
        return {find(g): s for g, s in out.items()}

    def _bridge_containers(
        self,
        contacts: list[_Contact],
        targets: list[GroundedNode],
        th: float,
        find: Any,
        parent: dict[int, int],
        bridges: list[tuple[float, float, float, float]],
    ) -> list[_Contact]:
        band_w = 2 * self.node_pad + 3
        lim = band_w + 2 * max(4.0, self.contact * th) + 2
        drop: set[int] = set()
        cont = [i for i, ct in enumerate(contacts) if targets[ct.target].kind == "container"]
        for ai, a in enumerate(cont):
            for b in cont[ai + 1 :]:
                ca, cb = contacts[a], contacts[b]
                if ca.target != cb.target or ca.comp == cb.comp:
                    continue
                if math.hypot(ca.x - cb.x, ca.y - cb.y) <= lim:
                    parent[find(ca.comp)] = find(cb.comp)
                    drop.update((a, b))
                    bridges.append((ca.x, ca.y, cb.x, cb.y))
        return [ct for i, ct in enumerate(contacts) if i not in drop]

    def _bridge_text(
        self,
        contacts: list[_Contact],
        comps: dict[int, _Comp],
        targets: list[GroundedNode],
        th: float,
        find: Any,
        parent: dict[int, int],
        bridges: list[tuple[float, float, float, float]],
    ) -> list[_Contact]:
        """A connector drawn through a free text box is cut by the text mask: two contacts on
        the same text candidate whose strokes leave in opposite directions along the line
        joining them are one stroke passing under the text."""
        for ct in contacts:
            if targets[ct.target].kind == "text":
                self._direction(ct, comps, th)
        drop: set[int] = set()
        idx = [i for i, ct in enumerate(contacts) if targets[ct.target].kind == "text"]
        cos30 = math.cos(math.radians(30))
        for ai, a in enumerate(idx):
            for b in idx[ai + 1 :]:
                ca, cb = contacts[a], contacts[b]
                if ca.target != cb.target or find(ca.comp) == find(cb.comp) or a in drop or b in drop:
                    continue
                vx, vy = cb.x - ca.x, cb.y - ca.y
                nv = math.hypot(vx, vy) or 1.0
                vx, vy = vx / nv, vy / nv
                if (
                    -(ca.out_dir[0] * vx + ca.out_dir[1] * vy) >= cos30
                    and (cb.out_dir[0] * vx + cb.out_dir[1] * vy) >= cos30
                ):
                    parent[find(ca.comp)] = find(cb.comp)
                    drop.update((a, b))
                    bridges.append((ca.x, ca.y, cb.x, cb.y))
        return [ct for i, ct in enumerate(contacts) if i not in drop]

    def _direction(self, ct: _Contact, comps: dict[int, _Comp], th: float) -> None:
        c = comps[ct.comp]
        R = max(6.0, self.head * th)
        ys, xs = np.nonzero(c.mask)
        dx, dy = xs + c.x0 - ct.x, ys + c.y0 - ct.y
        dd = np.hypot(dx, dy)
        sel = (dd > 0.5 * R) & (dd <= 2.5 * R)
        if sel.sum() < 2:
            sel = dd > 0
        if not sel.any():
            return
        vx, vy = float(dx[sel].mean()), float(dy[sel].mean())
        nv = math.hypot(vx, vy) or 1.0
        ct.out_dir = (vx / nv, vy / nv)

    def _extend_dangling(
        self,
        groups: dict[int, list[int]],
        by_group: dict[int, list[_Contact]],
        comps: dict[int, _Comp],
        dist: np.ndarray,
        nearest: np.ndarray,
        targets: list[GroundedNode],
        r: float,
        th: float,
    ) -> None:
        """A connector end that stops short of everything (a gap before a free-text input or
        a box) is followed along its tangent for up to ``extend * th`` px; the first node
        candidate reached (not a container, not already an end of this connector) gets a
        contact there."""
        ext = self.extend * th
        h, w = dist.shape
        for g, mem in groups.items():
            cts = by_group.get(g, [])
            have = {c.target for c in cts}
            for m in mem:
                for ex, ey, dx, dy in comps[m].ends:
                    if dx == 0 and dy == 0:
                        continue
                    if any(math.hypot(c.x - ex, c.y - ey) <= r + 3 for c in cts):
                        continue
                    xi, yi = int(round(ex)), int(round(ey))
                    if not (0 <= xi < w and 0 <= yi < h) or dist[yi, xi] <= r:
                        continue
                    for t in np.arange(1.0, ext + 0.5, 1.0):
                        px, py = int(round(ex + dx * t)), int(round(ey + dy * t))
                        if not (0 <= px < w and 0 <= py < h):
                            break
                        if dist[py, px] <= 1.0:
                            k = int(nearest[py, px]) - 1
                            if k >= 0 and k not in have and targets[k].kind != "container":
                                ct = _Contact(m, k, float(px), float(py))
                                cts.append(ct)
                                have.add(k)
                            break
            if cts:
                by_group[g] = cts

    def _retarget_container_ends(
        self, contacts: list[_Contact], targets: list[GroundedNode], th: float
    ) -> list[_Contact]:
        """A stroke ending on a container outline next to a node inside it (within ``2.5 th``)
        is attributed to that node; an untitled container never becomes a node, so other
        ends on an untitled container are dropped."""
        index = {n.id: i for i, n in enumerate(targets)}
        out = []
        for ct in contacts:
            c = targets[ct.target]
            if c.kind != "container":
                out.append(ct)
                continue
            best, best_d = None, 2.5 * th
            for n in targets:
                if n.group != c.id or n.candidate:
                    continue
                b = n.bbox
                d = math.hypot(max(b[0] - ct.x, 0.0, ct.x - b[2]), max(b[1] - ct.y, 0.0, ct.y - b[3]))
                if d <= best_d:
                    best, best_d = n, d
            if best is not None:
                ct.target = index[best.id]
                out.append(ct)
            elif c.label.strip():
                out.append(ct)
        return out

    def _shapes_win(self, cts: list[_Contact], targets: list[GroundedNode], th: float) -> list[_Contact]:
        """On a connector with three or more contacts, a free-text contact within ``1.5 R`` of
        a contact on a drawn node (shape or operator) is the same stroke end: a label beside
        the node, not another target."""
        if len(cts) < 3:
            return cts
        R = max(6.0, self.head * th)
        solid = [c for c in cts if targets[c.target].kind not in ("text", "container")]
        return [
            c
            for c in cts
            if targets[c.target].kind != "text" or all(math.hypot(c.x - o.x, c.y - o.y) > 1.5 * R for o in solid)
        ]

    def _merge_same_target(self, cts: list[_Contact]) -> list[_Contact]:
        by_t: dict[int, _Contact] = {}
        for ct in sorted(cts, key=lambda c: (c.target, c.y, c.x)):
            by_t.setdefault(ct.target, ct)
        return [by_t[t] for t in sorted(by_t)]

    def _loose_pieces(
        self, ct: _Contact, comps: dict[int, _Comp], groups: dict[int, list[int]], find: Any, th: float
    ) -> list[int]:
        """Small separate pieces near a contact (the wings of an open or chevron head whose tip
        was masked with the node outline): single-component groups no larger than the head
        window that come within it."""
        R = max(6.0, self.head * th)
        out = []
        own = find(ct.comp)
        for g, mem in groups.items():
            if g == own or len(mem) != 1:
                continue
            c = comps[mem[0]]
            hh, ww = c.mask.shape
            if max(hh, ww) > 1.5 * R:
                continue
            if c.x0 > ct.x + R or c.y0 > ct.y + R or c.x0 + ww < ct.x - R or c.y0 + hh < ct.y - R:
                continue
            ys, xs = np.nonzero(c.mask)
            if np.min(np.hypot(xs + c.x0 - ct.x, ys + c.y0 - ct.y)) <= R:
                out.append(mem[0])
        return out

    def _head_radius(self, th: float, limit: float) -> float:
        """The arrowhead window around a contact: ``head`` text heights, 6-``limit`` px, at least 4."""
        return max(4.0, min(max(6.0, self.head * th), limit))

    def _detected_head(self, d: Diagram, ct: _Contact, th: float, limit: float) -> None:
        """Fuse the Layout Detector's arrowheads with the geometric reading of one contact: a
        detected head (score >= ``layout_min_conf``) within half a head window of the contact
        makes it a head; with ``layout_veto_margin`` > 0 a geometric head that passed its test
        by less than that margin and has no detection near it is dropped."""
        R = self._head_radius(th, limit)
        support = arrowhead_support(d.layout, ct.x, ct.y, radius=0.5 * R, min_conf=self.layout_min_conf)
        if support > 0 and not ct.head:
            ct.head = True
            ct.margin = support
            ct.spread = max(ct.spread, 1.0)
        elif support == 0 and ct.head and ct.margin < self.layout_veto_margin:
            ct.head = False

    def _arrowhead(
        self, ct: _Contact, comps: dict[int, _Comp], members: list[int], th: float, limit: float = math.inf
    ) -> None:
        R = self._head_radius(th, limit)
        xs_l, ys_l = [], []
        for m in members:
            c = comps[m]
            if (
                c.x0 > ct.x + 3 * R
                or c.y0 > ct.y + 3 * R
                or c.x0 + c.mask.shape[1] < ct.x - 3 * R
                or c.y0 + c.mask.shape[0] < ct.y - 3 * R
            ):
                continue
            ys, xs = np.nonzero(c.mask)
            xs_l.append(xs + c.x0)
            ys_l.append(ys + c.y0)
        if not xs_l:
            return
        xs = np.concatenate(xs_l).astype(float)
        ys = np.concatenate(ys_l).astype(float)
        # stroke width of the whole connector: length-weighted median over its pieces
        ws = sorted((comps[m].width, max(comps[m].length, 1.0)) for m in members)
        half, acc, w = sum(x[1] for x in ws) / 2.0, 0.0, ws[0][0]
        for wv, ln in ws:
            acc += ln
            if acc >= half:
                w = wv
                break
        dx, dy = xs - ct.x, ys - ct.y
        dd = np.hypot(dx, dy)
        far = (dd > R) & (dd <= 3 * R)
        sel = dd <= R
        ref = far if far.sum() >= 3 else sel
        vx, vy = float(dx[ref].mean()), float(dy[ref].mean())
        nv = math.hypot(vx, vy) or 1.0
        ux, uy = vx / nv, vy / nv
        ct.out_dir = (ux, uy)
        if sel.sum() < 3:
            return
        # the head's own axis: from the contact through the middle of the window
        mid = (dd > 0.25 * R) & (dd <= 0.75 * R)
        if mid.sum() >= 3:
            ax, ay = float(dx[mid].mean()), float(dy[mid].mean())
            na = math.hypot(ax, ay) or 1.0
            ax, ay = ax / na, ay / na
        else:
            ax, ay = ux, uy
        lat = -dx[sel] * ay + dy[sel] * ax
        lo, hi = -float(np.percentile(lat, 2)), float(np.percentile(lat, 98))
        spread = lo + hi + 1.0
        # a head spreads to both sides of its axis; a corner of a polyline to one side only
        symmetric = min(lo, hi) >= 0.25 * (lo + hi) - 0.5
        area = float(sel.sum())
        need_spread = max(2.5 * w, w + 3.0)
        # a stroke cut short inside the window (by an edge label's mask) is judged on the
        # length it has there, as a plain line of that length
        need_area = 1.15 * w * min(R, float(dd[sel].max()) + 1.0)
        shaft = (dd > R) & (dd <= 2 * R)
        if shaft.sum() >= 0.5 * R:  # compare with the same length of this stroke's own shaft
            need_area = min(need_area, 1.25 * float(shaft.sum()))
        ct.head = spread >= need_spread and area >= need_area and symmetric
        ct.spread = spread
        log.debug(
            "contact %s at (%.0f,%.0f): w=%.1f R=%.1f spread=%.1f/%.1f area=%.0f/%.0f head=%s",
            ct.target,
            ct.x,
            ct.y,
            w,
            R,
            spread,
            need_spread,
            area,
            need_area,
            ct.head,
        )
        ct.margin = float(min(1.0, abs(spread - need_spread) / need_spread))

    def _hidden_head(
        self,
        d: Diagram,
        ct: _Contact,
        raw: np.ndarray,
        targets: list[GroundedNode],
        comps: dict[int, _Comp],
        members: list[int],
        th: float,
        limit: float,
    ) -> None:
        """A filled arrowhead landing on a node outline at a shallow angle (a blunt head on an
        ellipse's or diamond's slanted side) lies mostly inside the masked outline band, so
        the stroke-side test sees no head. Look again at all ink within the head window that
        is not deep inside the node (the outline band counts): a morphological opening with
        a square of ``w + 2`` px removes thin lines (the stroke, the outline) and keeps a
        solid head; at least ``2 (w + 2)^2`` px surviving is a head. Nodes with a dark fill
        are skipped (their whole band would survive)."""
        n = targets[ct.target]
        if n.kind in ("text", "container", "operator") or len(n.polygon) < 3:
            return
        shape = next((s for s in d.shapes if s.id == n.shape_id), None) if n.shape_id is not None else None
        if shape is not None:
            bg = background_color(d.image).astype(int)
            if max(abs(int(f) - int(b)) for f, b in zip(shape.fill, bg, strict=True)) > self.ink_threshold:
                return
        w = float(np.median([comps[m].width for m in members]))
        R = self._head_radius(th, limit)
        h, wd = raw.shape
        x0, y0 = max(0, int(ct.x - R) - 1), max(0, int(ct.y - R) - 1)
        x1, y1 = min(wd, int(ct.x + R) + 2), min(h, int(ct.y + R) + 2)
        if x1 - x0 < 3 or y1 - y0 < 3:
            return
        win = raw[y0:y1, x0:x1].copy()
        inner = np.zeros_like(win)
        pts = np.round(np.array(n.polygon) - np.array([x0, y0])).astype(np.int32)
        cv2.fillPoly(inner, [pts], 1)
        e = 2 + int(round(w))
        inner = cv2.erode(inner, np.ones((2 * e + 1, 2 * e + 1), np.uint8))
        yy, xx = np.mgrid[y0:y1, x0:x1]
        win[(inner > 0) | (np.hypot(xx - ct.x, yy - ct.y) > R)] = 0
        k = int(round(w)) + 2
        opened = cv2.morphologyEx(win, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
        area = int(opened.sum())
        if area >= 2 * k * k:
            ct.head = True
            ct.margin = float(min(1.0, area / (2.0 * k * k) - 1.0))
            ct.spread = max(ct.spread, float(k))
            log.debug("contact %s at (%.0f,%.0f): hidden head, solid area %d", ct.target, ct.x, ct.y, area)

    def _edges(
        self,
        cts: list[_Contact],
        targets: list[GroundedNode],
        style: str,
        sid: int,
        reach: list[set[int]] | None = None,
    ) -> list[EdgeEvidence]:
        heads = [c for c in cts if c.head]
        tails = [c for c in cts if not c.head]
        pairs: list[tuple[_Contact, _Contact]] = []
        if reach is not None:
            # several connectors merged into one ink component (crossings, shared trunks):
            # a tail feeds exactly the heads its traced path reaches
            pairs = [(cts[i], cts[j]) for i, t in enumerate(cts) if not t.head for j in sorted(reach[i]) if cts[j].head]
        elif heads and tails:
            if len(tails) == 1:
                pairs = [(tails[0], h) for h in heads]
            elif len(heads) == 1:
                pairs = [(t, heads[0]) for t in tails]
            else:
                for h in heads:
                    best = max(
                        tails,
                        key=lambda t, h=h: (
                            ((t.x - h.x) * h.out_dir[0] + (t.y - h.y) * h.out_dir[1])
                            / (math.hypot(t.x - h.x, t.y - h.y) or 1.0)
                        ),
                    )
                    pairs.append((best, h))
        elif len(heads) == 2 and not tails:
            pairs = [(heads[0], heads[1]), (heads[1], heads[0])]
        out = []
        mult = 0.9 if style != "solid" else 1.0
        for t, h in pairs:
            if t.target == h.target:
                continue
            conf = mult * (0.6 + 0.4 * min(1.0, h.margin))
            out.append(EdgeEvidence(targets[t.target].id, targets[h.target].id, round(conf, 4), style, None, sid))
        return out

    def _plain_to_operators(
        self, strokes: list[Stroke], edges: list[EdgeEvidence], targets: list[GroundedNode]
    ) -> list[EdgeEvidence]:
        kind = {t.id: t.kind for t in targets}
        out_ops = {e.source for e in edges if kind.get(e.source) == "operator"}
        in_ops = {e.target for e in edges if kind.get(e.target) == "operator"}
        with_edges = {e.stroke_id for e in edges}
        extra = []
        for s in strokes:
            if s.id in with_edges or len(s.contacts) != 2 or any(c[3] for c in s.contacts):
                continue
            (a, *_), (b, *_) = s.contacts
            for x, op in ((a, b), (b, a)):
                if kind.get(op) != "operator" or kind.get(x) == "operator":
                    continue
                if op in out_ops:
                    extra.append(EdgeEvidence(x, op, 0.6, s.style, None, s.id))
                elif op in in_ops:
                    extra.append(EdgeEvidence(op, x, 0.6, s.style, None, s.id))
        return edges + extra

    def _edge_labels(
        self,
        d: Diagram,
        strokes: list[Stroke],
        edges: list[EdgeEvidence],
        labels: np.ndarray,
        groups: dict[int, list[int]],
        gid_of_stroke: dict[int, int],
        th: float,
        targets: list[GroundedNode],
    ) -> None:
        used = {e.source for e in edges} | {e.target for e in edges}
        comp_to_stroke = {}
        for sid, g in gid_of_stroke.items():
            for m in groups[g]:
                comp_to_stroke[m] = sid
        pad = int(self.label_dist * th)
        h, w = labels.shape
        for n in targets:
            if n.kind != "text" or n.id in used:
                continue
            x0, y0, x1, y1 = (int(round(v)) for v in n.bbox)
            crop = labels[max(0, y0 - pad) : min(h, y1 + pad), max(0, x0 - pad) : min(w, x1 + pad)]
            sids = {comp_to_stroke[c] for c in np.unique(crop).tolist() if c in comp_to_stroke}
            owners = [i for i, e in enumerate(edges) if e.stroke_id in sids]
            if len(sids) == 1 and len(owners) == 1:
                e = edges[owners[0]]
                edges[owners[0]] = EdgeEvidence(e.source, e.target, e.confidence, e.style, n.label, e.stroke_id)


def _area(b: tuple[float, ...]) -> float:
    return (b[2] - b[0]) * (b[3] - b[1])


def _reachability(
    cts: list[_Contact],
    pieces: list[_Comp],
    bridges: list[tuple[float, float, float, float]],
    width: float,
    th: float,
) -> list[set[int]] | None:
    """Which contacts of a connector each contact reaches along its skeleton.

    The connector's pieces (and the gaps bridged between them) are skeletonised; junction
    pixels within ``1.5 w + 1`` px of each other form one junction, and the skeleton between
    junctions forms branches. At a junction where exactly four branches that lead somewhere
    meet (dead-end spurs such as arrowhead wings do not count), two strokes cross: a path
    goes straight on, pairing the branches that leave in the most opposite directions. At
    any other junction (a merge or a split) every turn is allowed. A four-way junction where
    going straight on would join two heads or two tails (a bus fanning out both ways) is a
    split too. ``None`` when the skeleton cannot be built."""
    x0 = min(c.x0 for c in pieces) - 2
    y0 = min(c.y0 for c in pieces) - 2
    x1 = max(c.x0 + c.mask.shape[1] for c in pieces) + 2
    y1 = max(c.y0 + c.mask.shape[0] for c in pieces) + 2
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    for c in pieces:
        hh, ww = c.mask.shape
        m[c.y0 - y0 : c.y0 - y0 + hh, c.x0 - x0 : c.x0 - x0 + ww] |= c.mask.astype(np.uint8)
    near = cv2.dilate(m, np.ones((5, 5), np.uint8))
    bw = max(1, int(round(width)))
    for ax, ay, bx, by in bridges:
        pa = (int(round(ax)) - x0, int(round(ay)) - y0)
        pb = (int(round(bx)) - x0, int(round(by)) - y0)
        if all(0 <= p[0] < m.shape[1] and 0 <= p[1] < m.shape[0] and near[p[1], p[0]] for p in (pa, pb)):
            cv2.line(m, pa, pb, 1, thickness=bw)
    sk = _skeleton(m.astype(bool))
    if not sk.any():
        return None
    nb = cv2.filter2D(sk.astype(np.uint8), -1, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT)
    junc = (sk & (nb >= 4)).astype(np.uint8)
    rj = int(round(1.5 * width + 1))
    jreg = cv2.dilate(junc, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * rj + 1, 2 * rj + 1)))
    nj, jlab = cv2.connectedComponents(jreg, connectivity=8)
    rest = (sk & (jreg == 0)).astype(np.uint8)
    nbr, blab = cv2.connectedComponents(rest, connectivity=8)
    # junction label touching each branch pixel (a 3x3 max over the junction labels)
    jtouch = cv2.dilate(jlab.astype(np.float32), np.ones((3, 3), np.uint8)).astype(np.int32)
    by, bx = np.nonzero(rest)
    bl = blab[by, bx]
    jt = jtouch[by, bx]
    ends: dict[int, dict[int, tuple[float, float]]] = {b: {} for b in range(1, nbr)}  # branch -> junction -> dir
    length = np.bincount(bl, minlength=nbr)
    reach_d = max(3.0 * width, 0.8 * th)
    for b, j in set(zip(bl[jt > 0].tolist(), jt[jt > 0].tolist(), strict=True)):
        sel = (bl == b) & (jt == j)
        tx, ty = float(bx[sel].mean()), float(by[sel].mean())
        own = bl == b
        dd = np.hypot(bx[own] - tx, by[own] - ty)
        w_ = (dd > 0) & (dd <= reach_d)
        if not w_.any():
            ends[b][j] = (0.0, 0.0)
            continue
        vx, vy = float((bx[own][w_] - tx).mean()), float((by[own][w_] - ty).mean())
        nv = math.hypot(vx, vy) or 1.0
        ends[b][j] = (vx / nv, vy / nv)
    # contacts -> nearest skeleton pixel: a branch, or a junction
    sy, sx = np.nonzero(sk)
    tree = cKDTree(np.stack([sx, sy], axis=1))
    at_branch: list[int] = []
    at_junc: list[int] = []
    for ct in cts:
        _, i = tree.query((ct.x - x0, ct.y - y0))
        px, py = int(sx[i]), int(sy[i])
        at_branch.append(int(blab[py, px]))
        at_junc.append(int(jlab[py, px]) if not blab[py, px] else 0)
    has_contact = {b for b in at_branch if b}
    # junction -> branches meeting there; which pairs may be passed through
    at: dict[int, list[int]] = {}
    for b, js in ends.items():
        for j in js:
            at.setdefault(j, []).append(b)
    allowed: dict[int, set[tuple[int, int]] | None] = {}  # None: every turn
    for j, bs in at.items():
        live = [b for b in bs if len(ends[b]) > 1 or b in has_contact or length[b] > 0.6 * th]
        if len(live) != 4:
            allowed[j] = None
            continue
        best, best_s = None, math.inf
        a = live[0]
        for k in (1, 2, 3):
            o = [x for x in live[1:] if x != live[k]]
            s_ = _dot(ends[a][j], ends[live[k]][j]) + _dot(ends[o[0]][j], ends[o[1]][j])
            if s_ < best_s:
                best, best_s = ((a, live[k]), (o[0], o[1])), s_
        assert best is not None
        allowed[j] = {best[0], best[1], best[0][::-1], best[1][::-1]}

    def walk(start_b: int, start_j: int, frm0: int = 0) -> set[int]:
        """Branches reached from branch ``start_b`` (entered from junction ``frm0``), or from
        junction ``start_j``."""
        seen: set[tuple[int, int]] = set()
        todo: list[tuple[int, int]] = []  # (branch, junction entered from; 0 = none)
        got: set[int] = set()
        if start_b:
            todo.append((start_b, frm0))
        else:
            todo.extend((b, start_j) for b in at.get(start_j, []))
        while todo:
            b, frm = todo.pop()
            if (b, frm) in seen:
                continue
            seen.add((b, frm))
            got.add(b)
            for j in ends[b]:
                if j == frm and len(ends[b]) > 1:
                    continue
                ok = allowed.get(j)
                for b2 in at.get(j, []):
                    if b2 != b and (ok is None or (b, b2) in ok):
                        todo.append((b2, j))
        return got

    def contacts_in(got: set[int], extra: set[int]) -> set[int]:
        juncs = {j for b in got for j in ends[b]} | extra
        return {k for k in range(len(cts)) if at_branch[k] in got or (at_junc[k] and at_junc[k] in juncs)}

    heads = {i for i, c in enumerate(cts) if c.head}
    # going straight on at a crossing must join a tail side with a head side on both
    # strokes; a "+" where one line fans out to both sides (a bus) pairs two heads (or two
    # tails) instead: there every turn is allowed
    for j, ok in list(allowed.items()):
        if ok is None:
            continue
        for a_, b_ in {tuple(sorted(p)) for p in ok}:
            sa = contacts_in(walk(a_, 0, j), set())
            sb = contacts_in(walk(b_, 0, j), set())
            if not ((sa & heads and sb - heads) or (sa - heads and sb & heads)):
                allowed[j] = None
                break
    out: list[set[int]] = []
    for i in range(len(cts)):
        got = walk(at_branch[i], at_junc[i])
        out.append(contacts_in(got, {at_junc[i]} if at_junc[i] else set()) - {i})
    return out


def _opposed(dx: np.ndarray, dy: np.ndarray, dd: np.ndarray, r: float, tol: float) -> bool:
    """Whether the stroke pixels (offsets ``dx``, ``dy`` at distances ``dd`` from a point)
    cross the ring of radius ``r`` in two arcs more than 100 degrees apart (a stroke
    running on past the point, or a second stroke crossing the ring)."""
    ring = np.abs(dd - r) <= tol
    if ring.sum() < 2:
        return False
    ang = np.sort(np.degrees(np.arctan2(dy[ring], dx[ring])) % 360)
    # split into arcs at gaps > 25 degrees
    gaps = np.diff(np.concatenate([ang, ang[:1] + 360]))
    cuts = np.nonzero(gaps > 25)[0]
    if len(cuts) < 2:
        return False
    arcs = []
    starts = (cuts + 1) % len(ang)
    for s, e in zip(starts.tolist(), np.roll(cuts, -1).tolist(), strict=True):
        a0, a1 = ang[s], ang[e]
        if a1 < a0:
            a1 += 360
        arcs.append(((a0 + a1) / 2) % 360)
    for i in range(len(arcs)):
        for j in range(i + 1, len(arcs)):
            sep = abs(arcs[i] - arcs[j]) % 360
            sep = min(sep, 360 - sep)
            if sep > 100:
                return True
    return False


def _dot(a: tuple[float, float], b: tuple[float, float]) -> float:
    return a[0] * b[0] + a[1] * b[1]


def _cut_tips(poly: tuple[tuple[float, float], ...], th: float) -> list[list[tuple[float, float]]]:
    """Triangles restoring acute polygon corners that a simplified contour cut off: for a
    short edge (at most ``0.5 th``) whose two neighbouring edges converge outwards at an
    acute angle (< 75 degrees) within ``th`` of it, the triangle between the short edge and
    the apex where the neighbours meet (a diamond's or triangle's tip)."""
    pts = [np.asarray(p, float) for p in poly]
    n = len(pts)
    out: list[list[tuple[float, float]]] = []
    if n < 4:
        return out
    for i in range(n):
        a, b = pts[i], pts[(i + 1) % n]
        if float(np.hypot(*(b - a))) > max(3.0, 0.5 * th):
            continue
        pa, nb = pts[(i - 1) % n], pts[(i + 2) % n]
        da, db = a - pa, b - nb  # directions running into the short edge from both sides
        la, lb = float(np.hypot(*da)), float(np.hypot(*db))
        if la < 1e-6 or lb < 1e-6:
            continue
        da, db = da / la, db / lb
        cos_apex = float(da @ db)  # both run towards the apex
        if cos_apex < math.cos(math.radians(75)):
            continue
        # apex: a + s da = b + t db
        m = np.array([[da[0], -db[0]], [da[1], -db[1]]])
        if abs(float(np.linalg.det(m))) < 1e-6:
            continue
        s_, t_ = np.linalg.solve(m, b - a)
        if s_ <= 0 or t_ <= 0 or s_ > th or t_ > th:
            continue
        apex = a + s_ * da
        out.append([(float(a[0]), float(a[1])), (float(apex[0]), float(apex[1])), (float(b[0]), float(b[1]))])
    return out


@AGENTS.register("topology_coder")
class TopologyCoder(BackendAgent):
    """The Topology Coder agent; fills ``diagram.strokes`` and ``diagram.edges``."""

    backends = BACKENDS
    default_backend = "strokes"

    def run(self, diagram: Diagram) -> None:
        self.backend.trace(diagram)
        diagram.evidence["topology_coder"] = {
            "strokes": len(diagram.strokes),
            "edges": [(e.source, e.target, e.style, e.label) for e in diagram.edges],
        }
