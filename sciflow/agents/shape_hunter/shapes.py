"""Shape kinds (step 5): contour classification and the cylinder and diamond tests."""

from __future__ import annotations

import cv2
import numpy as np

from sciflow.agents.diagram import BBox
from sciflow.agents.shape_hunter.boxes import _box_area, bbox_inter


def _classify(contour: np.ndarray, area: float, merged_cap: bool) -> tuple[str, float]:
    x, y, w, h = cv2.boundingRect(contour)
    fill = area / max(w * h, 1)
    hull = cv2.convexHull(contour)
    solidity = area / max(cv2.contourArea(hull), 1.0)
    if merged_cap:
        return "cylinder", 0.9
    peri = cv2.arcLength(contour, True)
    approx = cv2.approxPolyDP(contour, 0.03 * peri, True).reshape(-1, 2)
    if len(contour) >= 5:
        ellipse = cv2.fitEllipse(contour)
        (_, _), (ea, eb), _ = ellipse
        e_area = np.pi * ea * eb / 4.0
        if (e_area > 0 and abs(area / e_area - 1.0) < 0.06 and 0.7 < fill < 0.83
                and _ellipse_deviation(contour, ellipse) <= max(4.0, 0.08 * min(ea, eb) / 2)):
            return ("circle" if 0.85 < w / max(h, 1) < 1.18 else "ellipse"), 0.95
    if fill >= 0.985:
        return "rect", 0.99
    if len(approx) == 4 and _polygon_deviation(contour, approx) <= max(5.0, 0.06 * min(w, h)):
        if 0.4 < fill < 0.6:
            # diamond: vertices near the bbox edge midpoints
            mids = np.array([[x + w / 2, y], [x + w, y + h / 2], [x + w / 2, y + h], [x, y + h / 2]])
            d = np.min(np.linalg.norm(approx[:, None, :] - mids[None], axis=2), axis=1)
            if np.all(d < 0.2 * max(w, h)):
                return "diamond", 0.9
        ys = np.sort(approx[:, 1])
        top = approx[approx[:, 1] <= ys[1]]
        bot = approx[approx[:, 1] >= ys[2]]
        if len(top) == 2 and len(bot) == 2 and fill < 0.97:
            tl, tr = sorted(top[:, 0])
            bl, br = sorted(bot[:, 0])
            if abs(tl - bl) < 0.1 * w and abs(tr - br) < 0.1 * w:
                return ("rounded", 0.9) if fill < 0.975 else ("rect", 0.95)
            if abs((tr - tl) - (br - bl)) <= 0.08 * w:
                return "parallelogram", 0.85
            return "trapezoid", 0.85
        if fill > 0.9:
            return "rect", 0.95
    if 0.86 <= fill < 0.985 and solidity > 0.97:
        return "rounded", 0.9
    return ("polygon" if solidity > 0.9 else "region"), float(min(0.8, solidity))


def _polygon_deviation(contour: np.ndarray, polygon: np.ndarray) -> float:
    """The 90th percentile of the contour points' distance (px) from the closed ``polygon``.

    ``cv2.approxPolyDP`` at 3 % of the perimeter lets a large region's outline stray tens of
    pixels from its four corners: paper closed in between curved arrows and a row of boxes
    reads as a "trapezoid" that way, its lower side following every box it passes.

    >>> sq = np.array([[[0, 0]], [[100, 0]], [[100, 60]], [[0, 60]]], np.int32)
    >>> _polygon_deviation(sq, sq.reshape(-1, 2))
    0.0
    >>> notched = np.array([[[0, 0]], [[100, 0]], [[100, 60]], [[60, 60]], [[50, 30]], [[40, 60]], [[0, 60]]], np.int32)
    >>> _polygon_deviation(notched, sq.reshape(-1, 2)) > 5
    True
    """
    pts = contour.reshape(-1, 2).astype(float)
    if len(pts) < 20:  # a sparse contour: measure along its edges too
        t = np.linspace(0.0, 1.0, 8, endpoint=False)[:, None, None]
        nxt = np.roll(pts, -1, axis=0)
        pts = (pts[None] * (1 - t) + nxt[None] * t).reshape(-1, 2)
    poly = np.asarray(polygon, float).reshape(-1, 2)
    a, b = poly, np.roll(poly, -1, axis=0)
    ab = b - a
    L2 = np.maximum((ab ** 2).sum(1), 1e-9)
    ap = pts[:, None, :] - a[None]
    tt = np.clip((ap * ab[None]).sum(2) / L2[None], 0.0, 1.0)
    d = np.hypot(*(ap - tt[..., None] * ab[None]).transpose(2, 0, 1))
    return float(np.percentile(d.min(axis=1), 90))


