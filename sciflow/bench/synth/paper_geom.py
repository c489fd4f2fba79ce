"""Geometry helpers of the ``paper`` style: paths as command lists, flattening, distances,
box tests and path transposition."""

from __future__ import annotations

import math
from typing import Any

Box = tuple[float, float, float, float]
Pt = tuple[float, float]
Path = list[tuple[Any, ...]]  # ("M", x, y) | ("L", x, y) | ("C", x1, y1, x2, y2, x, y)


def flatten(path: Path, steps: int = 16) -> list[Pt]:
    pts: list[Pt] = []
    cur = (0.0, 0.0)
    for cmd in path:
        if cmd[0] in ("M", "L"):
            cur = (float(cmd[1]), float(cmd[2]))
            pts.append(cur)
        else:
            x0, y0 = cur
            x1, y1, x2, y2, x3, y3 = (float(v) for v in cmd[1:])
            for i in range(1, steps + 1):
                t = i / steps
                a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t * t, t ** 3
                pts.append((a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3))
            cur = (x3, y3)
    return pts


def svg_d(path: Path) -> str:
    out = []
    for cmd in path:
        nums = " ".join(f"{v:.2f}" for v in cmd[1:])
        out.append(f"{cmd[0]}{nums}")
    return " ".join(out)


def transpose_path(path: Path) -> Path:
    out: Path = []
    for cmd in path:
        vals = list(cmd[1:])
        sw = []
        for i in range(0, len(vals), 2):
            sw += [vals[i + 1], vals[i]]
        out.append((cmd[0], *sw))
    return out


def seg_box_hit(p: Pt, q: Pt, b: Box) -> bool:
    """Does segment ``pq`` meet box ``b`` (Liang-Barsky)?"""
    x0, y0, x1, y1 = b
    dx, dy = q[0] - p[0], q[1] - p[1]
    t0, t1 = 0.0, 1.0
    for pk, qk in ((-dx, p[0] - x0), (dx, x1 - p[0]), (-dy, p[1] - y0), (dy, y1 - p[1])):
        if pk == 0:
            if qk < 0:
                return False
        else:
            t = qk / pk
            if pk < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
            if t0 > t1:
                return False
    return True


def poly_hits_box(pts: list[Pt], b: Box) -> bool:
    return any(seg_box_hit(p, q, b) for p, q in zip(pts, pts[1:], strict=False))


def grow(b: Box, m: float) -> Box:
    return (b[0] - m, b[1] - m, b[2] + m, b[3] + m)


def boxes_meet(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def seg_dist(p: Pt, a: Pt, b: Pt) -> float:
    dx, dy = b[0] - a[0], b[1] - a[1]
    L2 = dx * dx + dy * dy
    t = 0.0 if L2 == 0 else max(0.0, min(1.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / L2))
    return math.hypot(p[0] - a[0] - t * dx, p[1] - a[1] - t * dy)


def box_poly_dist(b: Box, pts: list[Pt]) -> float:
    """Distance between a box and a polyline (0 when they meet)."""
    if poly_hits_box(pts, b):
        return 0.0
    corners = [(b[0], b[1]), (b[2], b[1]), (b[2], b[3]), (b[0], b[3])]
    best = math.inf
    for p, q in zip(pts, pts[1:], strict=False):
        for c in corners:
            best = min(best, seg_dist(c, p, q))
        for e0, e1 in zip(corners, corners[1:] + corners[:1], strict=True):
            best = min(best, seg_dist(p, e0, e1), seg_dist(q, e0, e1))
    return best


def overlap_colinear(pa: list[Pt], pb: list[Pt], tol: float = 3.0, min_len: float = 5.0) -> bool:
    """Do two polylines run along each other (parallel segments closer than ``tol`` sharing
    more than ``min_len`` of length)?"""
    for a0, a1 in zip(pa, pa[1:], strict=False):
        la = math.hypot(a1[0] - a0[0], a1[1] - a0[1])
        if la < min_len:
            continue
        ux, uy = (a1[0] - a0[0]) / la, (a1[1] - a0[1]) / la
        for b0, b1 in zip(pb, pb[1:], strict=False):
            lb = math.hypot(b1[0] - b0[0], b1[1] - b0[1])
            if lb < 1e-6:
                continue
            vx, vy = (b1[0] - b0[0]) / lb, (b1[1] - b0[1]) / lb
            if abs(ux * vy - uy * vx) > 0.08:
                continue
            # perpendicular distance of b's ends to a's line, and projected overlap
            d0 = abs((b0[0] - a0[0]) * uy - (b0[1] - a0[1]) * ux)
            d1 = abs((b1[0] - a0[0]) * uy - (b1[1] - a0[1]) * ux)
            if max(d0, d1) > tol:
                continue
            s0 = (b0[0] - a0[0]) * ux + (b0[1] - a0[1]) * uy
            s1 = (b1[0] - a0[0]) * ux + (b1[1] - a0[1]) * uy
            lo, hi = max(0.0, min(s0, s1)), min(la, max(s0, s1))
            if hi - lo > min_len:
                return True
    return False


def poly_cross(pa: list[Pt], pb: list[Pt]) -> bool:
    """Do two polylines properly cross?"""
    def orient(p: Pt, q: Pt, r: Pt) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    for a0, a1 in zip(pa, pa[1:], strict=False):
        for b0, b1 in zip(pb, pb[1:], strict=False):
            o1, o2 = orient(a0, a1, b0), orient(a0, a1, b1)
            o3, o4 = orient(b0, b1, a0), orient(b0, b1, a1)
            if o1 * o2 < 0 and o3 * o4 < 0:
                return True
    return False


def end_dir(path: Path, at_end: bool = True) -> tuple[Pt, Pt]:
    """The tip of the path and a unit vector pointing along the path into that tip."""
    pts = flatten(path, 24)
    if not at_end:
        pts = pts[::-1]
    tip = pts[-1]
    for p in reversed(pts[:-1]):
        dx, dy = tip[0] - p[0], tip[1] - p[1]
        L = math.hypot(dx, dy)
        if L > 2.0:
            return tip, (dx / L, dy / L)
    return tip, (1.0, 0.0)


def shorten(path: Path, d_end: float, d_start: float) -> Path:
    """The path with its last / first ``d`` px cut along the end tangent (for arrowheads)."""
    out = [list(c) for c in path]
    if d_end > 0:
        _cut(out, d_end, end=True)
    if d_start > 0:
        _cut(out, d_start, end=False)
    return [tuple(c) for c in out]


def _cut(cmds: list[list[Any]], d: float, end: bool) -> None:
    if end:
        last = cmds[-1]
        prev = cmds[-2]
        px, py = (prev[-2], prev[-1])
        if last[0] == "C":
            tx, ty = last[5] - last[3], last[6] - last[4]
        else:
            tx, ty = last[1] - px, last[2] - py
        L = math.hypot(tx, ty) or 1.0
        ux, uy = tx / L, ty / L
        last[-2] -= ux * d
        last[-1] -= uy * d
        if last[0] == "C":
            last[3] -= ux * d
            last[4] -= uy * d
    else:
        first, nxt = cmds[0], cmds[1]
        if nxt[0] == "C":
            tx, ty = nxt[1] - first[1], nxt[2] - first[2]
        else:
            tx, ty = nxt[1] - first[1], nxt[2] - first[2]
        L = math.hypot(tx, ty) or 1.0
        first[1] += tx / L * d
        first[2] += ty / L * d
        if nxt[0] == "C":
            nxt[1] += tx / L * d
            nxt[2] += ty / L * d
