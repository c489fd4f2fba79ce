"""Text drawn at 90 or 270 degrees: tall OCR lines read upright both ways, and the frame in
which rotated lines group into labels.

Why: a text-line detector finds a rotated word as a tall box, but the recogniser reads a line
left to right. PP-OCR (the default ``rapidocr`` backend) turns every box at least 1.5 x as tall
as wide by 90 degrees counter-clockwise before recognising it, which is upright only for text
that reads top to bottom; text that reads bottom to top (the usual rotation of a label in a
narrow box, as drawn by TikZ, matplotlib or PowerPoint) is then read upside down: "Convv Bock"
at 0.68 for "Conv Block" (1.00 the right way up). Which way a tall box's text runs cannot be
told from the box, so each tall line is read upright under both hypotheses (drawn at 90 or
270 degrees) and the more confident reading is kept (:func:`reread_tall`). A recogniser
reading a crop upside down produces a weak reading; the right way up it reads the word as it
reads upright text. Upright text in a tall box (one narrow glyph, "I") is not re-read at 0
degrees: the pieces of a vertical line read that way come out as letters ("ı" at 0.85 on the
dashed lines of a real figure), where read turned they come out as dashes the filters drop.

Rotated lines then group into multi-line labels in their own upright frame (:func:`to_frame`):
the lines of a label drawn at 90 degrees stack left to right, at 270 right to left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import cv2
import numpy as np

from sciflow.agents.diagram import BBox, TextBox

#: np.rot90 turns that bring a line drawn at each rotation upright (k > 0: counter-clockwise).
UPRIGHT_TURNS = {0: 0, 90: -1, 270: 1}

#: ``recognize(crops) -> [(text, confidence)]``: recognition only, one upright line per crop.
Recognizer = Callable[[Sequence[np.ndarray]], list[tuple[str, float]]]


def is_tall(bbox: BBox, tall_ratio: float = 1.5) -> bool:
    """Whether a line box may hold rotated text: at least ``tall_ratio`` x as tall as wide.

    >>> is_tall((0, 0, 20, 90)), is_tall((0, 0, 60, 20))
    (True, False)
    """
    w, h = bbox[2] - bbox[0], bbox[3] - bbox[1]
    return w > 0 and h >= tall_ratio * w


def upright_crop(image: np.ndarray, bbox: BBox, rotation: int, scale: float = 1.0) -> np.ndarray:
    """The crop of ``bbox`` (clipped to the image) turned upright for text drawn at
    ``rotation`` (0, 90 or 270 counter-clockwise degrees), enlarged ``scale`` times.

    >>> img = np.zeros((10, 10, 3), np.uint8); img[2:8, 4:6] = 255
    >>> upright_crop(img, (4, 2, 6, 8), 90).shape, upright_crop(img, (4, 2, 6, 8), 0).shape
    ((2, 6, 3), (6, 2, 3))
    """
    h, w = image.shape[:2]
    x0, y0 = max(0, int(np.floor(bbox[0]))), max(0, int(np.floor(bbox[1])))
    x1, y1 = min(w, int(np.ceil(bbox[2]))), min(h, int(np.ceil(bbox[3])))
    crop = image[y0:y1, x0:x1]
    if scale != 1.0 and crop.size:
        crop = cv2.resize(crop, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
    return np.ascontiguousarray(np.rot90(crop, UPRIGHT_TURNS[rotation]))


def reread_tall(
    image: np.ndarray,
    lines: list[TextBox],
    recognize: Recognizer,
    *,
    tall_ratio: float = 1.5,
    min_width: float = 6.0,
    scale: float = 1.0,
) -> list[TextBox]:
    """``lines`` with every tall line (:func:`is_tall`, at least ``min_width`` px wide) read
    again upright as drawn at 90 and at 270 degrees; the more confident reading replaces the
    line's text and confidence and sets its ``rotation`` (a tie: 90). Other lines are returned
    unchanged, in order.

    >>> def fake(crops):  # reads only a crop wider than tall, i.e. one turned upright
    ...     return [("word", 0.9) if c.shape[1] > c.shape[0] else ("", 0.0) for c in crops]
    >>> img = np.full((100, 40, 3), 255, np.uint8)
    >>> out = reread_tall(img, [TextBox(0, "wrod", (10, 5, 30, 95), 0.6)], fake)
    >>> out[0].text, out[0].confidence, out[0].rotation
    ('word', 0.9, 90)
    """
    tall = [i for i, t in enumerate(lines) if is_tall(t.bbox, tall_ratio) and t.bbox[2] - t.bbox[0] >= min_width]
    if not tall:
        return list(lines)
    rotations = (90, 270)
    crops = [upright_crop(image, lines[i].bbox, r, scale) for i in tall for r in rotations]
    readings = recognize(crops)
    out = list(lines)
    for k, i in enumerate(tall):
        cands = readings[k * len(rotations):(k + 1) * len(rotations)]
        best = max(range(len(rotations)), key=lambda j: (cands[j][1] if cands[j][0].strip() else -1.0, -j))
        text, conf = cands[best]
        if text.strip():
            out[i] = replace(lines[i], text=text, confidence=float(conf), rotation=rotations[best])
    return out


def to_frame(bbox: BBox, rotation: int) -> BBox:
    """``bbox`` in the upright frame of text drawn at ``rotation``: x along the reading
    direction, y down across the lines (so the next line of a label lies below).

    >>> to_frame((568, 49, 588, 153), 90), to_frame((568, 49, 588, 153), 270)
    ((-153, 568, -49, 588), (49, -588, 153, -568))
    """
    x0, y0, x1, y1 = bbox
    if rotation == 90:  # reads upwards; the next line lies to the right
        return (-y1, x0, -y0, x1)
    if rotation == 270:  # reads downwards; the next line lies to the left
        return (y0, -x1, y1, -x0)
    return bbox
