"""Step 2a: connector pieces, the 8-connected ink components of at least 2 px.

Each piece is described by its skeleton: its ends (with the unit tangent leaving each end,
from the skeleton pixels within 6 px), its stroke width (from the distance transform on the
skeleton) and its length (skeleton pixels). Pieces of at most 3 px are dots: one end at
their centre, no tangent.
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
    width: float = 1.0
    length: float = 0.0


def skeleton(mask: np.ndarray) -> np.ndarray:
    from skimage.morphology import skeletonize  # noqa: PLC0415

    return skeletonize(mask)


def endpoints(skel: np.ndarray) -> list[tuple[int, int]]:
    """Skeleton pixels with exactly one 8-neighbour."""
    k = np.ones((3, 3), np.uint8)
    nb = cv2.filter2D(skel.astype(np.uint8), -1, k, borderType=cv2.BORDER_CONSTANT)
    ys, xs = np.nonzero(skel & (nb == 2))
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


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
        ends.append((c.x0 + ex, c.y0 + ey, dx, dy))
    c.ends = ends


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