def _ellipse_deviation(
    contour: np.ndarray, ellipse: tuple[tuple[float, float], tuple[float, float], float]
) -> float:
    """The 95th percentile of the contour points' radial distance (px) from ``ellipse``
    (``cv2.fitEllipse``'s ``((cx, cy), (width, height), angle)``).

    An ellipse's area alone is a weak test: paper closed in by a loop of curved arrows and
    the boxes they join can hold just the area of its fitted ellipse while its outline
    follows the boxes' straight sides and dips into the corners between them.

    >>> t = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    >>> ring = np.stack([100 + 60 * np.cos(t), 50 + 30 * np.sin(t)], 1).reshape(-1, 1, 2).astype(np.int32)
    >>> round(_ellipse_deviation(ring, cv2.fitEllipse(ring)), 1) < 1.0
    True
    >>> box = np.array([[[40, 20]], [[160, 20]], [[160, 80]], [[40, 80]]], np.int32)
    >>> _ellipse_deviation(box, ((100.0, 50.0), (130.0, 65.0), 0.0)) > 10
    True
    """
    (cx, cy), (ea, eb), ang = ellipse
    t = np.deg2rad(ang)
    p = contour.reshape(-1, 2).astype(float) - (cx, cy)
    u = p[:, 0] * np.cos(t) + p[:, 1] * np.sin(t)
    v = -p[:, 0] * np.sin(t) + p[:, 1] * np.cos(t)
    rho = np.hypot(u / max(ea / 2, 1e-6), v / max(eb / 2, 1e-6))
    r = np.hypot(u, v)
    # a point at r with normalised radius rho lies |r - r / rho| from the ellipse along its ray
    return float(np.percentile(np.abs(r - r / np.maximum(rho, 1e-6)), 95))


