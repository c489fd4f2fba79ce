"""Region masks: holes filled, an interior grown out over its outline (against the paper or
panel around it)."""

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


def surround_ink(m: np.ndarray, window: np.ndarray, ink: np.ndarray, gap: int = 12, width: int = 4,
                 thr: int = 40) -> np.ndarray:
    """The ink to grow region ``m`` (a mask over the RGB ``window``) over: ``ink`` (the
    difference from the page's background), unless the region sits on a filled panel: a band
    ``gap`` to ``gap + width`` px outside it that is mostly ink itself, 70 % of it within 20
    levels of its median colour (one fill); then the difference (max channel > ``thr``) from
    that colour. On a panel whose fill is itself ``ink`` against the page, every ring round a
    shape is ink, and the shape would grow over the panel up to the grower's limit (the
    arrowheads touching its outline then fall inside it).

    >>> win = np.full((60, 60, 3), 200, np.uint8)              # a pale panel, 40+ from white
    >>> win[18:42, 18:42] = 0; win[20:40, 20:40] = 250          # a box: 2 px black outline
    >>> m = np.zeros((60, 60), np.uint8); m[20:40, 20:40] = 1
    >>> page = (np.abs(win.astype(int) - 255).max(axis=2) > 40)
    >>> int(_grow_over_outline(m, page).sum()), int(_grow_over_outline(m, surround_ink(m, win, page)).sum())
    (1936, 576)
    """
    outer = cv2.dilate(m, np.ones((2 * (gap + width) + 1,) * 2, np.uint8))
    inner = cv2.dilate(m, np.ones((2 * gap + 1,) * 2, np.uint8))
    band = (outer > 0) & (inner == 0)
    if not band.any() or ink[band].mean() < 0.5:
        return ink
    pix = window[band].reshape(-1, 3).astype(np.int16)
    colour = np.median(pix, axis=0).astype(np.int16)
    if (np.abs(pix - colour).max(axis=1) <= 20).mean() < 0.7:
        return ink  # no one fill around it (other shapes, several panels): the page decides
    return np.abs(window.astype(np.int16) - colour).max(axis=2) > thr
