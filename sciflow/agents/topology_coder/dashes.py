"""Step 2b: dash bridging, joining pieces of one connector across the gaps between them.

Pieces are joined when (a) a skeleton end's tangent runs into another piece within ``gap``
(``max(dash_gap_min, dash_gap * th)``) px, or within ``DASH_GAP_WIDTHS`` x the piece's own
stroke width where that is further and the piece met is as thick (a thick dashed line: dash
patterns are drawn in multiples of the line's width, so its gaps grow with it), or (b) two
skeleton ends closer than ``gap`` point at each other (within 45 degrees; dots need no
tangent), or (c) the last piece of a run of dots or short dashes (three or more pieces, or
two dots) meets another piece within ``gap`` px along the run's own direction (the arrowhead
at the end of a dotted line). An end whose skeleton branch meets a junction within ``spur``
px (the wing of an arrowhead, a serif) is no dash end: its tangent points off the line, often
at the start of another arrow beside it. A connector of three or more joined pieces is
``dashed`` (pieces at least 2 x stroke width long) or ``dotted``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.spatial import cKDTree

from sciflow.agents.topology_coder.components import Comp, line_ends

# the reach along a thick piece's tangent, in its stroke widths: a gap of 3 widths (the
# common dash patterns' gap) plus the skeleton's inset of half a width at each end, and slack
DASH_GAP_WIDTHS = 5.0


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
    # (a) an end whose tangent runs into another piece within the gap (e.g. an arrowhead)
    for c in comps.values():
        for ex, ey, dx, dy in line_ends(c, spur):
            if dx == 0 and dy == 0:
                continue
            hit = ray_hit(labels, comps, ex, ey, dx, dy, gap, lambda j, c=c: j == c.idx)
            if hit is None and DASH_GAP_WIDTHS * c.width > gap:
                hit = ray_hit(labels, comps, ex, ey, dx, dy, DASH_GAP_WIDTHS * c.width,
                              lambda j, c=c: j == c.idx or not _as_thick(comps[j], c))
            if hit is not None:
                j, hx, hy = hit
                parent[find(c.idx)] = find(j)
                joined.update((c.idx, j))
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
    _continue_runs(comps, gap, find, parent, labels, bridges, joined)
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


def _as_thick(a: Comp, b: Comp) -> bool:
    """Whether two pieces' stroke widths are within 1.5x of each other."""
    return max(a.width, b.width) <= 1.5 * min(a.width, b.width)


def ray_hit(
    labels: np.ndarray,
    comps: dict[int, Comp],
    x: float,
    y: float,
    dx: float,
    dy: float,
    reach: float,
    own: Callable[[int], bool],
) -> tuple[int, int, int] | None:
    """``(piece, x, y)`` of the first pixel of a piece that is not ``own`` met along the ray
    from ``(x, y)`` in unit direction ``(dx, dy)``, 1 to ``reach`` px out, on the ray or one
    pixel to either side of it; ``None`` when the ray meets none.

    >>> labels = np.zeros((5, 12), np.int32); labels[2, 0:3] = 1; labels[1:4, 8:11] = 2
    >>> comps = {1: Comp(1, 0, 2, np.ones((1, 3), bool)), 2: Comp(2, 8, 1, np.ones((3, 3), bool))}
    >>> ray_hit(labels, comps, 2, 2, 1.0, 0.0, 8, lambda j: j == 1)
    (2, 8, 2)
    >>> ray_hit(labels, comps, 2, 2, 1.0, 0.0, 5, lambda j: j == 1) is None
    True
    """
    h, w = labels.shape
    for t in np.arange(1.0, reach + 0.5, 1.0):
        for lat in (0.0, -1.0, 1.0):
            px = int(round(x + dx * t - dy * lat))
            py = int(round(y + dy * t + dx * lat))
            if 0 <= px < w and 0 <= py < h:
                j = int(labels[py, px])
                if j and j in comps and not own(j):
                    return j, px, py
    return None


def _continue_runs(
    comps: dict[int, Comp],
    gap: float,
    find: Callable[[int], int],
    parent: dict[int, int],
    labels: np.ndarray,
    bridges: list[tuple[float, float, float, float]],
    joined: set[int],
) -> None:
    """(c) A run of dots or short dashes goes on in its own direction. A dot has no tangent of
    its own, and the arrowhead at the end of a dotted line has no line end facing the dots
    (its skeleton ends are its tip and its wings), so (a) and (b) leave the head, or the
    dotted line's last stretch, as a piece apart. The last piece of each run of joined short
    pieces (each at most ``2 gap`` across and ``max(3, 0.4 gap)`` wide) is followed over ``gap``
    px beyond its own ink along the direction from its nearest neighbour in the run through
    it, and joined to a piece it meets that is at most ``2 gap`` across (a head, a dash). A run
    of two dots (each at most that width across) is followed too."""
    runs: dict[int, list[int]] = {}
    for i in sorted(joined):
        runs.setdefault(find(i), []).append(i)
    # dots and dashes: short and thin (not icons, not a frame's thick dashes)
    thin = max(3.0, 0.4 * gap)
    short = {i for i in joined if max(comps[i].mask.shape) <= 2 * gap and comps[i].width <= thin}
    for mem in runs.values():
        run = [m for m in mem if m in short]
        # a dotted or dashed line, by this module's own count; two dots will do (a label or a
        # frame the line passes under leaves its last stretch only a few dots long)
        if len(run) < 3 and not (len(run) == 2 and all(max(comps[m].mask.shape) <= thin for m in run)):
            continue
        pix = {}  # each piece's pixels, page coordinates
        for m in run:
            ys, xs = np.nonzero(comps[m].mask)
            pix[m] = (xs + comps[m].x0, ys + comps[m].y0)
        cent = {m: (float(xs.mean()), float(ys.mean())) for m, (xs, ys) in pix.items()}
        for m in run:
            cx, cy = cent[m]
            dist = {o: math.hypot(cent[o][0] - cx, cent[o][1] - cy) for o in run if o != m}
            n = min(dist, key=lambda o: (dist[o], o))
            if dist[n] < 1.0 or dist[n] > 3 * gap:
                continue
            ux, uy = (cx - cent[n][0]) / dist[n], (cy - cent[n][1]) / dist[n]
            # the last piece of its run: no piece of the run lies ahead of it
            if any((cent[o][0] - cx) * ux + (cent[o][1] - cy) * uy > 0.5 for o in dist if dist[o] <= 3 * gap):
                continue
            xs, ys = pix[m]
            ahead = float(np.max((xs - cx) * ux + (ys - cy) * uy))
            root = find(m)
            hit = ray_hit(labels, comps, cx + ux * ahead, cy + uy * ahead, ux, uy, gap,
                          lambda j, root=root: find(j) == root)
            if hit is not None and max(comps[hit[0]].mask.shape) <= 2 * gap:  # a head or a dash, no box
                j, hx, hy = hit
                parent[find(j)] = root
                joined.add(j)
                bridges.append((cx + ux * ahead, cy + uy * ahead, float(hx), float(hy)))
