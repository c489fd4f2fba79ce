"""Block arrows: a wide arrow drawn as a closed shape (a shaft, a head wider than the shaft,
outlined or filled), standing in the gap between the two boxes it joins.

Why: stroke tracing finds connectors by their ends; the outline of a block arrow is a closed
loop with no end and a filled one a blob, and neither touches the boxes (a block arrow sits
between them), so the edge was lost. What marks one in the image is its silhouette: across its
long axis it is as wide as a shaft over one part of its length, then wider, then narrows to a
point; the point is the head.

Exact behaviour (step 5b of :mod:`sciflow.agents.topology_coder`), on every ink piece
before step 2 joins pieces (a piece read as a block arrow is no stroke: it takes part in no
bridge and has no contacts), except a filled one with a piece as thick as its shaft behind
its tail (the last dash of a thick dashed line with its head, :func:`continues_behind`);
those, and every one-piece connector that gave no edge as a stroke, are tested again after
tracing. Its tip may touch a node, its tail seldom does:

1. The silhouette is the piece with its holes filled. Its long axis is the principal axis of its
   pixels, its length ``L`` their extent along it, at least ``min_len`` (1) and at most
   ``max_len`` (15) text heights. The width profile is the extent across the axis of each
   1 px slice along it.
2. It is an arrow when, from one end (the tail): the slices of the first 35 % of the length
   (after the first 5 %) are within 25 % of their median ``s`` (the shaft) for at least 80 %
   of them; the widest slice ``W`` is at least 1.5 ``s`` and lies past 40 % of the length;
   from it the width falls to at most 0.45 ``W`` in the last 5 % (the tip), never rising
   again by more than 15 % of ``W``. Either end may be the tail; a silhouette that passes
   from both ends is no arrow (a double arrow is left to the stroke tracer). The shaft is at
   least ``max(6, min_shaft x th)`` px wide (``min_shaft`` 0.3): a line with a filled head has
   the same profile, on a shaft as thin as its stroke. A piece whose pen is at most half the
   shaft's width is an outline and must be closed: every skeleton branch longer than
   ``max(6, 2 x pen)`` px hanging off it ends at its tail or tip, where a mask may have cut
   it open (within ``shaft / 2 + 2 pen`` of the tail point, ``max(shaft / 2, 3 pen)`` of the
   tip point; at most four such ends); the lines of a connector tree that enclose a region
   hang off it elsewhere.
3. From the tip a ray runs on along the axis and from the tail back along it, up to
   ``reach`` (3) text heights or the arrow's length if longer; the first node candidate
   each ray comes within the contact radius of is that end's node. An edge joins the tail's
   node to the tip's node when both are found and differ, with confidence 0.8.
"""

from __future__ import annotations

import math
from collections.abc import Container
from dataclasses import dataclass

import cv2
import numpy as np

from sciflow.agents.diagram import EdgeEvidence
from sciflow.agents.topology_coder.components import Comp
from sciflow.agents.topology_coder.dashes import ray_hit


@dataclass(frozen=True)
class BlockArrow:
    """A block arrow's tail and tip points (image coordinates), its unit direction (tail to
    tip), length and the widths of its shaft and head."""

    tail: tuple[float, float]
    tip: tuple[float, float]
    direction: tuple[float, float]
    length: float
    shaft: float
    head: float


def _filled(mask: np.ndarray) -> np.ndarray:
    """``mask`` with every hole filled (the region the outermost outline encloses)."""
    padded = np.pad(mask.astype(np.uint8), 1)
    outside = padded.copy()
    ff = np.zeros((padded.shape[0] + 2, padded.shape[1] + 2), np.uint8)
    cv2.floodFill(outside, ff, (0, 0), 2)
    return (outside != 2)[1:-1, 1:-1]


