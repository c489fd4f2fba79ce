"""Shape Reader: the labels of closed shapes the Text Spotter left empty, read alone from an
enlarged copy of each shape's inside.

Why: the text-line detector misses short labels, most of all one or two glyphs alone in a box
(an italic ``v``, ``z'``, ``W1``): too small and too short to make a line. A closed shape that
holds no OCR line is a box whose label was missed or an empty decoration; read alone and
enlarged, the inside gives the label of the first kind and nothing for the second.

Exact behaviour (``[parser.shape_text]``; runs after the Shape Hunter):

1. Candidates, smallest first: shapes of a box kind (:data:`BOX_KINDS`; not pictures, cylinders
   read from pictures, free regions or polygons) whose box holds no OCR line's centre and no
   other shape and crosses no other shape's box over a tenth of the smaller, at least
   ``min_side`` (0.8) and at most ``max_side`` (10) text heights on each side (the median OCR
   line height, :meth:`~sciflow.agents.diagram.Diagram.text_height`).
2. The inside: the shape's box shrunk by ``inset`` (0.06) of its smaller side (at least 2 px).
   Its ink is every pixel farther than ``ink_threshold`` (60) from the fill around it (the
   median over 1.5 text heights: a gradient fill is no ink); ink pieces (8-connected)
   touching the inside's border are the outline or arrows entering and are painted over with
   that fill. Without a piece left at least ``min_glyph`` (0.3) text
   heights tall the shape is skipped: there is nothing to read; so is a shape whose fill,
   away from the ink, differs from its local median by more than ``fill_noise`` (4) on
   average: a picture or a shaded drawing, not a box.
3. The cleaned inside is enlarged ``upscale`` (3) times, framed by a margin of fill half a
   text height wide, and read by the OCR backend (detector and recogniser); when the detector
   finds no line, the recogniser alone reads the kept ink's box framed by a quarter text
   height of fill (a lone glyph or two make no line for the detector). Readings below
   ``min_confidence`` (0.6), holding a glyph the recogniser could not read (:data:`UNREAD`),
   empty after :func:`~sciflow.agents.text_filters.clean_text`
   (one arrowhead-like letter such as ``v`` is kept here: no stroke reaches the ink read), or
   whose box does not overlap the kept ink are dropped. A shape holding a logo the Text
   Spotter dropped (``diagram.logos``) is not read: its mark is no label.
4. What is read becomes new OCR lines (boxes mapped back to the image), and the labels are
   grouped again from all lines (:func:`~sciflow.agents.text_spotter.group_lines`). Shapes
   enclosing a shape read this way are then no longer empty; they are containers.
5. Stray glyphs beside a label (:func:`stray_glyphs`): the detector also drops a glyph or two
   set apart from the words of a label it reads (a step number ``1`` above "Sample API
   Calls", a serif ``0`` before "Distribution Alignment"). In every shape of a box kind that
   holds an OCR line's centre and no other shape, the ink of the cleaned inside (step 2)
   outside every OCR line box (grown by a fifth of its height) is joined into glyph groups
   (closed over a third of a line height); a group is a stray glyph when it is 0.4 to 1.3 times
   as tall as the nearest line of the shape, at most ``2.5`` times as wide as tall, set in that
   line's row at most 1.5 line heights before or after it, or on a row of its own at most a
   line height above or below it aligned with its left edge or centre, and inked no more
   colourfully than the line (the chroma of the median colour of its ink exceeds the line's
   by at most ``glyph_color_tol``, 60: icons beside labels are filled in colour).
   Each is read by the recogniser alone (framed, enlarged) and kept when the reading is one
   to three ASCII letters or digits at ``glyph_min_confidence`` (0.9: the detector saw no
   text there, so the recogniser alone must be sure) or more; kept readings
   are new OCR lines, and the labels are grouped again.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from sciflow.agents import overlay
from sciflow.agents.diagram import BBox, Diagram, Shape, TextBox, bbox_area, bbox_intersection
from sciflow.agents.registry import AGENTS, BackendAgent
from sciflow.agents.text_filters import clean_text, fold_latin_diacritics
from sciflow.agents.text_spotter import BACKENDS, group_lines

log = logging.getLogger(__name__)

#: What a recogniser writes for a glyph it cannot read (PP-OCR: the white square).
UNREAD = frozenset("\u25a1\ufffd")

#: Shape kinds that can be a labelled box.
BOX_KINDS = frozenset({"rect", "rounded", "ellipse", "circle", "diamond", "trapezoid", "parallelogram"})


def _inside(outer: BBox, inner: BBox) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def _overlaps(a: BBox, b: BBox, share: float = 0.1) -> bool:
    """Whether the boxes cross over more than ``share`` of the smaller one while neither holds
    the other (boxes drawn edge to edge, or sharing a side, cross by a sliver only)."""
    cross = bbox_intersection(a, b) > share * min(bbox_area(a), bbox_area(b))
    return cross and not _inside(a, b) and not _inside(b, a)


def _holds_line(box: BBox, lines: list[TextBox]) -> bool:
    """Whether the centre of one of ``lines`` lies in ``box``."""
    return any(box[0] <= (t.bbox[0] + t.bbox[2]) / 2 <= box[2] and box[1] <= (t.bbox[1] + t.bbox[3]) / 2 <= box[3]
               for t in lines)


def empty_boxes(shapes: list[Shape], lines: list[TextBox], th: float, min_side: float, max_side: float) -> list[Shape]:
    """Step 1: shapes of a box kind holding no line centre and no other shape, crossing no
    other shape's box over a tenth of the smaller (cards of a stack, cells of a drawn cube:
    their insides hold pieces of each other's outlines), sized between ``min_side`` and
    ``max_side`` text heights ``th``, smallest first.

    >>> a = Shape(0, "rect", (0, 0, 40, 40), (), (255, 255, 255), 1.0, 1600.0)
    >>> b = Shape(1, "rect", (100, 0, 140, 40), (), (255, 255, 255), 1.0, 1600.0)
    >>> [s.id for s in empty_boxes([a, b], [TextBox(0, "y", (110, 10, 130, 30), 0.9)], 20, 0.8, 10)]
    [0]
    """
    out = []
    for s in shapes:
        x0, y0, x1, y1 = s.bbox
        w, h = x1 - x0, y1 - y0
        if s.kind not in BOX_KINDS or not (min_side * th <= min(w, h) and max(w, h) <= max_side * th):
            continue
        if _holds_line(s.bbox, lines):
            continue
        if any(o.id != s.id and (_inside(s.bbox, o.bbox) or _overlaps(s.bbox, o.bbox)) for o in shapes):
            continue
        out.append(s)
    return sorted(out, key=lambda s: (s.area, s.bbox[1], s.bbox[0]))


def labelled_boxes(shapes: list[Shape], lines: list[TextBox], th: float, max_side: float) -> list[Shape]:
    """Step 5's shapes: of a box kind (or a cylinder), holding an OCR line's centre and no
    other shape, at most ``max_side`` text heights ``th`` on each side; in image order.

    >>> a = Shape(0, "rect", (0, 0, 80, 40), (), (255, 255, 255), 1.0, 3200.0)
    >>> b = Shape(1, "rect", (100, 0, 140, 40), (), (255, 255, 255), 1.0, 1600.0)
    >>> [s.id for s in labelled_boxes([a, b], [TextBox(0, "Sample", (10, 10, 70, 30), 0.9)], 20, 10)]
    [0]
    """
    out = []
    for s in shapes:
        x0, y0, x1, y1 = s.bbox
        if s.kind not in BOX_KINDS | {"cylinder"} or max(x1 - x0, y1 - y0) > max_side * th:
            continue
        if not _holds_line(s.bbox, lines) or any(o.id != s.id and _inside(s.bbox, o.bbox) for o in shapes):
            continue
        out.append(s)
    return sorted(out, key=lambda s: (s.bbox[1], s.bbox[0], s.id))


def fill_residual(crop: np.ndarray, th: float) -> tuple[np.ndarray, np.ndarray]:
    """``(fill, residual)``: the fill around every pixel of ``crop`` (a median over 1.5 text
    heights ``th``, so a gradient fill is followed) and each pixel's largest channel
    difference from it (ink stands out of the fill; the fill itself does not).

    >>> crop = np.full((30, 30, 3), 200, np.uint8); crop[10:14, 10:14] = 0
    >>> fill, resid = fill_residual(crop, 10.0)
    >>> int(fill[12, 12, 0]), int(resid[12, 12]), int(resid[0, 0])
    (200, 200, 0)
    """
    k = max(3, int(round(1.5 * th)) | 1)
    fill = cv2.medianBlur(crop, k)
    return fill, np.abs(crop.astype(np.int16) - fill.astype(np.int16)).max(axis=2)


def cleaned_inside(image: np.ndarray, shape: Shape, inset: float, ink_threshold: int, th: float,
                   min_glyph: float, fill_noise: float = 4.0) -> tuple[np.ndarray, tuple[int, int], BBox] | None:
    """Step 2: the shape's inside with every ink piece touching its border painted over with
    the fill around it, its top-left corner in the image and the box of the ink kept (crop
    coordinates). The fill is measured locally (a median over 1.5 text heights), so a gradient
    fill is no ink. None when no kept piece is ``min_glyph`` text heights ``th`` tall, or when
    the fill is no flat fill: away from the ink (2 px) the pixels differ from it by more than
    ``fill_noise`` on average (a picture, a shaded drawing: measured 7 to 28 on the dev
    figures' pictures, at most 3 in their boxes).

    >>> img = np.full((60, 60, 3), 255, np.uint8)
    >>> img[5, 5:55] = img[54, 5:55] = img[5:55, 5] = img[5:55, 54] = 0   # the outline
    >>> img[20:40, 25:35] = 0                                             # a glyph
    >>> img[30, 0:20] = 0                                                 # an arrow entering
    >>> s = Shape(0, "rect", (4, 4, 56, 56), (), (255, 255, 255), 1.0, 2704.0)
    >>> crop, (cx, cy), ink = cleaned_inside(img, s, 0.02, 60, 20, 0.3)
    >>> crop.shape[:2], (cx, cy), ink, int((crop < 128).any(axis=2).sum())
    ((48, 48), (6, 6), (19.0, 14.0, 29.0, 34.0), 200)
    """
    x0, y0, x1, y1 = shape.bbox
    m = max(2, int(round(inset * min(x1 - x0, y1 - y0))))
    X0, Y0, X1, Y1 = int(x0) + m, int(y0) + m, int(np.ceil(x1)) - m, int(np.ceil(y1)) - m
    X0, Y0 = max(0, X0), max(0, Y0)
    X1, Y1 = min(image.shape[1], X1), min(image.shape[0], Y1)
    if X1 - X0 < 4 or Y1 - Y0 < 4:
        return None
    crop = np.ascontiguousarray(image[Y0:Y1, X0:X1])
    fill, resid = fill_residual(crop, th)
    ink = (resid > ink_threshold).astype(np.uint8)
    away = cv2.dilate(ink, np.ones((5, 5), np.uint8)) == 0
    if not away.any() or float(resid[away].mean()) > fill_noise:
        return None
    crop = crop.copy()
    n, lab, st, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    h, w = ink.shape
    keep = np.zeros(n, bool)
    for i in range(1, n):
        x, y, bw, bh = (int(v) for v in st[i, :4])
        border = x == 0 or y == 0 or x + bw >= w or y + bh >= h
        keep[i] = not border
    if not any(keep[i] and st[i, 3] >= min_glyph * th for i in range(1, n)):
        return None
    # everything not kept, outline and anti-aliasing around it included, becomes fill
    drop = (lab > 0) & ~keep[lab]
    drop = cv2.dilate(drop.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    paint = drop & ~keep[lab]
    crop[paint] = fill[paint]
    ks = [i for i in range(1, n) if keep[i]]
    box = (float(min(st[i, 0] for i in ks)), float(min(st[i, 1] for i in ks)),
           float(max(st[i, 0] + st[i, 2] for i in ks)), float(max(st[i, 1] + st[i, 3] for i in ks)))
    return crop, (X0, Y0), box


def _beside_line(box: BBox, line: BBox, h: float) -> bool:
    """Whether ``box`` sits where a label's missing glyph does: in the row of ``line`` (their
    spans overlap by half the smaller height) at most ``1.5 h`` before or after it, or on a
    row of its own at most ``h`` above or below it, aligned with its left edge or its centre
    (within ``0.5 h``).

    >>> line = (20.0, 40.0, 200.0, 60.0)
    >>> _beside_line((0.0, 42.0, 12.0, 58.0), line, 20.0), _beside_line((22.0, 15.0, 30.0, 34.0), line, 20.0)
    (True, True)
    >>> _beside_line((170.0, 70.0, 190.0, 90.0), line, 20.0)   # below its far end: a corner icon
    False
    """
    over = min(box[3], line[3]) - max(box[1], line[1])
    if over >= 0.5 * min(box[3] - box[1], line[3] - line[1]):
        return max(line[0] - box[2], box[0] - line[2]) <= 1.5 * h
    vgap = max(line[1] - box[3], box[1] - line[3])
    aligned = abs(box[0] - line[0]) <= 0.5 * h or abs((box[0] + box[2]) - (line[0] + line[2])) <= h
    return vgap <= h and aligned


def stray_glyphs(
    crop: np.ndarray, lines: list[BBox], heights: list[float], th: float, color_tol: float = 60.0,
) -> list[BBox]:
    """Step 5: boxes (crop coordinates) of glyph groups in the cleaned inside ``crop`` of a
    shape that lie outside every line box of ``lines`` (crop coordinates, their heights
    ``heights``) and look like a glyph or two of the nearest line: 0.4 to 1.3 times its
    height tall (a digit's cap height against a line box's full height), at most 2.5 times as
    wide as tall, set beside it (:func:`_beside_line`), and inked no more colourfully than it:
    the chroma (max minus min channel) of the median colour of its ink exceeds the line's by
    at most ``color_tol`` (an icon filled in colour is no glyph, though its outline be as dark
    as the text).

    >>> crop = np.full((80, 300, 3), 255, np.uint8)
    >>> crop[10:30, 20:30] = 0                       # a "1" alone on the line above
    >>> crop[40:60, 20:200] = 0                      # the words the OCR read (a solid bar here)
    >>> crop[40:60, 215:235] = (30, 120, 230)        # a blue icon beside them
    >>> stray_glyphs(crop, [(18.0, 38.0, 202.0, 62.0)], [20.0], 20.0)
    [(20.0, 10.0, 30.0, 30.0)]
    """
    if not lines:
        return []
    ink = (fill_residual(crop, th)[1] > 60).astype(np.uint8)
    covered = np.zeros_like(ink)
    for (x0, y0, x1, y1), hgt in zip(lines, heights, strict=True):
        g = 0.2 * hgt
        covered[max(0, int(y0 - g)) : int(np.ceil(y1 + g)), max(0, int(x0 - g)) : int(np.ceil(x1 + g))] = 1
    rest = ink & (1 - covered)
    if not rest.any():
        return []
    gap = max(3, int(round(th / 3)) | 1)
    joined = cv2.morphologyEx(rest, cv2.MORPH_CLOSE, np.ones((gap, gap), np.uint8)) & (1 - covered)
    n, lab, st, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)

    def ink_color(mask: np.ndarray) -> np.ndarray | None:
        px = crop[mask].astype(float)
        return np.median(px, axis=0) if len(px) else None

    out: list[BBox] = []
    for i in range(1, n):
        part = (lab == i) & (rest > 0)
        if not part.any():
            continue
        ys, xs = np.nonzero(part)
        box = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
        bw, bh = box[2] - box[0], box[3] - box[1]
        gaps = [math.hypot(max(lb[0] - box[2], 0.0, box[0] - lb[2]), max(lb[1] - box[3], 0.0, box[1] - lb[3]))
                for lb in lines]
        j = int(np.argmin(gaps))
        hgt = heights[j]
        if not (0.4 * hgt <= bh <= 1.3 * hgt and bw <= 2.5 * bh and _beside_line(box, lines[j], hgt)):
            continue
        x0, y0, x1, y1 = (int(round(v)) for v in lines[j])
        line_ink = np.zeros_like(ink, bool)
        line_ink[max(0, y0) : y1, max(0, x0) : x1] = ink[max(0, y0) : y1, max(0, x0) : x1] > 0
        a, b = ink_color(part), ink_color(line_ink)
        # chroma (max - min channel): an icon filled in colour beside a label in black or grey;
        # compared one way only (a black step number beside a coloured label is still text),
        # and not by hue (the fringes of small glyphs in a compressed image are coloured)
        if a is None or b is None or float(np.ptp(a) - np.ptp(b)) > color_tol:
            continue
        out.append(box)
    return sorted(out, key=lambda b: (b[1], b[0]))


@AGENTS.register("shape_text")
class ShapeText(BackendAgent):
    """The Shape Reader agent; adds to ``diagram.text_lines`` and regroups ``text_labels``."""

    overlay_legend = (("empty shape read", overlay.BLUE), ("label read in it", overlay.RED))
    backends = BACKENDS
    default_backend = "rapidocr"
    inherit_params = False

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        p = self.params
        self.min_side = float(p.get("min_side", 0.8))
        self.max_side = float(p.get("max_side", 10.0))
        self.inset = float(p.get("inset", 0.06))
        self.ink_threshold = int(p.get("ink_threshold", 60))
        self.min_glyph = float(p.get("min_glyph", 0.3))
        self.fill_noise = float(p.get("fill_noise", 4.0))
        self.upscale = float(p.get("upscale", 3.0))
        self.min_conf = float(p.get("min_confidence", 0.6))
        self.line_gap = float(p.get("line_gap", 0.6))
        self.word_gap = float(p.get("word_gap", 0.5))
        self.glyph_color_tol = float(p.get("glyph_color_tol", 60.0))
        self.glyph_min_conf = float(p.get("glyph_min_confidence", 0.9))

    def fingerprint(self) -> dict[str, Any]:
        # 2: stray glyphs beside a label (step 5); 3: a logo's tile is not read
        return {**self.backend.fingerprint(), "agent": "shape_text", "version": 3}

    def read_shape(self, image: np.ndarray, shape: Shape, th: float) -> list[tuple[str, float, BBox]]:
        """Steps 2-3 for one shape: (text, confidence, box in image coordinates) read."""
        got = cleaned_inside(image, shape, self.inset, self.ink_threshold, th, self.min_glyph, self.fill_noise)
        if got is None:
            return []
        crop, (X0, Y0), ink = got
        f = self.upscale
        pad = max(4, int(round(0.5 * th * f)))
        big = cv2.resize(crop, None, fx=f, fy=f, interpolation=cv2.INTER_CUBIC)
        fill = tuple(int(v) for v in shape.fill)
        big = cv2.copyMakeBorder(big, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=fill)
        found = [(t.text, t.confidence, t.bbox) for t in self.backend.read(big)]
        if not found:
            # the detector finds no line in a glyph or two alone: the recogniser reads the ink
            # kept, framed by a quarter text height of fill, as one line
            m = 0.25 * th
            box = (max(0.0, ink[0] - m), max(0.0, ink[1] - m),
                   min(float(crop.shape[1]), ink[2] + m), min(float(crop.shape[0]), ink[3] + m))
            piece = crop[int(box[1]):int(np.ceil(box[3])), int(box[0]):int(np.ceil(box[2]))]
            piece = cv2.resize(piece, None, fx=f, fy=f, interpolation=cv2.INTER_CUBIC)
            found = [(text, conf, tuple(v * f + pad for v in box)) for text, conf in self.backend.recognize([piece])]
        out = []
        for text_read, confidence, bbox in found:
            # one letter is kept though it looks like an arrowhead ("v"): the ink read lies
            # wholly inside a closed shape, where every stroke entering it has been painted out
            text = clean_text(fold_latin_diacritics(text_read), keep_letters=True)
            if not text or confidence < self.min_conf or any(ch in UNREAD for ch in text):
                continue
            b = ((bbox[0] - pad) / f, (bbox[1] - pad) / f, (bbox[2] - pad) / f, (bbox[3] - pad) / f)
            if b[2] <= ink[0] or b[0] >= ink[2] or b[3] <= ink[1] or b[1] >= ink[3]:
                continue  # read from the margin, not from the ink kept
            out.append((text, float(confidence), (b[0] + X0, b[1] + Y0, b[2] + X0, b[3] + Y0)))
        return out

    def read_strays(self, image: np.ndarray, shape: Shape, lines: list[TextBox], th: float
                    ) -> list[tuple[str, float, BBox]]:
        """Step 5 for one shape: (text, confidence, box in image coordinates) of each stray
        glyph group beside its label that the recogniser reads as 1-3 ASCII letters or digits."""
        got = cleaned_inside(image, shape, self.inset, self.ink_threshold, th, self.min_glyph, self.fill_noise)
        if got is None:
            return []
        crop, (X0, Y0), _ink = got
        own = [t for t in lines if _holds_line(shape.bbox, [t])]
        boxes = [(t.bbox[0] - X0, t.bbox[1] - Y0, t.bbox[2] - X0, t.bbox[3] - Y0) for t in own]
        out = []
        f = self.upscale
        for b in stray_glyphs(crop, boxes, [t.height for t in own], th, self.glyph_color_tol):
            m = 0.25 * th
            x0, y0 = max(0, int(b[0] - m)), max(0, int(b[1] - m))
            x1, y1 = min(crop.shape[1], int(np.ceil(b[2] + m))), min(crop.shape[0], int(np.ceil(b[3] + m)))
            piece = cv2.resize(crop[y0:y1, x0:x1], None, fx=f, fy=f, interpolation=cv2.INTER_CUBIC)
            ((text, conf),) = self.backend.recognize([piece])
            text = text.strip()
            if not (1 <= len(text) <= 3 and text.isascii() and text.isalnum()) or conf < self.glyph_min_conf:
                continue
            out.append((text, float(conf), (b[0] + X0, b[1] + Y0, b[2] + X0, b[3] + Y0)))
        return out

    def run(self, diagram: Diagram) -> None:
        th = diagram.text_height()
        lines = list(diagram.text_lines)
        read: list[dict[str, Any]] = []
        tried: list[int] = []
        for s in empty_boxes(diagram.shapes, lines, th, self.min_side, self.max_side):
            # a shape around one already read is a container now (step 4)
            if _holds_line(s.bbox, lines):
                continue
            if _holds_line(s.bbox, diagram.logos):
                continue  # a logo's tile: its mark was read and judged no label
            found = self.read_shape(diagram.image, s, th)
            tried.append(s.id)
            for text, conf, box in found:
                lines.append(TextBox(len(lines), text, box, conf))
                read.append({"shape": s.id, "text": text, "confidence": round(conf, 4)})
        for s in labelled_boxes(diagram.shapes, lines, th, self.max_side):
            for text, conf, box in self.read_strays(diagram.image, s, lines, th):
                lines.append(TextBox(len(lines), text, box, conf))
                read.append({"shape": s.id, "text": text, "confidence": round(conf, 4), "stray": True})
        if read:
            diagram.text_lines = lines
            diagram.text_labels = group_lines(lines, line_gap=self.line_gap, word_gap=self.word_gap,
                                              image=diagram.image)
        diagram.evidence["shape_text"] = {"shapes_read": tried, "read": read}

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """Shapes read in blue, the lines found in them in red."""
        ev = diagram.evidence.get("shape_text", {})
        for s in diagram.shapes:
            if s.id in ev.get("shapes_read", ()):
                overlay.box(canvas, s.bbox, overlay.BLUE)
        n = len(ev.get("read", ()))
        for t in diagram.text_lines[len(diagram.text_lines) - n:] if n else ():
            overlay.box(canvas, t.bbox, overlay.RED)
