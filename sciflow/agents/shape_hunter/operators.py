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
    h, w = gray.shape
    out: list[Operator] = []

    # ink within one pixel (3 x 3) of a sample point: the mask dilated once, then looked up
    near_ink = cv2.dilate(ink.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0

    def ink_at(px: np.ndarray, py: np.ndarray) -> np.ndarray:
        xi = np.clip(np.round(px).astype(int), 0, w - 1)
        yi = np.clip(np.round(py).astype(int), 0, h - 1)
        return near_ink[yi, xi]

    for cx, cy, r in sorted(circles[0].tolist()):
        t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
        best = 0.0
        rr = r
        for dr in (-1.5, -0.75, 0.0, 0.75, 1.5):
            frac = float(ink_at(cx + (r + dr) * np.cos(t), cy + (r + dr) * np.sin(t)).mean())
            if frac > best:
                best, rr = frac, r + dr
        if best < 0.75:
            continue
        s = np.linspace(-0.7, 0.7, 15) * rr
        hor = ink_at(cx + s, np.full_like(s, cy)).mean()
        ver = ink_at(np.full_like(s, cx), cy + s).mean()
        d = s / np.sqrt(2)
        dia1 = ink_at(cx + d, cy + d).mean()
        dia2 = ink_at(cx + d, cy - d).mean()
        # the quadrants must be empty (not a filled disc, a letter or a pattern of marks): of
        # the disc 0.7 r across, away from the two arms (a band of max(2, 0.2 r) px each side),
        # at most 15 % is ink, read on the ink itself (a small glyph's anti-aliased bars and
        # ring come within a pixel of its quadrants)
        quad = quadrant_ink(ink, cx, cy, rr)
        if hor > 0.85 and ver > 0.85 and quad <= 0.15:
            sym = "⊕"
        elif dia1 > 0.85 and dia2 > 0.85 and hor < 0.6:
            sym = "⊗"
        else:
            continue
        out.append(Operator(sym, (float(cx), float(cy)), float(rr), float(best)))
    return out


def quadrant_ink(ink: np.ndarray, cx: float, cy: float, r: float) -> float:
    """The share of ink in the disc of radius ``0.7 r`` around ``(cx, cy)`` outside the bands
    ``max(2, 0.2 r)`` px either side of its horizontal and vertical diameters: 0 for a
    circled plus, near 1 for a filled disc.

    >>> m = np.zeros((40, 40), bool)
    >>> m[19:21, 5:35] = m[5:35, 19:21] = True             # the arms of a plus
    >>> quadrant_ink(m, 19.5, 19.5, 14.0)
    0.0
    >>> m[8:31, 8:31] = True                                # a filled square
    >>> quadrant_ink(m, 19.5, 19.5, 14.0) > 0.9
    True
    """
    h, w = ink.shape
    rad, band = 0.7 * r, max(2.0, 0.2 * r)
    x0, x1 = max(0, int(cx - rad)), min(w, int(cx + rad) + 2)
    y0, y1 = max(0, int(cy - rad)), min(h, int(cy + rad) + 2)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    dx, dy = xx - cx, yy - cy
    sel = (dx**2 + dy**2 <= rad**2) & (np.abs(dx) > band) & (np.abs(dy) > band)
    return float(ink[y0:y1, x0:x1][sel].mean()) if sel.any() else 1.0
