"""Step 4: arrowheads, the direction of a connector at each of its contacts.

Among the connector's pixels (plus small loose pieces, e.g. the wings of a head whose tip was
masked) within ``R = max(6, head * th)`` px of the contact (at most 0.45 x the distance to
the connector's nearest other contact), the spread across the stroke direction is at least
``max(2.5 w, w + 3)`` and the ink area at least ``1.15 w R`` or 1.25 x the ink of the next
``R`` px of the stroke (thin diagonal lines), and the spread reaches both sides of the head's
axis (each side >= 25 %; a polyline corner near the node spreads to one side only) (``w``:
the length-weighted median stroke width); this holds for filled, open and chevron heads
(:func:`arrowhead`). A head drawn small for a thick line (Mermaid's ``==>``: an 8 px marker
on a 4 px line) is found by slices instead: when the window is not cut short, the second
widest 1 px slice across the head's axis is at least ``max(1.8 s, s + 3)`` (and at most 1.25
x the usual spread bound) and it spreads to both sides, ``s`` the median slice width of the
stroke's own shaft one window further on (:func:`slice_widths`). A window whose ink spreads
to one side only (the line turns a corner within it, a curve bending just before its node) and
is at least 12 px is tested again within half its radius, and a head found there counts. A
contact on a shape without such a head is looked at again on the unmasked ink (:func:`hidden_head`); a Layout Detector's
arrowheads are fused in (:func:`detected_head`); two heads on a two-contact connector are both
kept only when they look alike (:func:`double_heads`); a short two-contact connector with no
head is read by comparing its two ends (:func:`compare_ends`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Callable

import cv2
import numpy as np

from sciflow.agents.diagram import Diagram, GroundedNode
from sciflow.agents.layout_evidence import arrowhead_support, arrowtail_support
from sciflow.agents.shape_hunter import background_color
from sciflow.agents.topology_coder.attach import Contact
from sciflow.agents.topology_coder.components import Comp

log = logging.getLogger(__name__)


def head_radius(head: float, th: float, limit: float) -> float:
    """The arrowhead window around a contact: ``head`` text heights, 6-``limit`` px, at least 4."""
    return max(4.0, min(max(6.0, head * th), limit))


def stroke_width(comps: dict[int, Comp], members: list[int]) -> float:
    """The stroke width of a whole connector: the median of its pieces' widths, each weighted
    by its length.

    >>> dot = np.ones((1, 1), bool)
    >>> a, b = Comp(0, 0, 0, dot, width=2.0, length=90.0), Comp(1, 0, 0, dot, width=6.0, length=10.0)
    >>> stroke_width({0: a, 1: b}, [0, 1])
    2.0
    """
    ws = sorted((comps[m].width, max(comps[m].length, 1.0)) for m in members)
    half, acc = sum(x[1] for x in ws) / 2.0, 0.0
    for wv, ln in ws:
        acc += ln
        if acc >= half:
            return wv
    return ws[0][0]


def arrowhead(
    ct: Contact, comps: dict[int, Comp], members: list[int], th: float, head: float, limit: float = math.inf
) -> None:
    """The geometric arrowhead test at ``ct`` on the pieces ``members`` (module docstring);
    sets ``ct.head``, ``ct.margin``, ``ct.spread`` and ``ct.out_dir``."""
    symmetric = _arrowhead(ct, comps, members, th, head, limit)
    R = head_radius(head, th, limit)
    if not ct.head and not symmetric and R >= 12.0:
        # the window reached round a corner of the line just behind the head (a curve that
        # turns within a text height of its node): the same test within half the window
        probe = dataclasses.replace(ct)
        _arrowhead(probe, comps, members, th, head, R / 2.0)
        if probe.head:
            ct.head, ct.spread, ct.margin = True, probe.spread, probe.margin


def _arrowhead(
    ct: Contact, comps: dict[int, Comp], members: list[int], th: float, head: float, limit: float
) -> bool:
    """:func:`arrowhead` within one window; returns whether the window's ink spread to both
    sides of the head's axis."""
    w = stroke_width(comps, members)
    R = head_radius(head, th, limit)
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
        return True
    xs = np.concatenate(xs_l).astype(float)
    ys = np.concatenate(ys_l).astype(float)
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
        return True
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
    full = head_radius(head, th, math.inf) - 0.5 <= R  # a window cut short shows no shaft to compare with
    if not ct.head and full and symmetric and shaft.sum() >= 0.5 * R:
        # a head drawn small for its line (a thick stroke's marker): compare the head's
        # widest slices with this stroke's own shaft, both cut across the head's axis (such
        # a head adds too little ink to the window for the area bound)
        along = dx * ax + dy * ay
        across = -dx * ay + dy * ax
        heads = slice_widths(along[sel], across[sel])
        shafts = slice_widths(along[shaft], across[shaft])
        if heads.size >= 2 and shafts.size >= 3:
            base, line = float(heads[-2]), float(np.median(shafts))
            need_base = max(1.8 * line, line + 3.0)
            # small for its line: a base far over the usual spread bound is no small head (a
            # junction or a crossing that failed the usual test on its area)
            if need_base <= base <= 1.25 * need_spread:
                ct.head = True
                spread, need_spread = base, need_base
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
    return symmetric


