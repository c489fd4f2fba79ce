"""Step 3: contacts, the places where a connector meets a node candidate.

A *contact* is a cluster of stroke pixels within ``r = max(4, contact * th)`` px of a node
candidate (the nearest one wins). A contact whose stroke continues on two opposite sides (a
ring of radius ``1.2 th`` around it meets the stroke in two arcs more than 100 degrees apart)
is a stroke passing by and is dropped. A connector end that stops short of everything is
followed along its tangent for ``extend * th`` px and attached to the first candidate it
reaches. Per connector, one contact per target is kept, and on connectors with 3+ contacts a
free-text contact within ``1.5 R`` of a contact on a drawn node is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from sciflow.agents.diagram import GroundedNode
from sciflow.agents.topology_coder.components import Comp, line_ends


@dataclass
class Contact:
    """Where piece ``comp`` meets target ``target`` (an index into the targets)."""

    comp: int
    target: int
    x: float
    y: float
    head: bool = False
    margin: float = 0.0
    out_dir: tuple[float, float] = (0.0, 0.0)  # unit vector from the contact along the stroke
    spread: float = 0.0


def nearest_targets(tmap: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(dist, nearest)``: every pixel's distance to the nearest target pixel of ``tmap``
    and that target's index + 1; ``None`` when ``tmap`` holds no target."""
    zero = (tmap == 0).astype(np.uint8)
    if zero.all():
        return None
    dist, lab = cv2.distanceTransformWithLabels(zero, cv2.DIST_L2, 5, labelType=cv2.DIST_LABEL_PIXEL)
    lut = np.zeros(int(lab.max()) + 1, np.int32)
    zy, zx = np.nonzero(tmap > 0)
    lut[lab[zy, zx]] = tmap[zy, zx]
    return dist, lut[lab]


def find_contacts(
    c: Comp, dist: np.ndarray, nearest: np.ndarray, r: float, th: float, targets: list[GroundedNode]
) -> list[Contact]:
    """The contacts of piece ``c``: per nearest target, each 8-connected cluster of its pixels
    within ``r`` of it, at the cluster's pixel closest to the target; passing strokes are
    dropped except on containers."""
    hh, ww = c.mask.shape
    dcrop = dist[c.y0 : c.y0 + hh, c.x0 : c.x0 + ww]
    ncrop = nearest[c.y0 : c.y0 + hh, c.x0 : c.x0 + ww]
    near = c.mask & (dcrop <= r)
    if not near.any():
        return []
    out: list[Contact] = []
    for t in np.unique(ncrop[near]).tolist():
        if t <= 0:
            continue
        sub = (near & (ncrop == t)).astype(np.uint8)
        k, lab = cv2.connectedComponents(sub, connectivity=8)
        for j in range(1, k):
            ys, xs = np.nonzero(lab == j)
            i = int(np.argmin(dcrop[ys, xs]))
            px, py = c.x0 + float(xs[i]), c.y0 + float(ys[i])
            ct = Contact(c.idx, t - 1, px, py)
            if targets[t - 1].kind != "container" and passing(c, px, py, th):
                continue
            out.append(ct)
    return out


def passing(c: Comp, px: float, py: float, th: float) -> bool:
    """Whether piece ``c`` runs on past ``(px, py)`` (see :func:`opposed`)."""
    R = max(8.0, 1.2 * th)
    ys, xs = np.nonzero(c.mask)
    if xs.size == 0:
        return False
    dx = xs + c.x0 - px
    dy = ys + c.y0 - py
    dd = np.hypot(dx, dy)
    return opposed(dx, dy, dd, R, 1.5)


def opposed(dx: np.ndarray, dy: np.ndarray, dd: np.ndarray, r: float, tol: float) -> bool:
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


def direction(ct: Contact, comps: dict[int, Comp], th: float, head: float) -> None:
    """Set ``ct.out_dir``: the mean direction from the contact to its piece's pixels between
    0.5 and 2.5 head windows (``R = max(6, head * th)``) away."""
    c = comps[ct.comp]
    R = max(6.0, head * th)
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


