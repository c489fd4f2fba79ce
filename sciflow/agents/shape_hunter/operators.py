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
        # the quadrants must be mostly empty (not a filled disc or a letter)
        q = np.array([0.5 * rr])
        quad = np.mean(
            [ink_at(cx + q * a, cy + q * b)[0] for a, b in ((0.7, 0.7), (-0.7, 0.7), (0.7, -0.7), (-0.7, -0.7))]
        )
        if hor > 0.85 and ver > 0.85 and quad <= 0.25:
            sym = "⊕"
        elif dia1 > 0.85 and dia2 > 0.85 and hor < 0.6:
            sym = "⊗"
        else:
            continue
        out.append(Operator(sym, (float(cx), float(cy)), float(rr), float(best)))
    return out