def width_profile(mask: np.ndarray) -> tuple[np.ndarray, tuple[float, float], tuple[float, float], float]:
    """The silhouette's width across its principal axis, one value per 1 px slice from the
    axis's low end, with the axis's unit vector, the centroid and the low end's coordinate
    along the axis (crop coordinates, x then y).

    >>> m = np.zeros((20, 60), bool); m[6:14, 5:55] = True     # a bar 50 long, 8 wide
    >>> prof, u, c, t0 = width_profile(m)
    >>> len(prof), float(np.median(prof)), tuple(round(abs(v), 3) for v in u)
    (50, 8.0, (1.0, 0.0))
    """
    ys, xs = np.nonzero(mask)
    pts = np.stack([xs, ys], axis=1).astype(np.float64) + 0.5
    c = pts.mean(axis=0)
    cov = np.cov((pts - c).T)
    vals, vecs = np.linalg.eigh(cov)
    u = vecs[:, int(np.argmax(vals))]
    # a fixed orientation of the axis (deterministic whatever eigh returns)
    if u[0] < -1e-9 or (abs(u[0]) <= 1e-9 and u[1] < 0):
        u = -u
    n = np.array([-u[1], u[0]])
    t = (pts - c) @ u
    s = (pts - c) @ n
    t0 = float(np.floor(t.min()))
    idx = np.floor(t - t0).astype(int)
    nb = int(idx.max()) + 1
    lo = np.full(nb, np.inf)
    hi = np.full(nb, -np.inf)
    np.minimum.at(lo, idx, s)
    np.maximum.at(hi, idx, s)
    prof = np.where(np.isfinite(lo), hi - lo + 1.0, 0.0)
    return prof, (float(u[0]), float(u[1])), (float(c[0]), float(c[1])), t0


def _arrow_from_start(prof: np.ndarray) -> tuple[float, float] | None:
    """(shaft, head) widths when ``prof`` reads as an arrow whose tail is at index 0."""
    n = len(prof)
    a, b = int(0.05 * n), max(int(0.05 * n) + 1, int(0.40 * n))
    shaft = prof[a:b]
    s = float(np.median(shaft))
    if s <= 0 or float(np.mean(np.abs(shaft - s) <= 0.25 * s)) < 0.8:
        return None
    k = int(np.argmax(prof))
    w = float(prof[k])
    if w < 1.5 * s or k < 0.4 * n:
        return None
    rest = prof[k:]
    if float(np.min(prof[max(k, n - max(1, int(0.05 * n))):])) > 0.45 * w:
        return None
    run_min = np.minimum.accumulate(rest)
    if float(np.max(rest - run_min)) > 0.15 * w:
        return None
    return s, w


def block_arrow(mask: np.ndarray, x0: int = 0, y0: int = 0) -> BlockArrow | None:
    """The block arrow that piece ``mask`` (at ``x0, y0`` in the image) draws, or None
    (steps 1-2 of the module docstring, without the length bounds).

    >>> m = np.zeros((40, 80), np.uint8)
    >>> poly = np.array([[5, 15], [50, 15], [50, 5], [75, 20], [50, 35], [50, 25], [5, 25]], np.int32)
    >>> _ = cv2.polylines(m, [poly], True, 1, 2)                # a hollow arrow pointing right
    >>> a = block_arrow(m.astype(bool), 100, 200)               # the 2 px pen adds 1 px a side
    >>> (round(a.tail[0]), round(a.tip[0]), a.direction, round(a.shaft), round(a.head))
    (104, 177, (1.0, 0.0), 13, 33)
    >>> block_arrow(np.flip(m, axis=1).astype(bool)).direction  # the same pointing left
    (-1.0, 0.0)
    >>> bar = np.zeros((20, 60), bool); bar[6:14, 5:55] = True
    >>> block_arrow(bar) is None
    True
    """
    sil = _filled(mask)
    if sil.sum() < 16:
        return None
    prof, u, c, t0 = width_profile(sil)
    fwd, back = _arrow_from_start(prof), _arrow_from_start(prof[::-1])
    if (fwd is None) == (back is None):
        return None
    n = len(prof)
    ux, uy = u
    if fwd is not None:
        d, (shaft, head), t_tail, t_tip = (ux, uy), fwd, t0, t0 + n
    else:
        d, (shaft, head), t_tail, t_tip = (-ux, -uy), back, t0 + n, t0  # type: ignore[misc]
    cx, cy = c[0] + x0, c[1] + y0
    tail = (cx + ux * t_tail, cy + uy * t_tail)
    tip = (cx + ux * t_tip, cy + uy * t_tip)
    d = (round(d[0], 6) + 0.0, round(d[1], 6) + 0.0)
    return BlockArrow(tail, tip, d, float(n), shaft, head)


