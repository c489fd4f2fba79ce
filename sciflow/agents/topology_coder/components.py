"""Step 2a: connector pieces, the 8-connected ink components of at least 2 px.

Each piece is described by its skeleton: its ends (with the unit tangent leaving each end,
from the skeleton pixels within 6 px, and the length of the branch from each end to the
first junction), its stroke width (from the distance transform on the skeleton) and its
length (skeleton pixels). Pieces of at most 3 px are dots: one end at their centre, no
tangent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np


@dataclass
class Comp:
    """One ink component: its crop ``mask`` at ``(x0, y0)`` and its skeleton description."""

    idx: int
    x0: int
    y0: int
    mask: np.ndarray  # crop, bool
    ends: list[tuple[float, float, float, float]] = field(default_factory=list)  # x, y, dx, dy
    # per end: skeleton pixels from it to the first junction (inf: none within 64 px)
    spurs: list[float] = field(default_factory=list)
    width: float = 1.0
    length: float = 0.0


def skeleton(mask: np.ndarray) -> np.ndarray:
    from skimage.morphology import skeletonize  # noqa: PLC0415

    return skeletonize(mask)


def _neighbours_and_self(skel: np.ndarray) -> np.ndarray:
    """Per pixel, the skeleton pixels in its 3 x 3 neighbourhood (itself included)."""
    return cv2.filter2D(skel.astype(np.uint8), -1, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT)


def endpoints(skel: np.ndarray) -> list[tuple[int, int]]:
    """Skeleton pixels with exactly one 8-neighbour."""
    ys, xs = np.nonzero(skel & (_neighbours_and_self(skel) == 2))
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


def junction_pixels(skel: np.ndarray) -> np.ndarray:
    """Skeleton pixels with three or more 8-neighbours (bool): where branches meet."""
    return skel.astype(bool) & (_neighbours_and_self(skel) >= 4)


def ink_components(ink: np.ndarray) -> tuple[np.ndarray, dict[int, Comp]]:
    """The label image of ``ink``'s 8-connected components and the described pieces of at
    least 2 px, by label."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    comps: dict[int, Comp] = {}
    for i in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        if area < 2:
            continue
        m = labels[y : y + bh, x : x + bw] == i
        comps[i] = Comp(i, x, y, m)
    for c in comps.values():
        describe(c)
    return labels, comps


def describe(c: Comp) -> None:
    """Fill in ``c``'s ends, width and length from its skeleton."""
    m = c.mask
    hgt, wid = m.shape
    if max(hgt, wid) <= 3:
        cy, cx = np.nonzero(m)
        c.ends = [(c.x0 + float(cx.mean()), c.y0 + float(cy.mean()), 0.0, 0.0)]
        c.width = float(min(hgt, wid))
        c.length = float(max(hgt, wid))
        c.spurs = [float("inf")]
        return
    sk = skeleton(m)
    dt = cv2.distanceTransform(np.pad(m, 1).astype(np.uint8), cv2.DIST_L2, 3)[1:-1, 1:-1]
    vals = dt[sk]
    c.width = float(max(1.0, 2.0 * np.median(vals) - 0.5)) if vals.size else 1.0
    c.length = float(sk.sum())
    sy, sx = np.nonzero(sk)
    pts = np.stack([sx, sy], axis=1).astype(float)
    ends = []
    for ex, ey in endpoints(sk):
        d2 = (pts[:, 0] - ex) ** 2 + (pts[:, 1] - ey) ** 2
        near = pts[(d2 <= 36) & (d2 > 0)]
        if len(near) == 0:
            dx = dy = 0.0
        else:
            v = np.array([ex, ey]) - near.mean(axis=0)
            nv = float(np.hypot(*v)) or 1.0
            dx, dy = float(v[0] / nv), float(v[1] / nv)
        ends.append((float(ex), float(ey), dx, dy))
    junc = junction_pixels(sk)
    walks = [first_junction(sk, ex, ey, junc) for ex, ey, _, _ in ends]
    ends, c.spurs = square_ends(sk, junc, ends, walks, c.width)
    c.ends = [(c.x0 + ex, c.y0 + ey, dx, dy) for ex, ey, dx, dy in ends]