def continues(a: Contact, b: Contact, max_angle: float = 30.0) -> bool:
    """Whether the pieces at contacts ``a`` and ``b`` continue each other: they leave in
    opposite directions along the line joining the contacts, each within ``max_angle``
    degrees (``out_dir`` as set by :func:`direction`).

    >>> continues(Contact(0, 0, 0.0, 0.0, out_dir=(-1.0, 0.0)), Contact(1, 0, 10.0, 1.0, out_dir=(1.0, 0.0)))
    True
    >>> continues(Contact(0, 0, 0.0, 0.0, out_dir=(0.0, 1.0)), Contact(1, 0, 10.0, 0.0, out_dir=(1.0, 0.0)))
    False
    """
    vx, vy = b.x - a.x, b.y - a.y
    nv = math.hypot(vx, vy) or 1.0
    vx, vy = vx / nv, vy / nv
    c = math.cos(math.radians(max_angle))
    return -(a.out_dir[0] * vx + a.out_dir[1] * vy) >= c and (b.out_dir[0] * vx + b.out_dir[1] * vy) >= c


def join_pairs(
    contacts: list[Contact],
    idx: list[int],
    joins: Callable[[Contact, Contact], bool],
    separate: Callable[[Contact, Contact], bool],
    find: Callable[[int], int],
    parent: dict[int, int],
    bridges: list[tuple[float, float, float, float]],
    same: Callable[[Contact, Contact], bool] | None = None,
) -> set[int]:
    """Join, in ``parent``, the connectors of every pair of contacts ``contacts[a]``,
    ``contacts[b]`` (``a`` before ``b`` in ``idx``) that lie on the same target (or on one
    obstacle, as ``same`` tells), that
    ``separate`` tells apart and that ``joins`` accepts; each contact is joined at most once
    and every gap bridged is appended to ``bridges``. Returns the indices of the joined
    contacts (the callers drop them: the stroke passes there, it does not end).

    >>> cts = [Contact(0, 0, 0.0, 0.0), Contact(1, 0, 5.0, 0.0), Contact(2, 0, 9.0, 0.0)]
    >>> parent = {0: 0, 1: 1, 2: 2}
    >>> def find(i):
    ...     return i if parent[i] == i else find(parent[i])
    >>> sorted(join_pairs(cts, [0, 1, 2], lambda a, b: True, lambda a, b: find(a.comp) != find(b.comp),
    ...                   find, parent, []))
    [0, 1]
    """
    drop: set[int] = set()
    for ai, a in enumerate(idx):
        for b in idx[ai + 1 :]:
            ca, cb = contacts[a], contacts[b]
            one = same(ca, cb) if same is not None else ca.target == cb.target
            if not one or not separate(ca, cb) or a in drop or b in drop:
                continue
            if joins(ca, cb):
                parent[find(ca.comp)] = find(cb.comp)
                drop.update((a, b))
                bridges.append((ca.x, ca.y, cb.x, cb.y))
    return drop


def extend_dangling(
    groups: dict[int, list[int]],
    by_group: dict[int, list[Contact]],
    comps: dict[int, Comp],
    dist: np.ndarray,
    nearest: np.ndarray,
    targets: list[GroundedNode],
    r: float,
    ext: float,
    spur: float = 0.0,
    passed: dict[int, set[int]] | None = None,
) -> None:
    """A connector end that stops short of everything (a gap before a free-text input or
    a box) is followed along its tangent for up to ``ext`` (``extend * th``) px; the first
    node candidate reached (not a container, not already an end of this connector) gets a
    contact there. An end whose branch meets a junction within ``spur`` px is no line end:
    the wing of an arrowhead (or a serif) points back beside the line, and followed on it
    would reach whatever box lies beside the arrow. Nor is a target in ``passed`` (per
    connector root: the texts and frames it was bridged through) reached: the end of a dash
    beside a label the line passes under points into that label."""
    h, w = dist.shape
    for g, mem in groups.items():
        cts = by_group.get(g, [])
        have = {c.target for c in cts} | (passed or {}).get(g, set())
        for m in mem:
            for ex, ey, dx, dy in line_ends(comps[m], spur):
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
                            ct = Contact(m, k, float(px), float(py))
                            cts.append(ct)
                            have.add(k)
                        break
        if cts:
            by_group[g] = cts


def merge_same_target(cts: list[Contact]) -> list[Contact]:
    """One contact per target (the topmost, then leftmost), in target order."""
    by_t: dict[int, Contact] = {}
    for ct in sorted(cts, key=lambda c: (c.target, c.y, c.x)):
        by_t.setdefault(ct.target, ct)
    return [by_t[t] for t in sorted(by_t)]