def ray_target(start: tuple[float, float], d: tuple[float, float], reach: float, dist: np.ndarray,
               nearest: np.ndarray, r_contact: float, skip: np.ndarray | None = None) -> int | None:
    """Index (into the node candidates) of the first target that the ray from ``start`` along
    ``d`` comes within ``r_contact`` of in ``reach`` px (``dist`` / ``nearest``:
    :func:`~sciflow.agents.topology_coder.attach.nearest_targets`), or None. Pixels where
    ``skip`` is set (the arrow itself) are passed over.

    >>> dist = np.full((10, 40), 99.0); nearest = np.zeros((10, 40), np.int32)
    >>> dist[:, 30:] = 0.0; nearest[:, 30:] = 3                 # target index 2 from x = 30
    >>> ray_target((5.0, 5.0), (1.0, 0.0), 30, dist, nearest, 2.0)
    2
    >>> ray_target((5.0, 5.0), (1.0, 0.0), 10, dist, nearest, 2.0) is None    # out of reach
    True
    """
    h, w = dist.shape
    for k in range(1, int(math.ceil(reach)) + 1):
        x, y = int(round(start[0] + d[0] * k)), int(round(start[1] + d[1] * k))
        if not (0 <= x < w and 0 <= y < h):
            return None
        if skip is not None and skip[y, x]:
            continue
        if dist[y, x] <= r_contact and nearest[y, x] > 0:
            return int(nearest[y, x]) - 1
    return None


def block_pieces(
    comps: dict[int, Comp],
    th: float,
    *,
    min_len: float = 1.0,
    max_len: float = 15.0,
    min_shaft: float = 0.3,
) -> dict[int, BlockArrow]:
    """The pieces of ``comps`` (index -> :class:`~.components.Comp`) that are block arrows
    (steps 1-2 of the module docstring, with the length and shaft bounds), by index.

    >>> from sciflow.agents.topology_coder.components import ink_components
    >>> img = np.zeros((100, 90), np.uint8)
    >>> poly = np.array([[5, 15], [50, 15], [50, 5], [75, 20], [50, 35], [50, 25], [5, 25]], np.int32)
    >>> _ = cv2.fillPoly(img, [poly], 1)                        # a filled block arrow
    >>> _ = cv2.polylines(img, [poly + [0, 50]], True, 1, 1)    # the same drawn as an outline
    >>> img[90:93, 5:75] = 1                                    # a plain line: no block arrow
    >>> _, comps = ink_components(img)
    >>> sorted(block_pieces(comps, th=20.0))
    [1, 2]
    """
    out: dict[int, BlockArrow] = {}
    for i in sorted(comps):
        c = comps[i]
        hh, ww = c.mask.shape
        if max(hh, ww) < min_len * th or max(hh, ww) > max_len * th * 1.5:
            continue
        a = block_arrow(c.mask, c.x0, c.y0)
        if a is None or not (min_len * th <= a.length <= max_len * th) or a.shaft < max(6.0, min_shaft * th):
            continue
        if c.width <= 0.5 * a.shaft and not _closed_outline(c, a):  # an outline (pen << shaft)
            continue
        out[i] = a
    return out