def slice_widths(along: np.ndarray, across: np.ndarray) -> np.ndarray:
    """The widths of a stroke's 1 px slices, sorted: pixels binned by ``along`` (rounded),
    each bin's extent in ``across`` plus one. A triangle's base is its widest slices; the
    2nd-98th percentile spread of :func:`arrowhead` trims the few pixels that make it.

    >>> along = np.array([0, 0, 1, 1, 1, 2, 2, 2, 2, 2]); across = np.array([0, 1, -1, 0, 1, -2, -1, 0, 1, 2])
    >>> slice_widths(along, across).tolist()
    [2.0, 3.0, 5.0]
    """
    if along.size == 0:
        return np.zeros(0)
    bins = np.round(along).astype(int)
    order = np.argsort(bins, kind="stable")
    b, a = bins[order], across[order]
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    return np.sort(np.maximum.reduceat(a, starts) - np.minimum.reduceat(a, starts) + 1.0)


def loose_pieces(
    ct: Contact,
    comps: dict[int, Comp],
    groups: dict[int, list[int]],
    find: Callable[[int], int],
    th: float,
    head: float,
) -> list[int]:
    """Small separate pieces near a contact (the wings of an open or chevron head whose tip
    was masked with the node outline): single-component groups no larger than the head
    window that come within it."""
    R = max(6.0, head * th)
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


def hidden_head(
    d: Diagram,
    ct: Contact,
    raw: np.ndarray,
    targets: list[GroundedNode],
    comps: dict[int, Comp],
    members: list[int],
    th: float,
    limit: float,
    head: float,
    ink_threshold: int,
) -> None:
    """A filled arrowhead landing on a node outline at a shallow angle (a blunt head on an
    ellipse's or diamond's slanted side) lies mostly inside the masked outline band, so
    the stroke-side test sees no head. Look again at all ink within the head window that
    is not deep inside the node (the outline band counts): a morphological opening with
    a square of ``w + 2`` px removes thin lines (the stroke, the outline) and keeps a
    solid head. A thick outline survives the opening too, so the same measure taken at the
    two points of the outline ``2 R`` away on either side (where no head is) is subtracted;
    at least ``2 (w + 2)^2`` px more than that is a head. Nodes with a dark fill are skipped
    (their whole band would survive)."""
    n = targets[ct.target]
    if n.kind in ("text", "container", "operator") or len(n.polygon) < 3:
        return
    shape = next((s for s in d.shapes if s.id == n.shape_id), None) if n.shape_id is not None else None
    if shape is not None:
        bg = background_color(d.image).astype(int)
        if max(abs(int(f) - int(b)) for f, b in zip(shape.fill, bg, strict=True)) > ink_threshold:
            return
    w = float(np.median([comps[m].width for m in members]))
    R = head_radius(head, th, limit)
    k = int(round(w)) + 2
    area = _solid_area(raw, n.polygon, ct.x, ct.y, R, w, k, own=True)
    # a thick outline survives the opening too: what the same window holds at two points of
    # the outline 2R away on either side (no head there) is subtracted
    sides = _outline_neighbours(n.polygon, ct.x, ct.y, 2 * R)
    base = min((_solid_area(raw, n.polygon, cx, cy, R, w, k) for cx, cy in sides), default=0)
    if area - base >= 2 * k * k:
        ct.head = True
        ct.margin = float(min(1.0, (area - base) / (2.0 * k * k) - 1.0))
        ct.spread = max(ct.spread, float(k))
        log.debug("contact %s at (%.0f,%.0f): hidden head, solid area %d (outline %d)",
                  ct.target, ct.x, ct.y, area, base)