def shapes_win(
    cts: list[Contact], targets: list[GroundedNode], th: float, head: float, dropped: int = 0
) -> list[Contact]:
    """A contact on a container's outline or on a container's title within ``1.5 R``
    (``R = max(6, head * th)``) of a contact on a drawn node (shape or operator) is the same
    stroke end: a frame or title the stroke passes just before it reaches the node. On a
    connector with three or more ends (its contacts, and ``dropped`` ends it had on a
    container that is no node) the same holds for any free-text contact (a label beside the
    node, not another target); on two, another text that close is the tail of a short arrow
    (``points -> Prompt Encoder``) and stays."""
    R = max(6.0, head * th)
    solid = [c for c in cts if targets[c.target].kind not in ("text", "container")]
    titles = {n.text_ids for n in targets if n.kind == "container" and n.text_ids}

    def passed(c: Contact) -> bool:
        n = targets[c.target]
        if n.kind == "container" or (n.kind == "text" and (len(cts) + dropped >= 3 or n.text_ids in titles)):
            return any(math.hypot(c.x - o.x, c.y - o.y) <= 1.5 * R for o in solid)
        return False

    return [c for c in cts if not passed(c)]


def passes_text(
    cts: list[Contact], members: list[int], comps: dict[int, Comp], targets: list[GroundedNode], th: float, head: float
) -> list[Contact]:
    """``cts`` less the free-text contacts that the connector runs past or along: its ink (every piece
    of it, so a dashed line counts whole) reaches ``R`` to ``3 R`` from the contact
    (``R = max(6, head * th)``) in two arcs more than 100 degrees apart (:func:`opposed`),
    counting only ink reached without crossing the text's box. That is a label written
    beside a line, most often a dashed one whose nearest dash falls within the contact
    radius; a line that ends at the text reaches it from one side only, and a line entering
    the text and leaving it on the far side (an inline label, bridged by
    :func:`~sciflow.agents.topology_coder.underpass.bridge_text`) reaches its far side
    through the box. Or its ink runs along the text's nearest side (:func:`_runs_along`): a
    label above a short line that spans it.

    >>> text = GroundedNode("t", "copy", (40.0, 0.0, 80.0, 16.0), "text", 1.0, ())
    >>> line = Comp(0, 0, 20, np.ones((3, 120), bool))  # a line 4 px under the label
    >>> [c.target for c in passes_text([Contact(0, 0, 60.0, 20.0)], [0], {0: line}, [text], 16.0, 1.0)]
    []
    >>> stub = Comp(0, 0, 20, np.ones((3, 60), bool))  # a line that stops under the label
    >>> [c.target for c in passes_text([Contact(0, 0, 60.0, 20.0)], [0], {0: stub}, [text], 16.0, 1.0)]
    [0]
    >>> short = Comp(0, 28, 20, np.ones((3, 64), bool))  # a short line spanning it, from box to box
    >>> [c.target for c in passes_text([Contact(0, 0, 38.0, 20.0)], [0], {0: short}, [text], 16.0, 1.0)]
    []
    >>> brace = Comp(0, 40, 20, np.ones((3, 90), bool))  # a brace's end, hooked where the text starts
    >>> [c.target for c in passes_text([Contact(0, 0, 41.0, 20.0)], [0], {0: brace}, [text], 16.0, 1.0)]
    [0]
    >>> ring = np.zeros((40, 80), bool); ring[[0, -1], :] = True; ring[:, [0, -1]] = True
    >>> frame = Comp(0, 20, -12, ring)  # an outline around the text: the text is a box's label
    >>> [c.target for c in passes_text([Contact(0, 0, 60.0, 27.0)], [0], {0: frame}, [text], 16.0, 1.0)]
    [0]
    """
    R = max(6.0, head * th)
    pieces = [comps[m] for m in members]

    def beside(c: Contact) -> bool:
        box = targets[c.target].bbox
        return not _encloses(box, pieces, 2 * R) and (_runs_past(c, box, pieces, R) or _runs_along(c, box, pieces, R))

    return [c for c in cts if targets[c.target].kind != "text" or not beside(c)]