def _cylinder_sag(m: np.ndarray) -> float:
    """Cap height of a cylinder body: the bottom edge bulges down (at least 2.5 px, under 30 %
    of the height) while the top edge is flat or concave; else 0. ``m`` is a filled mask."""
    cols = np.nonzero(m.any(axis=0))[0]
    if len(cols) < 20:
        return 0.0
    sub = m[:, cols]
    top = sub.argmax(axis=0).astype(float)
    bot = (sub.shape[0] - 1 - sub[::-1].argmax(axis=0)).astype(float)
    k = max(2, len(cols) // 10)
    mid = slice(len(cols) // 2 - k, len(cols) // 2 + k)
    sag_top = float(np.median(top[mid]) - min(np.median(top[:k]), np.median(top[-k:])))
    sag_bot = float(np.median(bot[mid]) - max(np.median(bot[:k]), np.median(bot[-k:])))
    height = float(bot.max() - top.min())
    if sag_top >= -1 and 2.5 <= sag_bot < 0.3 * height:
        return max(sag_top, sag_bot)
    return 0.0


def _running_median5(a: np.ndarray) -> np.ndarray:
    """``out[i] = median(a[max(0, i - 2) : i + 3])``: a 5-wide running median whose windows
    shrink at the ends.

    >>> _running_median5(np.array([0.0, 0, 9, 0, 0, 0])).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    if len(a) < 5:
        return np.array([np.median(a[max(0, i - 2) : i + 3]) for i in range(len(a))])
    ends = [np.median(a[: i + 3]) for i in (0, 1)], [np.median(a[i - 2 :]) for i in (len(a) - 2, len(a) - 1)]
    middle = np.median(np.lib.stride_tricks.sliding_window_view(a, 5), axis=1)
    return np.concatenate([ends[0], middle, ends[1]])


def _cap_above(
    m: np.ndarray, X0: int, Y0: int, image: np.ndarray, fill: np.ndarray, text_boxes: list[BBox] | None = None
) -> list[tuple[int, int]] | None:
    """Height of a cylinder cap drawn above a region (``m``: the region grown onto its
    outline). Scanning up from the top of ``m`` in the middle 80 % of its columns: any rest of
    the outline, then a gap of the region's fill colour (max channel difference <= 40), then
    an outline again (the cap's upper arc), within 40 % of the region height, in at least
    60 % of the columns; the arc rises in the middle (its middle fifth at least 1 px above
    its outer fifths: the flat bottom of a box stacked close above, with the paper between
    of the same colour as this box's fill, is no cap). Then two
    checks against what else draws ink above a box: arc points more than 3 px off the
    arc's running median (5 columns) are dropped (an arrowhead or connector landing on the
    top is not the cap's smooth arc), and the cap's interior (between the region's top and
    the arc) must hold no text: when it covers 25 % of an OCR line box, the "cap" is the
    band of the box's own top above a label that cut the region (a rounded box whose top
    an arrowhead touches). Returns the arc's top pixels ``(x, y)`` in image coordinates, or
    None."""
    cols = np.nonzero(m.any(axis=0))[0]
    if len(cols) < 20:
        return None
    rows = np.nonzero(m.any(axis=1))[0]
    height = float(rows[-1] - rows[0] + 1)
    lim = max(4, int(0.4 * height))
    k = len(cols) // 10
    fill_i = np.asarray(fill, np.int16)
    # all middle columns at once: row o of `ink` is o + 1 px above each column's top pixel
    mid_cols = cols[k : len(cols) - k]
    yt_all = np.argmax(m[:, mid_cols], axis=0) + Y0
    x_all = mid_cols + X0
    rows = yt_all[None, :] - 1 - np.arange(lim)[:, None]
    valid = rows >= 0  # the scan stops at the image's top edge
    seg = image[np.maximum(rows, 0), x_all[None, :]].astype(np.int16)
    ink = (np.abs(seg - fill_i).max(axis=2) > 40) & valid
    gap = ~ink & valid
    # first pixel of the fill gap above the outline, then the first ink above that gap
    first_gap = np.where(gap.any(axis=0), gap.argmax(axis=0), lim)
    above = ink & (np.arange(lim)[:, None] > first_gap[None, :])
    has_arc = above.any(axis=0)
    j_all = above.argmax(axis=0)
    tops = [int(v) for v in x_all[has_arc]]
    bottoms = [int(v) for v in yt_all[has_arc]]
    arcs = [int(v) for v in (yt_all - 1 - j_all - 2)[has_arc]]  # the arc's lower edge, plus a 2-px outline
    n = len(cols) - 2 * k
    if n <= 0 or len(arcs) < 0.6 * n:
        return None
    arcs_a = np.array(arcs, float)
    # a cap's arc is smooth: points off the running median (5 columns, fewer at the ends)
    # are arrowheads or connectors
    med = _running_median5(arcs_a)
    keep = np.abs(arcs_a - med) <= 3.0
    if keep.sum() < 0.6 * n:
        return None
    tops = [x for x, kk in zip(tops, keep, strict=True) if kk]
    bottoms = [b for b, kk in zip(bottoms, keep, strict=True) if kk]
    arcs_a = arcs_a[keep]
    arcs = [int(a) for a in arcs_a]
    band = (float(min(tops)), float(arcs_a.min()), float(max(tops) + 1), float(np.median(bottoms)))
    for tb in text_boxes or ():
        if _box_area(tb) > 0 and bbox_inter(band, tb) >= 0.25 * _box_area(tb):
            return None  # text inside the "cap": the box's own top band above its label
    q = max(1, len(arcs_a) // 5)
    mid = float(np.median(arcs_a[len(arcs_a) // 2 - q // 2 : len(arcs_a) // 2 + q // 2 + 1]))
    side = float(np.median(np.concatenate([arcs_a[:q], arcs_a[-q:]])))
    if side - mid < 1.0:  # the arc rises in the middle: a flat line above is another box's bottom
        return None
    return [(x, int(y)) for x, y in zip(tops, arcs, strict=True)]


def _diamond_tips(cnt: np.ndarray, ink: np.ndarray) -> np.ndarray | None:
    """The 4 corners of a diamond grown out to its outline's sharp tips. The interior (and
    so the contour grown from it) stops short of an acute tip, where the two outline strokes
    merge into solid ink; ``approxPolyDP`` cuts the rest. Each side is fitted with a line
    (the contour points of its middle 60 %); adjacent sides meet at the tip. A corner moves
    to that intersection, walked back to the last ink pixel on the way there (so an open or
    rounded tip is not overshot), by at most 40 % of the corner's distance to the centre.
    ``cnt``: the contour in image coordinates; ``ink``: the image's ink mask. None when the
    contour does not simplify to 4 corners."""
    c = cnt.reshape(-1, 2).astype(np.float64)
    approx = cv2.approxPolyDP(cnt.astype(np.int32), 0.03 * cv2.arcLength(cnt.astype(np.int32), True), True)
    if len(approx) != 4:
        return None
    corners = approx.reshape(-1, 2).astype(np.float64)
    # contour index of each corner
    idx = [int(np.argmin(np.linalg.norm(c - v, axis=1))) for v in corners]
    n = len(c)
    lines = []
    for a in range(4):
        i0, i1 = idx[a], idx[(a + 1) % 4]
        span = (i1 - i0) % n
        if span < 5:
            return None
        sel = [(i0 + int(t)) % n for t in np.linspace(0.2 * span, 0.8 * span, max(5, int(0.6 * span)))]
        vx, vy, x0, y0 = cv2.fitLine(c[sel].astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], float), np.array([vx, vy], float)))
    centre = corners.mean(axis=0)
    h, w = ink.shape
    out = corners.copy()
    for a in range(4):
        (p1, d1), (p2, d2) = lines[(a - 1) % 4], lines[a]
        den = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(den) < 1e-6:
            continue
        t = ((p2[0] - p1[0]) * d2[1] - (p2[1] - p1[1]) * d2[0]) / den
        tip = p1 + t * d1
        v = corners[a]
        reach = float(np.linalg.norm(tip - v))
        if reach < 1.0 or reach > 0.4 * float(np.linalg.norm(v - centre)):
            continue
        # the outward direction must point away from the centre
        if float(np.dot(tip - v, v - centre)) <= 0:
            continue
        best = v
        for f in np.linspace(0.0, 1.0, int(reach) + 2):
            q = v + f * (tip - v)
            xi, yi = int(round(q[0])), int(round(q[1]))
            if not (0 <= xi < w and 0 <= yi < h):
                break
            if ink[max(0, yi - 1) : yi + 2, max(0, xi - 1) : xi + 2].any():
                best = q
            else:
                break
        out[a] = best
    return np.round(out).astype(np.int32)
