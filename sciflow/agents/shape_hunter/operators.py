"""Circled operator symbols (step 7): ``⊕`` and ``⊗`` found as Hough circles with ink on
their diameters."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import Operator
from sciflow.agents.shape_hunter.ink import background_color, ink_mask


def find_operators(image: np.ndarray, text_height: float, params: Mapping[str, Any]) -> list[Operator]:
    """Circled operators (see the package docstring, step 7)."""
    gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
    ink = ink_mask(image, background_color(image), int(params.get("ink_threshold", 60))) > 0
    rmin_f, rmax_f = params.get("operator_radius", [0.35, 1.6])
    rmin = max(4, int(rmin_f * text_height))
    rmax = max(rmin + 2, int(rmax_f * text_height))
    circles = cv2.HoughCircles(
        cv2.GaussianBlur(gray, (3, 3), 0),
        cv2.HOUGH_GRADIENT,
        dp=1,
        minDist=rmin * 2,
        param1=100,
        param2=18,
        minRadius=rmin,
        maxRadius=rmax,
    )
    if circles is None:
        return []
    out: list[Operator] = []
    for cx, cy, r in sorted(circles[0].tolist()):
        op = circled_symbol(ink, float(cx), float(cy), float(r))
        if op is not None:
            out.append(op)
    return out


def circled_symbol(ink: np.ndarray, cx: float, cy: float, r: float, band_min: float = 2.0) -> Operator | None:
    """The circled operator drawn round ``(cx, cy)`` with radius about ``r`` on the ``ink``
    mask, or ``None``: the ring (radius ``r`` +- 1.5 px, the best of five, the nearest to
    ``r`` among equals) is ink over at
    least 75 % of its circumference (within one pixel); ink on both the horizontal and the
    vertical diameter (> 85 % of 0.7 r either side) with empty quadrants
    (:func:`quadrant_ink` at most 15 %) is ``⊕``, on both diagonals ``⊗``.

    >>> m = np.zeros((40, 40), bool)
    >>> yy, xx = np.mgrid[0:40, 0:40]
    >>> m[np.abs(np.hypot(xx - 20, yy - 20) - 12) < 1] = True     # the circle
    >>> circled_symbol(m, 20.0, 20.0, 12.0) is None                # no arms: no operator
    True
    >>> m[20, 8:33] = m[8:33, 20] = True                           # the arms of a plus
    >>> circled_symbol(m, 20.0, 20.0, 12.0).symbol
    '⊕'
    """
    h, w = ink.shape
    # ink within one pixel (3 x 3) of a sample point: the mask dilated once, then looked up
    x0, y0 = max(0, int(cx - r - 4)), max(0, int(cy - r - 4))
    x1, y1 = min(w, int(cx + r + 5)), min(h, int(cy + r + 5))
    near = cv2.dilate(ink[y0:y1, x0:x1].astype(np.uint8), np.ones((3, 3), np.uint8)) > 0

    def ink_at(px: np.ndarray, py: np.ndarray) -> np.ndarray:
        xi = np.clip(np.round(px).astype(int) - x0, 0, x1 - x0 - 1)
        yi = np.clip(np.round(py).astype(int) - y0, 0, y1 - y0 - 1)
        return near[yi, xi]

    t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    best = 0.0
    rr = r
    for dr in (0.0, -0.75, 0.75, -1.5, 1.5):  # ties go to the radius nearest the one found
        frac = float(ink_at(cx + (r + dr) * np.cos(t), cy + (r + dr) * np.sin(t)).mean())
        if frac > best:
            best, rr = frac, r + dr
    if best < 0.75:
        return None
    s = np.linspace(-0.7, 0.7, 15) * rr
    hor = ink_at(cx + s, np.full_like(s, cy)).mean()
    ver = ink_at(np.full_like(s, cx), cy + s).mean()
    d = s / np.sqrt(2)
    dia1 = ink_at(cx + d, cy + d).mean()
    dia2 = ink_at(cx + d, cy - d).mean()
    # the quadrants must be empty (not a filled disc, a letter or a pattern of marks): of
    # the disc 0.7 r across, away from the two arms (a band of max(band_min, 0.2 r) px each side),
    # at most 15 % is ink, read on the ink itself (a small glyph's anti-aliased bars and
    # ring come within a pixel of its quadrants)
    quad = quadrant_ink(ink, cx, cy, rr, band_min)
    if hor > 0.85 and ver > 0.85 and quad <= 0.15:
        return Operator("⊕", (cx, cy), float(rr), best)
    if dia1 > 0.85 and dia2 > 0.85 and hor < 0.6:
        return Operator("⊗", (cx, cy), float(rr), best)
    return None


def symbol_in_box(ink: np.ndarray, bbox: tuple[float, float, float, float]) -> Operator | None:
    """A circled operator drawn inside an OCR line box (a one-symbol reading such as ``④``):
    the circle round the box's ink (centred on the ink's bounding box, radius half its
    larger side, or 1 px less), tested by :func:`circled_symbol`. A glyph typed at the
    text's own size is smaller than the Hough search's smallest circle.

    >>> m = np.zeros((30, 30), bool)
    >>> yy, xx = np.mgrid[0:30, 0:30]
    >>> m[np.abs(np.hypot(xx - 14, yy - 15) - 6) < 0.7] = True       # a 13 px circled plus
    >>> m[15, 8:21] = m[9:22, 14] = True
    >>> symbol_in_box(m, (4.0, 5.0, 25.0, 26.0)).symbol
    '⊕'
    """
    h, w = ink.shape
    x0, y0 = max(0, int(bbox[0])), max(0, int(bbox[1]))
    x1, y1 = min(w, int(np.ceil(bbox[2]))), min(h, int(np.ceil(bbox[3])))
    ys, xs = np.nonzero(ink[y0:y1, x0:x1])
    if xs.size == 0:
        return None
    cx, cy = x0 + (xs.min() + xs.max()) / 2.0, y0 + (ys.min() + ys.max()) / 2.0
    half = (max(xs.max() - xs.min(), ys.max() - ys.min()) + 1) / 2.0
    for r in (half - 0.5, half - 1.5):
        if r >= 3.0:
            op = circled_symbol(ink, cx, cy, r, band_min=1.0)
            if op is not None:
                return op
    return None


def quadrant_ink(ink: np.ndarray, cx: float, cy: float, r: float, band_min: float = 2.0) -> float:
    """The share of ink in the disc of radius ``0.7 r`` around ``(cx, cy)`` outside the bands
    ``max(band_min, 0.2 r)`` px either side of its horizontal and vertical diameters (2 px,
    or 1 px for a glyph typed at text size, whose quadrants a 2 px band leaves empty): 0 for
    a circled plus, near 1 for a filled disc.

    >>> m = np.zeros((40, 40), bool)
    >>> m[19:21, 5:35] = m[5:35, 19:21] = True             # the arms of a plus
    >>> quadrant_ink(m, 19.5, 19.5, 14.0)
    0.0
    >>> m[8:31, 8:31] = True                                # a filled square
    >>> quadrant_ink(m, 19.5, 19.5, 14.0) > 0.9
    True
    """
    h, w = ink.shape
    rad, band = 0.7 * r, max(band_min, 0.2 * r)
    x0, x1 = max(0, int(cx - rad)), min(w, int(cx + rad) + 2)
    y0, y1 = max(0, int(cy - rad)), min(h, int(cy + rad) + 2)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    dx, dy = xx - cx, yy - cy
    sel = (dx**2 + dy**2 <= rad**2) & (np.abs(dx) > band) & (np.abs(dy) > band)
    return float(ink[y0:y1, x0:x1][sel].mean()) if sel.any() else 1.0