def _solid_area(
    raw: np.ndarray, polygon: tuple[tuple[float, float], ...], x: float, y: float, R: float, w: float, k: int,
    own: bool = False,
) -> int:
    """Pixels of the ink ``raw`` within ``R`` of ``(x, y)``, not deep inside ``polygon``
    (eroded by ``w + 2``), that survive an opening with a ``k`` x ``k`` square. With ``own``,
    only the solid blobs reaching within ``k + w`` of ``(x, y)`` count: a head is solid where
    its stroke ends, and the head of another arrow landing on the same side a little further
    along is a blob of its own, no evidence for this end. (The outline's own measure, taken
    where no stroke ends, keeps every blob: a thick outline may survive the opening in pieces.)"""
    h, wd = raw.shape
    x0, y0 = max(0, int(x - R) - 1), max(0, int(y - R) - 1)
    x1, y1 = min(wd, int(x + R) + 2), min(h, int(y + R) + 2)
    if x1 - x0 < 3 or y1 - y0 < 3:
        return 0
    win = raw[y0:y1, x0:x1].copy()
    inner = np.zeros_like(win)
    pts = np.round(np.array(polygon) - np.array([x0, y0])).astype(np.int32)
    cv2.fillPoly(inner, [pts], 1)
    e = 2 + int(round(w))
    inner = cv2.erode(inner, np.ones((2 * e + 1, 2 * e + 1), np.uint8))
    yy, xx = np.mgrid[y0:y1, x0:x1]
    win[(inner > 0) | (np.hypot(xx - x, yy - y) > R)] = 0
    opened = cv2.morphologyEx(win, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
    if not own:
        return int(opened.sum())
    n, lab = cv2.connectedComponents(opened, connectivity=8)
    if n <= 1:
        return 0
    near = np.hypot(xx - x, yy - y) <= k + w
    keep = np.unique(lab[near & (lab > 0)])
    return int(np.isin(lab, keep).sum()) if keep.size else 0


def _outline_neighbours(polygon: tuple[tuple[float, float], ...], x: float, y: float,
                        arc: float) -> list[tuple[float, float]]:
    """The two points of the closed ``polygon`` at outline distance ``arc`` on either side of
    its point nearest ``(x, y)`` (none when the outline is shorter than ``4 arc``).

    >>> _outline_neighbours(((0, 0), (100, 0), (100, 100), (0, 100)), 50, -3, 20)
    [(30.0, 0.0), (70.0, 0.0)]
    """
    pts = np.asarray(polygon, float)
    seg = np.roll(pts, -1, axis=0) - pts
    lens = np.hypot(seg[:, 0], seg[:, 1])
    total = float(lens.sum())
    if total < 4 * arc or total == 0:
        return []
    # the nearest point, as an outline position
    best, best_d = 0.0, math.inf
    acc = 0.0
    for p0, sv, ln in zip(pts, seg, lens, strict=True):
        if ln > 0:
            t = float(np.clip(((x - p0[0]) * sv[0] + (y - p0[1]) * sv[1]) / (ln * ln), 0.0, 1.0))
            d = math.hypot(p0[0] + t * sv[0] - x, p0[1] + t * sv[1] - y)
            if d < best_d:
                best, best_d = acc + t * ln, d
        acc += ln
    cum = np.concatenate([[0.0], np.cumsum(lens)])

    def at(pos: float) -> tuple[float, float]:
        pos %= total
        i = min(int(np.searchsorted(cum, pos, side="right")) - 1, len(pts) - 1)
        t = (pos - cum[i]) / lens[i] if lens[i] else 0.0
        return (round(float(pts[i][0] + t * seg[i][0]), 6), round(float(pts[i][1] + t * seg[i][1]), 6))

    return [at(best - arc), at(best + arc)]


def detected_head(
    d: Diagram, ct: Contact, th: float, limit: float, head: float, min_conf: float, veto_margin: float
) -> None:
    """Fuse the Layout Detector's arrowheads and arrow tails with the geometric reading of one
    contact: a detected head (score >= ``layout_min_conf``) within half a head window of the
    contact makes it a head; where no detected head is that near, a detected tail (the end
    of a one-headed connector without the head, ``layout-detector-v2``) with the same score
    drops a geometric head there (a head read at the wrong end), and with
    ``layout_veto_margin`` > 0 so does having no detection at all for a geometric head that
    passed its test by less than that margin."""
    R = head_radius(head, th, limit)
    support = arrowhead_support(d.layout, ct.x, ct.y, radius=0.5 * R, min_conf=min_conf)
    if support > 0:
        if not ct.head:
            ct.head = True
            ct.margin = support
            ct.spread = max(ct.spread, 1.0)
        return
    if not ct.head:
        return
    tail = arrowtail_support(d.layout, ct.x, ct.y, radius=0.5 * R, min_conf=min_conf)
    if tail > 0 or ct.margin < veto_margin:
        log.debug("contact %s at (%.0f,%.0f): geometric head dropped (detected tail %.2f, margin %.2f)",
                  ct.target, ct.x, ct.y, tail, ct.margin)
        ct.head = False


def double_heads(cts: list[Contact]) -> None:
    """Two "heads" on a two-contact connector: keep both only when they look alike (a
    double-headed arrow, spreads within 1.5x), else only the wider one is a head."""
    if len(cts) == 2 and cts[0].head and cts[1].head:
        a, b = cts
        big = max(a.spread, b.spread) / max(min(a.spread, b.spread), 1e-6)
        if big > 1.5:
            (a if a.spread < b.spread else b).head = False


def member_pixels(comps: dict[int, Comp], members: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Image x and y (float) of every pixel of the pieces ``members``."""
    xs_l = [np.nonzero(comps[m].mask)[1] + comps[m].x0 for m in members]
    ys_l = [np.nonzero(comps[m].mask)[0] + comps[m].y0 for m in members]
    return np.concatenate(xs_l).astype(float), np.concatenate(ys_l).astype(float)


def _spread(lat: np.ndarray) -> float:
    """The width across the line of pixels at lateral offsets ``lat``: 2nd to 98th
    percentile, plus one pixel (0 for none)."""
    return float(np.percentile(lat, 98) - np.percentile(lat, 2)) + 1.0 if lat.size else 0.0


def compare_ends(cts: list[Contact], comps: dict[int, Comp], members: list[int]) -> None:
    """A short two-contact connector whose head the window test missed (the head sits mostly
    under the node's outline mask, or the window was cut to under half the connector):
    measure the spread across the line joining the contacts (2nd to 98th percentile) of the
    pixels in the outer third at each end (then, undecided, in the outer 45 %). When
    neither end has a head and one end spreads at least ``max(2 w, w + 3)`` and at least
    1.6 x the other end, which itself stays under ``max(2.5 w, w + 3)`` (a plain line by
    the window test's bound), that end carries the head. Thirds, not halves: on a short
    arrow the head can be longer than half the connector, and its wide base then lies in the
    tail's half. ``w`` is the stroke width, or the narrower end's spread where that is less:
    a head that is much of the ink inflates the connector's median width.

    Otherwise, a short double-headed arrow: when both ends spread alike (within 1.5 x) and at
    least ``max(2 s, s + 3)``, ``s`` the spread of the middle third (the shaft, measured on
    this connector), every third lies centred on the line joining the contacts (its median
    within ``s``: a U-shaped connector's legs lie to one side of it) and each end narrows
    towards its contact (the pixels within 2 px of it spread less than its third: a bar
    across a line's end, a bracket, is widest there), both ends carry a head, also where the
    window test found one of them. Nothing changes otherwise."""
    if len(cts) != 2 or (cts[0].head and cts[1].head):
        return
    a, b = cts
    vx, vy = b.x - a.x, b.y - a.y
    L = math.hypot(vx, vy)
    if L < 1.0:
        return
    ux, uy = vx / L, vy / L
    xs, ys = member_pixels(comps, members)
    along = (xs - a.x) * ux + (ys - a.y) * uy
    lat = -(xs - a.x) * uy + (ys - a.y) * ux
    thirds = (along <= L / 3.0, (along > L / 3.0) & (along < 2.0 * L / 3.0), along >= 2.0 * L / 3.0)
    if thirds[0].sum() < 3 or thirds[2].sum() < 3:
        return
    spread = [_spread(lat[t]) for t in thirds]
    spreads = [spread[0], spread[2]]
    if not a.head and not b.head:
        # the outer thirds, then the outer 45 %: a head between a third and half the
        # connector long has its wide base beyond its own third, and the 45 % reach it
        outer = (spreads, [_spread(lat[along <= 0.45 * L]), _spread(lat[along >= 0.55 * L])])
        w = min(float(np.median([comps[m].width for m in members])), min(spreads))
        # twice the shaft: the other end, a plain line (under the window test's bound), is the
        # comparison the window test lacks (a small marker head on an anti-aliased hairline
        # is ~2.3 x its inked width)
        need, plain = max(2.0 * w, w + 3.0), max(2.5 * w, w + 3.0)
        for ends in outer:
            for i, j in ((0, 1), (1, 0)):
                if ends[i] >= need and ends[i] >= 1.6 * ends[j] and ends[j] < plain:
                    cts[i].head = True
                    cts[i].spread = ends[i]
                    cts[i].margin = float(min(1.0, (ends[i] - need) / need))
                    log.debug("contacts at (%.0f,%.0f)/(%.0f,%.0f): end spreads %.1f/%.1f, head at the first",
                              cts[i].x, cts[i].y, cts[j].x, cts[j].y, ends[i], ends[j])
                    return
    if thirds[1].sum() < 3:
        return  # no shaft to measure
    shaft = spread[1]
    need = max(2.0 * shaft, shaft + 3.0)
    centred = all(abs(float(np.median(lat[t]))) <= shaft for t in thirds)

    def narrows(from_end: np.ndarray) -> bool:
        """A head narrows to its tip at the contact; a bar across a line's end (a bracket)
        is widest there: the pixels within 2 px of the contact (along the line) spread less
        than the end's third does."""
        near, end = np.abs(from_end) <= 2.0, from_end <= L / 3.0
        if near.sum() < 2:
            return False
        return float(np.ptp(lat[near])) < float(np.ptp(lat[end])) - 1.0

    tips = narrows(along) and narrows(L - along)
    if min(spreads) >= need and max(spreads) <= 1.5 * min(spreads) and centred and tips:
        for ct, sp in zip(cts, spreads, strict=True):
            if not ct.head:
                ct.head, ct.spread, ct.margin = True, sp, float(min(1.0, (sp - need) / need))
        log.debug("contacts at (%.0f,%.0f)/(%.0f,%.0f): both ends spread %.1f/%.1f over a %.1f px shaft",
                  a.x, a.y, b.x, b.y, spreads[0], spreads[1], shaft)
