"""Ink and colour: the background colour, per-pixel channel differences, ink masks, and ink
without the glyphs of the OCR lines."""

from __future__ import annotations

import cv2
import numpy as np

from sciflow.agents.diagram import TextBox


def background_color(image: np.ndarray) -> np.ndarray:
    """Median RGB of the 1-px image border."""
    border = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]], axis=0)
    return np.median(border, axis=0)


def channel_difference(image: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per pixel, the largest absolute channel difference between two uint8 RGB images of
    the same shape (uint8 ``H x W``). Equal to
    ``np.abs(image.astype(int16) - ref.astype(int16)).max(axis=2)``, in OpenCV (5-6x faster:
    this runs several times per image).

    >>> a = np.array([[[10, 200, 30]]], np.uint8); b = np.array([[[0, 255, 30]]], np.uint8)
    >>> int(channel_difference(a, b)[0, 0])
    55
    """
    return _max_channel(cv2.absdiff(np.ascontiguousarray(image), np.ascontiguousarray(ref)))  # exact for uint8


def _max_channel(d: np.ndarray) -> np.ndarray:
    r, g, b = cv2.split(d)
    return cv2.max(cv2.max(r, g), b)


def ink_mask(image: np.ndarray, bg: np.ndarray, thr: int = 60) -> np.ndarray:
    """Pixels whose max channel difference from ``bg`` exceeds ``thr`` (uint8 0/255).
    ``bg`` (an RGB colour, e.g. a median) is truncated to integers."""
    r, g, b = (float(v) for v in np.asarray(bg).astype(np.int16).astype(np.uint8))
    d = cv2.absdiff(np.ascontiguousarray(image), (r, g, b, 0.0))  # a per-channel scalar: exact for uint8
    return cv2.threshold(_max_channel(d), thr, 255, cv2.THRESH_BINARY)[1]


def _same_color(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    return float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float)))) <= tol


def without_glyphs(mask: np.ndarray, text_lines: list[TextBox], inset: float = 0.0) -> np.ndarray:
    """``mask`` minus every 8-connected piece lying wholly inside an OCR line box: the box
    grown by 2 px on every side, or, with ``inset`` > 0, grown by 2 px to the sides with its
    top and bottom ``inset`` x its height left out (so a line running through the margin of
    a title's box is never taken for a glyph); for a line drawn at 90 or 270 degrees
    (:attr:`TextBox.rotation`) its top and bottom are the box's left and right sides.

    >>> m = np.zeros((20, 40), np.uint8)
    >>> m[8:12, 5:9] = 255                      # a glyph inside the box
    >>> m[2, 0:40] = 255                        # a line through the box's top margin
    >>> box = TextBox(0, "a", (4.0, 1.0, 20.0, 16.0), 0.9)
    >>> int(without_glyphs(m, [box]).sum() // 255), int(without_glyphs(m, [box], inset=0.2).sum() // 255)
    (40, 40)
    >>> m[2, 0:40] = 0; m[2, 6:14] = 255       # a dash of that line, wholly inside the box
    >>> int(without_glyphs(m, [box]).sum() // 255), int(without_glyphs(m, [box], inset=0.2).sum() // 255)
    (0, 8)
    """
    n, lab, st, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    x0, y0 = st[:, 0], st[:, 1]
    x1, y1 = x0 + st[:, 2], y0 + st[:, 3]
    glyph = np.zeros(n, bool)
    for t in text_lines:
        bx0, by0, bx1, by1 = t.bbox
        v = inset * t.height if inset > 0 else -2.0
        if t.rotation % 180:  # a line drawn at 90 or 270: its top and bottom are the box's sides
            glyph |= (x0 >= bx0 + v) & (y0 >= by0 - 2) & (x1 <= bx1 - v) & (y1 <= by1 + 2)
        else:
            glyph |= (x0 >= bx0 - 2) & (y0 >= by0 + v) & (x1 <= bx1 + 2) & (y1 <= by1 - v)
    glyph[0] = False
    return np.where(glyph[lab], 0, mask).astype(np.uint8)


def colour_concentration(pixels: np.ndarray, k: int = 6, step: int = 24) -> float:
    """The share of ``pixels`` (``N x 3`` uint8 RGB) falling in their ``k`` commonest colour
    cells, the RGB cube cut into cells of ``step`` levels per channel. Drawn regions are flat
    fills, outlines and text in a few colours (on the figures we measured, >= 0.8 even with
    anti-aliasing and JPEG noise); a photograph's shading spreads over many cells (0.3-0.55).

    >>> flat = np.array([[250, 250, 250]] * 90 + [[0, 0, 0]] * 10, np.uint8)
    >>> colour_concentration(flat)
    1.0
    >>> ramp = np.array([[v, 255 - v, (3 * v) % 256] for v in range(0, 256, 2)], np.uint8)
    >>> colour_concentration(ramp) < 0.2
    True
    """
    if len(pixels) == 0:
        return 1.0
    q = (np.asarray(pixels, np.int32) // step) * np.array([10000, 100, 1])
    _, counts = np.unique(q.sum(axis=1), return_counts=True)
    return float(np.sort(counts)[::-1][:k].sum() / len(pixels))
