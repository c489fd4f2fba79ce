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
from dataclasses import dataclass

import cv2
import numpy as np

from sciflow.agents.diagram import GroundedNode
from sciflow.agents.topology_coder.components import Comp


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


def extend_dangling(
    groups: dict[int, list[int]],
    by_group: dict[int, list[Contact]],
    comps: dict[int, Comp],
    dist: np.ndarray,
    nearest: np.ndarray,
    targets: list[GroundedNode],
    r: float,
    ext: float,
) -> None:
    """A connector end that stops short of everything (a gap before a free-text input or
    a box) is followed along its tangent for up to ``ext`` (``extend * th``) px; the first
    node candidate reached (not a container, not already an end of this connector) gets a
    contact there."""
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


def shapes_win(cts: list[Contact], targets: list[GroundedNode], th: float, head: float) -> list[Contact]:
    """A contact on a container's outline or on a container's title within ``1.5 R``
    (``R = max(6, head * th)``) of a contact on a drawn node (shape or operator) is the same
    stroke end: a frame or title the stroke passes just before it reaches the node. On a
    connector with three or more contacts the same holds for any free-text contact (a label
    beside the node, not another target); on two, another text that close is the tail of a
    short arrow (``points -> Prompt Encoder``) and stays."""
    R = max(6.0, head * th)
    solid = [c for c in cts if targets[c.target].kind not in ("text", "container")]
    titles = {n.text_ids for n in targets if n.kind == "container" and n.text_ids}

    def passed(c: Contact) -> bool:
        n = targets[c.target]
        if n.kind == "container" or (n.kind == "text" and (len(cts) >= 3 or n.text_ids in titles)):
            return any(math.hypot(c.x - o.x, c.y - o.y) <= 1.5 * R for o in solid)
        return False

    return [c for c in cts if not passed(c)]
