"""Step 2b: dash bridging, joining pieces of one connector across the gaps between them.

Pieces are joined when (a) a skeleton end's tangent runs into another piece within ``gap``
(``max(dash_gap_min, dash_gap * th)``) px, or (b) two skeleton ends closer than ``gap`` point
at each other (within 45 degrees; dots need no tangent). An end whose skeleton branch meets a
junction within ``spur`` px (the wing of an arrowhead, a serif) is no dash end: its tangent
points off the line, often at the start of another arrow beside it. A connector of three or more joined
pieces is ``dashed`` (pieces at least 2 x stroke width long) or ``dotted``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.spatial import cKDTree

from sciflow.agents.topology_coder.components import Comp, line_ends


def bridge_dashes(
    comps: dict[int, Comp],
    gap: float,
    find: Callable[[int], int],
    parent: dict[int, int],
    labels: np.ndarray,
    bridges: list[tuple[float, float, float, float]],
    spur: float = 0.0,
) -> dict[int, str]:
    """Join the pieces of dashed and dotted connectors (and strokes that stop short of their
    arrowhead) in ``parent``, appending each gap bridged to ``bridges``; returns the style
    (``dashed`` / ``dotted``) of every connector root of three or more joined pieces."""
    joined: set[int] = set()
    h, w = labels.shape
    # an end whose tangent runs into another piece within the gap (e.g. an arrowhead)
    for c in comps.values():
        for ex, ey, dx, dy in line_ends(c, spur):
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
        for e in line_ends(c, spur):
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
