"""Step 5a: reachability along a connector's skeleton (which tails feed which heads).

Used on connectors with 3+ contacts, some with and some without a head: several connectors
merged into one ink component (crossings, shared trunks). At crossings a path goes straight
on, at merges and splits any turn is allowed (see :func:`reachability`); two strokes crossing
at a shallow angle, whose skeletons merge and part a few px apart, cross too
(:func:`merge_shallow_crossings`).
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from scipy.spatial import cKDTree

from sciflow.agents.topology_coder.attach import Contact
from sciflow.agents.topology_coder.components import Comp, junction_pixels, skeleton


def reachability(
    cts: list[Contact],
    pieces: list[Comp],
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
    sk = skeleton(m.astype(bool))
    if not sk.any():
        return None
    junc = junction_pixels(sk).astype(np.uint8)
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
    merge_shallow_crossings(at, ends, length, has_contact, max(6.0 * width, 0.6 * th))
    allowed: dict[int, set[tuple[int, int]] | None] = {}  # None: every turn
    for j, bs in at.items():
        live = list(dict.fromkeys(b for b in bs if len(ends[b]) > 1 or b in has_contact or length[b] > 0.6 * th))
        if len(live) != 4:
            allowed[j] = None
            continue
        best, best_s = None, math.inf
        a = live[0]
        for k in (1, 2, 3):
            o = [x for x in live[1:] if x != live[k]]
            s_ = dot(ends[a][j], ends[live[k]][j]) + dot(ends[o[0]][j], ends[o[1]][j])
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
    # tails) instead: there every turn is allowed. A stroke through the crossing with two
    # contacts, both read as heads, one of them barely (margin under 0.5 and under half the
    # other's), has its tail there: the weakest-head rule on that stroke
    for j, ok in list(allowed.items()):
        if ok is None:
            continue
        for a_, b_ in sorted({tuple(sorted(p)) for p in ok}):
            sa = contacts_in(walk(a_, 0, j), set())
            sb = contacts_in(walk(b_, 0, j), set())
            stroke = sa | sb  # a dead-end branch walks on through the crossing: both sides
            if len(stroke) == 2 and stroke <= heads:
                weak, strong = sorted(stroke, key=lambda i: (cts[i].margin, i))
                if cts[weak].margin < 0.5 and cts[weak].margin < 0.5 * cts[strong].margin:
                    cts[weak].head = False
                    heads.discard(weak)
            if not ((sa & heads and sb - heads) or (sa - heads and sb & heads)):
                allowed[j] = None
                break
    out: list[set[int]] = []
    for i in range(len(cts)):
        got = walk(at_branch[i], at_junc[i])
        out.append(contacts_in(got, {at_junc[i]} if at_junc[i] else set()) - {i})
    return out


def dot(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The dot product of two 2-vectors."""
    return a[0] * b[0] + a[1] * b[1]


def merge_shallow_crossings(
    at: dict[int, list[int]],
    ends: dict[int, dict[int, tuple[float, float]]],
    length: np.ndarray,
    has_contact: set[int],
    short: float,
) -> None:
    """Two strokes crossing at a shallow angle share a stretch of ink: their skeleton meets at
    one three-way junction, runs together and parts at another. Two three-way junctions
    joined by a branch of at most ``short`` px that touches no contact become one four-way
    junction (in ``at`` and ``ends``, in place), so the crossing is passed straight through.
    A merge and a split that far apart (a bus) is caught after: going straight on must join
    a tail side with a head side on both strokes.

    >>> at = {1: [10, 11, 12], 2: [12, 13, 14]}
    >>> ends = {10: {1: (-1.0, -0.2)}, 11: {1: (-1.0, 0.2)}, 12: {1: (1.0, 0.0), 2: (-1.0, 0.0)},
    ...         13: {2: (1.0, -0.2)}, 14: {2: (1.0, 0.2)}}
    >>> merge_shallow_crossings(at, ends, np.array([0] * 12 + [9, 50, 50]), set(), 12.0)
    >>> at, ends[13], ends[12]
    ({1: [10, 11, 13, 14]}, {1: (1.0, -0.2)}, {})
    >>> at = {1: [10, 11, 12], 2: [12, 11, 14]}              # branch 11 joins them too: a loop
    >>> ends = {10: {1: (-1.0, 0.0)}, 11: {1: (1.0, 0.3), 2: (-1.0, 0.3)}, 12: {1: (1.0, 0.0), 2: (-1.0, 0.0)},
    ...         14: {2: (1.0, 0.0)}}
    >>> merge_shallow_crossings(at, ends, np.array([0] * 12 + [9, 50, 50]), set(), 12.0); at
    {1: [10, 11, 12], 2: [12, 11, 14]}
    """
    for b in sorted(ends):
        js = sorted(ends[b])
        if len(js) != 2 or b in has_contact or length[b] > short:
            continue
        j1, j2 = js
        if len(at.get(j1, [])) != 3 or len(at.get(j2, [])) != 3:
            continue
        outer = [x for x in at[j1] + at[j2] if x != b]
        if len(set(outer)) != 4 or any(len(ends[x]) > 1 and {j1, j2} <= set(ends[x]) for x in outer):
            continue  # another branch joins the two junctions too: a loop, not a crossing
        for b2 in at[j2]:
            if b2 != b:
                ends[b2][j1] = ends[b2].pop(j2)
        at[j1] = [x for x in at[j1] if x != b] + [x for x in at.pop(j2) if x != b]
        ends[b] = {}
