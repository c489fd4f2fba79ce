"""Region masks: holes filled, an interior grown out over its outline."""

from __future__ import annotations

import cv2
import numpy as np


def _grow_over_outline(m: np.ndarray, ink: np.ndarray, max_px: int = 10) -> np.ndarray:
    """Grow a region's interior mask outwards over its outline: at least 2 px, then 1 px
    more while at least half of the next 1-px ring is ink (connectors touching the outline
    cover a small part of a ring and do not count)."""
    k = np.ones((3, 3), np.uint8)
    cur = cv2.dilate(m, np.ones((5, 5), np.uint8))
    for _ in range(max_px):
        nxt = cv2.dilate(cur, k)
        ring = (nxt > 0) & (cur == 0)
        if not ring.any() or ink[ring].mean() < 0.5:
            break
        cur = nxt
    return cur


def _fill_holes(mask: np.ndarray) -> np.ndarray:
    cnts, _ = cv2.findContours(mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros(mask.shape, np.uint8)
    cv2.drawContours(out, cnts, -1, 1, thickness=cv2.FILLED)
    return out