def _closed_outline(c: Comp, a: BlockArrow) -> bool:
    """Whether outline piece ``c`` draws arrow ``a``'s closed contour: every skeleton branch
    longer than ``max(6, 2 x pen)`` px that hangs off it ends where a node's or a label's
    mask may have cut the outline open, within ``shaft / 2 + 2 pen`` of the tail point or
    ``max(shaft / 2, 3 pen)`` of the tip point, and there are at most four such ends. A fan
    of connectors whose lines enclose a region has long dangling lines elsewhere (to its
    heads, along its sides)."""
    pen = max(1.0, c.width)
    loose = [(x, y) for (x, y, _, _), sp in zip(c.ends, c.spurs, strict=True) if sp > max(6.0, 2.0 * pen)]
    if len(loose) > 4:
        return False
    near_tail, near_tip = a.shaft / 2 + 2 * pen, max(a.shaft / 2, 3 * pen)
    return all(math.hypot(x - a.tail[0], y - a.tail[1]) <= near_tail
               or math.hypot(x - a.tip[0], y - a.tip[1]) <= near_tip for x, y in loose)


def continues_behind(
    a: BlockArrow, idx: int, labels: np.ndarray, comps: dict[int, Comp], arrows: Container[int] = ()
) -> bool:
    """Whether a piece as thick as arrow ``a``'s shaft, and no other block arrow (``arrows``),
    lies behind its tail, within 5 shaft widths along its axis (``labels``: the piece label
    image; ``idx``: the arrow's piece): the last dash of a thick dashed line with its head,
    not a block arrow standing alone.

    >>> from sciflow.agents.topology_coder.components import ink_components
    >>> img = np.zeros((40, 160), np.uint8)
    >>> poly = np.array([[75, 15], [120, 15], [120, 5], [145, 20], [120, 35], [120, 25], [75, 25]], np.int32)
    >>> _ = cv2.fillPoly(img, [poly], 1)
    >>> labels, comps = ink_components(img)
    >>> a = block_arrow(comps[1].mask, comps[1].x0, comps[1].y0)
    >>> continues_behind(a, 1, labels, comps)
    False
    >>> img[15:26, 10:60] = 1                                   # the dash before it
    >>> labels, comps = ink_components(img)                    # (the arrow is still piece 1)
    >>> continues_behind(a, 1, labels, comps)
    True
    """
    back = (-a.direction[0], -a.direction[1])
    hit = ray_hit(labels, comps, a.tail[0], a.tail[1], back[0], back[1], 5.0 * a.shaft,
                  lambda j: j == idx or j not in comps or j in arrows)
    return hit is not None and comps[hit[0]].width >= 0.5 * a.shaft


def block_edges(
    blocks: dict[int, BlockArrow],
    comps: dict[int, Comp],
    dist: np.ndarray,
    nearest: np.ndarray,
    targets: list,
    th: float,
    r_contact: float,
    *,
    reach: float = 3.0,
) -> list[EdgeEvidence]:
    """Step 3 of the module docstring over every block arrow ``blocks`` (piece index ->
    :class:`BlockArrow`, from :func:`block_pieces`; ``comps``: the pieces by index)."""
    out: list[EdgeEvidence] = []
    for i in sorted(blocks):
        a, c = blocks[i], comps[i]
        hh, ww = c.mask.shape
        skip = np.zeros(dist.shape, bool)
        skip[c.y0:c.y0 + hh, c.x0:c.x0 + ww] = _filled(c.mask)
        far = max(reach * th, a.length)
        head = ray_target(a.tip, a.direction, far, dist, nearest, r_contact, skip)
        back = (-a.direction[0], -a.direction[1])
        tail = ray_target(a.tail, back, far, dist, nearest, r_contact, skip)
        if head is None or tail is None or head == tail:
            continue
        out.append(EdgeEvidence(targets[tail].id, targets[head].id, 0.8, "block"))
    return out