def square_ends(
    sk: np.ndarray,
    junc: np.ndarray,
    ends: list[tuple[float, float, float, float]],
    walks: list[tuple[float, tuple[int, int] | None]],
    width: float,
) -> tuple[list[tuple[float, float, float, float]], list[float]]:
    """The ends of a skeleton, and their spurs, with each square end of a thick stroke made
    one line end; ``walks`` holds each end's :func:`first_junction`.

    The skeleton of a stroke's flat end forks a half width before it into two branches
    running to the corners. Two ends whose branches (their spurs) are each at most
    ``0.8 width`` long and meet the same junction are such a fork: they are replaced by one
    end midway between them, leaving along the line (from the junction towards that
    midpoint; its direction read from the skeleton 1 to 2.5 widths back from that midpoint,
    which lies on the line's axis whatever the line's slope), with no junction behind it
    (``inf``). An arrowhead's wings are longer than
    that (a head is wider than its shaft) and stay. Only strokes over 4 px wide fork so.

    >>> sk = np.zeros((13, 60), bool)
    >>> sk[6, 6:54] = True                           # the axis of a 12 px wide dash ...
    >>> for k in range(1, 6):                        # ... forking to its four corners
    ...     sk[6 - k, 6 - k] = sk[6 + k, 6 - k] = sk[6 - k, 53 + k] = sk[6 + k, 53 + k] = True
    >>> ends = [(1.0, 1.0, -0.7, -0.7), (1.0, 11.0, -0.7, 0.7), (58.0, 1.0, 0.7, -0.7), (58.0, 11.0, 0.7, 0.7)]
    >>> junc = junction_pixels(sk)
    >>> got, spurs = square_ends(sk, junc, ends, [first_junction(sk, x, y, junc) for x, y, _, _ in ends], 12.0)
    >>> [(x, y, round(dx, 2), round(dy, 2)) for x, y, dx, dy in got], spurs
    ([(1.0, 6.0, -1.0, 0.0), (58.0, 6.0, 1.0, 0.0)], [inf, inf])
    """
    spurs = [depth for depth, _ in walks]
    if width <= 4.0:
        return ends, spurs
    short = [k for k, sp in enumerate(spurs) if sp <= 0.8 * width]
    if len(short) < 2:
        return ends, spurs
    sy, sx = np.nonzero(sk)
    pts = np.stack([sx, sy], axis=1).astype(float)
    _, jlab = cv2.connectedComponents(cv2.dilate(junc.astype(np.uint8), np.ones((3, 3), np.uint8)), connectivity=8)
    fork: dict[int, list[int]] = {}
    for k in short:
        met = walks[k][1]
        if met is not None:  # the fork's junction pixels are one region of the dilated map
            fork.setdefault(int(jlab[met[1], met[0]]), []).append(k)
    drop: set[int] = set()
    out_ends: list[tuple[float, float, float, float]] = []
    out_spurs: list[float] = []
    for _, ks in sorted(fork.items()):
        if len(ks) != 2:
            continue
        (ax, ay, _, _), (bx, by, _, _) = ends[ks[0]], ends[ks[1]]
        mx, my = (ax + bx) / 2, (ay + by) / 2
        d = np.hypot(pts[:, 0] - mx, pts[:, 1] - my)
        back = pts[(d >= width) & (d <= 2.5 * width)]
        if len(back) == 0:
            continue
        v = np.array([mx, my]) - back.mean(axis=0)
        nv = float(np.hypot(*v))
        if nv == 0:
            continue
        drop.update(ks)
        out_ends.append((mx, my, float(v[0] / nv), float(v[1] / nv)))
        out_spurs.append(float("inf"))
    keep = [k for k in range(len(ends)) if k not in drop]
    return [ends[k] for k in keep] + out_ends, [spurs[k] for k in keep] + out_spurs


def branch_to_junction(
    sk: np.ndarray, ex: float, ey: float, limit: int = 64, junctions: np.ndarray | None = None
) -> float:
    """Skeleton pixels walked from the end ``(ex, ey)`` of skeleton ``sk`` to the nearest
    junction (:func:`junction_pixels`, also those of
    :func:`~sciflow.agents.topology_coder.reach.reachability`; pass ``junctions`` when
    already computed); ``inf`` when its branch meets none (it runs to another end) within
    ``limit`` px. A short branch to a junction is a spur: an arrowhead's wing, a serif, a stub
    at a crossing, not the end of a line.

    >>> sk = np.zeros((9, 12), bool)
    >>> sk[4, 0:12] = True                      # a line ...
    >>> sk[1:4, 9] = True                       # ... with a 3 px spur up at x = 9
    >>> branch_to_junction(sk, 9, 1), branch_to_junction(sk, 0, 4), branch_to_junction(sk, 11, 4)
    (2.0, 8.0, 1.0)
    >>> branch_to_junction(sk[4:5], 0, 0)       # the line alone: no junction
    inf
    """
    junc = junction_pixels(sk) if junctions is None else junctions
    return first_junction(sk, ex, ey, junc, limit)[0]


def first_junction(
    sk: np.ndarray, ex: float, ey: float, junctions: np.ndarray, limit: int = 64
) -> tuple[float, tuple[int, int] | None]:
    """``(steps, (x, y))``: the skeleton pixels walked from the end ``(ex, ey)`` of ``sk`` to
    the first of its ``junctions`` met, and that junction pixel; ``(inf, None)`` when none
    lies within ``limit`` steps (see :func:`branch_to_junction`)."""
    hgt, wid = sk.shape

    def nbrs(x: int, y: int) -> list[tuple[int, int]]:
        return [
            (x + i, y + j)
            for j in (-1, 0, 1)
            for i in (-1, 0, 1)
            if (i or j) and 0 <= x + i < wid and 0 <= y + j < hgt and sk[y + j, x + i]
        ]

    start = (int(round(ex)), int(round(ey)))
    seen = {start}
    layer = [start]
    depth = 0
    while layer and depth < limit:
        depth += 1
        nxt = list(dict.fromkeys(p for q in layer for p in nbrs(*q) if p not in seen))
        met = [(x, y) for x, y in nxt if junctions[y, x]]
        if met:
            return float(depth), met[0]
        seen.update(nxt)
        layer = nxt
    return float("inf"), None


def line_ends(c: Comp, spur: float) -> list[tuple[float, float, float, float]]:
    """The ends of piece ``c`` whose skeleton branch runs over ``spur`` px before any
    junction (:attr:`Comp.spurs`): the ends of its lines, not the wings of its heads.

    >>> c = Comp(1, 0, 0, np.zeros((1, 1), bool), ends=[(0, 0, 1, 0), (9, 4, 0, 1)], spurs=[3.0, float("inf")])
    >>> line_ends(c, 5.0), len(line_ends(c, 2.0))
    ([(9, 4, 0, 1)], 2)
    """
    if not c.spurs:
        return list(c.ends)
    return [e for e, s in zip(c.ends, c.spurs, strict=True) if s > spur]


def union_find(keys: Any) -> tuple[dict[int, int], Callable[[int], int]]:
    """``(parent, find)`` over ``keys``: pieces joined into one connector share a root;
    ``parent[find(a)] = find(b)`` joins ``a``'s connector to ``b``'s."""
    parent = {i: i for i in keys}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    return parent, find