def _runs_along(c: Contact, box: tuple[float, float, float, float], pieces: list[Comp], R: float) -> bool:
    """Whether the connector's ink runs along the side of ``box`` nearest the contact, within
    ``R / 2 + 2`` px of it, over at least 60 % of that side, and goes on past both ends of the
    side: a label written above or below a short line, as wide as the line is long (the line
    ends at the boxes on either side, so it runs past the contact on one side only). A brace
    whose hooked end stops at the text it points to does not go on past that end; a line that
    ends at the text meets the side over its own width only; a line interrupted by an inline
    label leaves no ink beside it."""
    x0, y0, x1, y1 = box
    depth = R / 2 + 2
    # the side the contact lies beyond (at a corner: the one it lies further beyond)
    out_x, out_y = max(x0 - c.x, 0.0, c.x - x1), max(y0 - c.y, 0.0, c.y - y1)
    if out_y >= out_x:
        side = "top" if abs(c.y - y0) < abs(c.y - y1) else "bottom"
    else:
        side = "left" if abs(c.x - x0) < abs(c.x - x1) else "right"
    if side in ("top", "bottom"):
        strip = (x0, y0 - depth, x1, y0) if side == "top" else (x0, y1, x1, y1 + depth)
        axis, span = 0, x1 - x0
    else:
        strip = (x0 - depth, y0, x0, y1) if side == "left" else (x1, y0, x1 + depth, y1)
        axis, span = 1, y1 - y0
    # the line goes on past both ends of that side (a brace's hooked end stops at its text)
    ext = 2 * depth
    if axis == 0:
        beyond = ((strip[0] - ext, strip[1], strip[0] - 2, strip[3]),
                  (strip[2] + 2, strip[1], strip[2] + ext, strip[3]))
    else:
        beyond = ((strip[0], strip[1] - ext, strip[2], strip[1] - 2),
                  (strip[0], strip[3] + 2, strip[2], strip[3] + ext))
    if not all(_any_ink(pieces, b) for b in beyond):
        return False
    sx0, sy0, sx1, sy1 = (int(math.floor(strip[0])), int(math.floor(strip[1])),
                          int(math.ceil(strip[2])), int(math.ceil(strip[3])))
    cover = np.zeros(max(1, (sx1 - sx0) if axis == 0 else (sy1 - sy0)), bool)
    for p in pieces:
        ph, pw = p.mask.shape
        a0, b0 = max(sx0 - p.x0, 0), max(sy0 - p.y0, 0)
        a1, b1 = min(sx1 - p.x0, pw), min(sy1 - p.y0, ph)
        if a1 <= a0 or b1 <= b0:
            continue
        sub = p.mask[b0:b1, a0:a1]
        if axis == 0:
            cover[a0 + p.x0 - sx0 : a1 + p.x0 - sx0] |= sub.any(axis=0)
        else:
            cover[b0 + p.y0 - sy0 : b1 + p.y0 - sy0] |= sub.any(axis=1)
    return span > 0 and float(cover.sum()) >= 0.6 * span


def _runs_past(c: Contact, box: tuple[float, float, float, float], pieces: list[Comp], R: float) -> bool:
    dxs, dys = [], []
    for p in pieces:
        ys, xs = np.nonzero(p.mask)
        dx, dy = xs + p.x0 - c.x, ys + p.y0 - c.y
        sel = np.abs(np.hypot(dx, dy) - 2 * R) <= R
        dxs.append(dx[sel])
        dys.append(dy[sel])
    dx, dy = np.concatenate(dxs).astype(float), np.concatenate(dys).astype(float)
    if dx.size < 2:
        return False
    # ink reached through the text's box (shrunk 2 px) lies beyond the text, not beside it
    x0, y0, x1, y1 = box[0] + 2, box[1] + 2, box[2] - 2, box[3] - 2
    through = np.zeros(dx.size, bool)
    for t in (0.2, 0.4, 0.6, 0.8):
        sx, sy = c.x + t * dx, c.y + t * dy
        through |= (sx > x0) & (sx < x1) & (sy > y0) & (sy < y1)
    dx, dy = dx[~through], dy[~through]
    return opposed(dx, dy, np.hypot(dx, dy), 2 * R, R)


def _any_ink(pieces: list[Comp], box: tuple[float, float, float, float]) -> bool:
    x0, y0, x1, y1 = (int(math.floor(box[0])), int(math.floor(box[1])), int(math.ceil(box[2])), int(math.ceil(box[3])))
    for p in pieces:
        ph, pw = p.mask.shape
        a0, b0, a1, b1 = max(x0 - p.x0, 0), max(y0 - p.y0, 0), min(x1 - p.x0, pw), min(y1 - p.y0, ph)
        if a1 > a0 and b1 > b0 and p.mask[b0:b1, a0:a1].any():
            return True
    return False


def _encloses(box: tuple[float, float, float, float], pieces: list[Comp], depth: float) -> bool:
    """Whether the ``pieces`` hold ink on three or four sides of ``box``, within ``depth`` px of
    it (each side's strip as wide as the box): the outline of a box the shape finder missed
    (a dashed one, its dashes joined to the arrow that ends on it) around the text, not a
    line passing the text by."""
    x0, y0, x1, y1 = box
    strips = ((x0, y0 - depth, x1, y0), (x0, y1, x1, y1 + depth), (x0 - depth, y0, x0, y1), (x1, y0, x1 + depth, y1))
    return sum(_any_ink(pieces, s) for s in strips) >= 3
