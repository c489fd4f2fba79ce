"""Step 1: ink and the masks that leave only connector strokes.

*Ink* is every pixel whose max channel difference from the local background (the global
background, or a container's fill inside that container) exceeds ``ink_threshold``. Node
outlines (grown by ``node_pad`` px), every OCR line box and every container outline band
(covering the outline however thick: :func:`band_width`) are masked out. Acute polygon
corners that the contour simplification cut off are restored to their apex first
(:func:`cut_tips`), so a diamond's outline tip is masked with the node.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from sciflow.agents.diagram import Diagram, GroundedNode
from sciflow.agents.shape_hunter import background_color, channel_difference


def stroke_masks(
    d: Diagram, ink_threshold: int, node_pad: int, text_pad: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[GroundedNode], np.ndarray, dict[int, int]]:
    """``(ink, targets_map, band, targets, raw, band_widths)``: the connector ink left after
    masking, the target index + 1 of every node pixel (outline bands where no node is), the
    container outline bands alone, the node candidates, the unmasked ink, and each
    container's band width in px (``2 node_pad + 3``, or wider over a thick outline:
    :func:`band_width`)."""
    h, w = d.height, d.width
    img = d.image
    bgimg = np.empty_like(img)
    bgimg[:] = background_color(img).astype(np.uint8)
    targets = list(d.nodes)
    shapes = {s.id: s for s in d.shapes}
    conts = sorted((n for n in targets if n.kind == "container"), key=lambda n: -_area(n.bbox))
    for c in conts:
        s = shapes.get(c.shape_id) if c.shape_id is not None else None
        if s is not None:
            cv2.fillPoly(bgimg, [np.round(np.array(c.polygon)).astype(np.int32)], tuple(int(v) for v in s.fill))
    diff = channel_difference(img, bgimg)
    ink = (diff > ink_threshold).astype(np.uint8)
    tmap = np.zeros((h, w), np.int32)  # target index + 1
    band = np.zeros((h, w), np.int32)
    th = d.text_height()
    widths: dict[int, int] = {}
    for k, n in enumerate(targets):
        pts = np.round(np.array(n.polygon)).astype(np.int32)
        if n.kind == "container":
            reach = max(3, int(round(0.5 * th)))
            widths[k] = band_width(outline_reach(ink, n.polygon, reach), node_pad)
            cv2.polylines(band, [pts], True, k + 1, thickness=widths[k])
        else:
            pad = text_pad if n.kind == "text" else node_pad
            cv2.fillPoly(tmap, [pts], k + 1)
            cv2.polylines(tmap, [pts], True, k + 1, thickness=2 * pad + 1)
    for k, n in enumerate(targets):
        if n.kind in ("container", "text"):
            continue
        # outline tips cut off by the contour simplification stay ink otherwise and look
        # like arrowheads or attach passing strokes
        for tri in cut_tips(n.polygon, th):
            cv2.fillPoly(tmap, [np.round(np.array(tri)).astype(np.int32)], k + 1)
    # a straight line crossing a text's box (an edge label set against it) stays connector ink
    through = np.zeros((h, w), bool)
    text_boxes = [t.bbox for t in d.text_lines] + [_bounds(n.polygon) if n.polygon else n.bbox for n in targets
                                                   if n.kind == "text"]
    boxes = []
    for bx in text_boxes:
        x0, y0, x1, y1 = (int(round(v)) for v in bx)
        p = text_pad
        boxes.append((max(0, x0 - p), max(0, y0 - p), min(w, x1 + p), min(h, y1 + p)))
        # measured on a box 2 px wider than the mask on every side (the outline drawn
        # around a text target's polygon reaches past it)
        box = (max(0, x0 - p - 2), max(0, y0 - p - 2), min(w, x1 + p + 2), min(h, y1 + p + 2))
        through[box[1] : box[3], box[0] : box[2]] |= through_lines(ink, box)
    text_targets = [k + 1 for k, n in enumerate(targets) if n.kind == "text"]
    if text_targets and through.any():
        tmap[through & np.isin(tmap, text_targets)] = 0
    masked = (tmap > 0) | (band > 0)
    for x0, y0, x1, y1 in boxes[: len(d.text_lines)]:
        masked[y0:y1, x0:x1] |= ~through[y0:y1, x0:x1]
    raw = ink.copy()
    ink[masked] = 0
    both = np.where(tmap > 0, tmap, band)
    return ink, both, band, targets, raw, widths


#: an outline at most this many px thick is a hairline: the thin band covers it
HAIRLINE = 2.0


def band_width(outline: tuple[float, float], node_pad: int) -> int:
    """Width of the band masked along a container's outline polygon, for an outline drawn
    ``outline = (thickness, reach)`` (:func:`outline_reach`): ``2 node_pad + 3`` px over a
    hairline (at most :data:`HAIRLINE` px thick), else ``2 ceil(reach) + 2 node_pad + 1``
    (an odd width, centred on the polygon), ``reach`` being how far its ink lies from the
    polygon. The polygon runs along the outline's centre
    (a frame) or its outer edge (a region grown over its outline); either way the band covers
    the whole outline: one narrower than a thick outline leaves its fringes as long thin
    strokes along the frame, which join every connector that crosses it.

    >>> band_width((1.0, 3.0), 1), band_width((2.0, 2.0), 1), band_width((9.0, 4.0), 1), band_width((9.0, 8.0), 1)
    (5, 5, 11, 19)
    """
    thickness, reach = outline
    thin = 2 * node_pad + 3
    return thin if thickness <= HAIRLINE else max(thin, 2 * int(np.ceil(reach)) + 2 * node_pad + 1)


def outline_reach(
    ink: np.ndarray, polygon: tuple[tuple[float, float], ...], reach: int, step: float = 4.0
) -> tuple[float, float]:
    """``(thickness, reach)`` in px of the ink drawn along ``polygon``: at points every
    ``step`` px on each side, the run of ink across the side (along its normal, within
    ``reach`` px of the polygon) that holds the ink pixel nearest to the polygon, its length
    and the farther of its two ends from the polygon; the medians over the points that meet
    ink. ``(0.0, 0.0)`` when fewer than a third of them do (an outline not drawn: a panel
    told from the paper by its fill alone).
    Connectors crossing the outline and text touching it are a minority of the points, so
    the median is the outline's own.

    >>> ink = np.zeros((60, 80), np.uint8); ink[10:19, 10:70] = 1; ink[41:50, 10:70] = 1
    >>> ink[10:50, 10:19] = 1; ink[10:50, 61:70] = 1                 # a frame drawn 9 px thick
    >>> outline_reach(ink, ((14.0, 14.0), (65.0, 14.0), (65.0, 45.0), (14.0, 45.0)), 8)  # on its centre
    (9.0, 4.0)
    >>> outline_reach(ink, ((10.0, 10.0), (69.0, 10.0), (69.0, 49.0), (10.0, 49.0)), 12)  # on its outer edge
    (9.0, 8.0)
    >>> outline_reach(np.zeros((60, 80), np.uint8), ((12.0, 12.0), (67.0, 12.0), (67.0, 47.0)), 6)
    (0.0, 0.0)
    """
    h, w = ink.shape
    offs = np.arange(-reach, reach + 1, dtype=float)
    far: list[float] = []
    runs: list[float] = []
    total = 0
    n = len(polygon)
    for i in range(n):
        a = np.asarray(polygon[i], float)
        b = np.asarray(polygon[(i + 1) % n], float)
        length = float(np.hypot(*(b - a)))
        if length < 2 * step:
            continue
        u = (b - a) / length
        nrm = np.array([-u[1], u[0]])
        for t in np.arange(step, length - step + 1e-9, step):
            total += 1
            q = a + t * u + offs[:, None] * nrm
            xs, ys = np.round(q[:, 0]).astype(int), np.round(q[:, 1]).astype(int)
            ok = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
            on = np.zeros(len(offs), bool)
            on[ok] = ink[ys[ok], xs[ok]] > 0
            if not on.any():
                continue
            k = int(np.argmin(np.where(on, np.abs(offs), np.inf)))
            lo, hi = k, k
            while lo > 0 and on[lo - 1]:
                lo -= 1
            while hi < len(on) - 1 and on[hi + 1]:
                hi += 1
            far.append(float(max(abs(offs[lo]), abs(offs[hi]))))
            runs.append(float(hi - lo + 1))
    if not total or 3 * len(far) < total:
        return 0.0, 0.0
    return float(np.median(runs)), float(np.median(far))


def through_lines(ink: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray:
    """The pixels of ``box`` (``x0, y0, x1, y1``) on a straight horizontal or vertical line
    that crosses the whole box and goes on outside it at both ends, as a mask of the box's
    shape. An edge label set right against its line, or a padded OCR box, covers the line
    there; glyphs never make one unbroken run across their own box and beyond, so these
    pixels are the connector's and stay ink (an underline ends with its text).

    >>> ink = np.zeros((20, 60), np.uint8); ink[12, :] = 1; ink[4:10, 20:24] = 1  # a line under a glyph
    >>> keep = through_lines(ink, (10, 2, 50, 14))
    >>> int(keep.sum()), bool(keep[10].any())
    (40, True)
    >>> ink[12, :15] = 0  # the line starts inside the box: a stroke ending there, not through it
    >>> int(through_lines(ink, (10, 2, 50, 14)).sum())
    0
    """
    x0, y0, x1, y1 = box
    h, w = ink.shape
    keep = np.zeros((max(0, y1 - y0), max(0, x1 - x0)), bool)
    if keep.size == 0 or x0 < 1 or y0 < 1 or x1 >= w or y1 >= h:
        return keep
    sub = ink[y0:y1, x0:x1] > 0
    rows = sub.all(axis=1) & (ink[y0:y1, x0 - 1] > 0) & (ink[y0:y1, x1] > 0)
    cols = sub.all(axis=0) & (ink[y0 - 1, x0:x1] > 0) & (ink[y1, x0:x1] > 0)
    keep[rows, :] = True
    keep[:, cols] = True
    return keep


def _bounds(poly: tuple[tuple[float, float], ...]) -> tuple[float, float, float, float]:
    xs, ys = [q[0] for q in poly], [q[1] for q in poly]
    return min(xs), min(ys), max(xs), max(ys)


def _area(b: tuple[float, ...]) -> float:
    return (b[2] - b[0]) * (b[3] - b[1])


def cut_tips(poly: tuple[tuple[float, float], ...], th: float) -> list[list[tuple[float, float]]]:
    """Triangles restoring acute polygon corners that a simplified contour cut off: for a
    short edge (at most ``0.5 th``) whose two neighbouring edges converge outwards at an
    acute angle (< 75 degrees) within ``th`` of it, the triangle between the short edge and
    the apex where the neighbours meet (a diamond's or triangle's tip)."""
    pts = [np.asarray(p, float) for p in poly]
    n = len(pts)
    out: list[list[tuple[float, float]]] = []
    if n < 4:
        return out
    for i in range(n):
        a, b = pts[i], pts[(i + 1) % n]
        if float(np.hypot(*(b - a))) > max(3.0, 0.5 * th):
            continue
        pa, nb = pts[(i - 1) % n], pts[(i + 2) % n]
        da, db = a - pa, b - nb  # directions running into the short edge from both sides
        la, lb = float(np.hypot(*da)), float(np.hypot(*db))
        if la < 1e-6 or lb < 1e-6:
            continue
        da, db = da / la, db / lb
        cos_apex = float(da @ db)  # both run towards the apex
        if cos_apex < math.cos(math.radians(75)):
            continue
        # apex: a + s da = b + t db
        m = np.array([[da[0], -db[0]], [da[1], -db[1]]])
        if abs(float(np.linalg.det(m))) < 1e-6:
            continue
        s_, t_ = np.linalg.solve(m, b - a)
        if s_ <= 0 or t_ <= 0 or s_ > th or t_ > th:
            continue
        apex = a + s_ * da
        out.append([(float(a[0]), float(a[1])), (float(apex[0]), float(apex[1])), (float(b[0]), float(b[1]))])
    return out
