"""The ``opencv`` backend (steps 1-5, 8, 9 of the package docstring): edge-bounded regions.

:class:`OpenCVShapes` holds the parameters and the region pass (steps 1-3); the fragment
merging and classification steps (4-5) are :class:`~sciflow.agents.shape_hunter.opencv_regions.RegionSteps`,
the frames and pictures (8-9) :class:`~sciflow.agents.shape_hunter.opencv_frames.FrameSteps`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import Shape, TextBox
from sciflow.agents.shape_hunter.base import BACKENDS, ShapeBackend, assign_parents
from sciflow.agents.shape_hunter.boxes import _inside_frac, _iou
from sciflow.agents.shape_hunter.channels import drop_channels
from sciflow.agents.shape_hunter.ink import background_color, without_glyphs
from sciflow.agents.shape_hunter.masks import _fill_holes
from sciflow.agents.shape_hunter.opencv_frames import FrameSteps
from sciflow.agents.shape_hunter.opencv_regions import RegionSteps
from sciflow.agents.shape_hunter.side_bars import grow_double_sides

# A region less solid than ``min_solidity`` but at least this is kept as a fragment that
# must merge (step 4) with another of its fill to become a shape.
_FRAGMENT_SOLIDITY = 0.4


def outline_band(mask: np.ndarray, half_width: float = 4.0) -> bool:
    """Whether the hollow region ``mask`` is the band left inside a thick outline between
    the edges found along its two sides: thin nearly everywhere, its 90th-percentile depth
    (distance to the region's border) under ``half_width`` px. The percentile, not the
    deepest point: a thick arrow drawn on from the outline joins the band with a deeper
    core, over a small share of its pixels.

    >>> ring = np.zeros((120, 160), np.uint8)
    >>> ring[10:116, 10:150] = 1; ring[14:112, 14:146] = 0          # a band 4 px wide
    >>> spur = ring.copy(); spur[50:62, 150:160] = 1; spur[50:62, 146:150] = 1  # a 12 px arrow's core
    >>> outline_band(ring), outline_band(spur)
    (True, True)
    >>> panel = np.zeros((120, 160), np.uint8)
    >>> panel[10:116, 10:150] = 1; panel[40:80, 40:120] = 0        # a panel's fill around a box
    >>> outline_band(panel)
    False
    """
    dt = cv2.distanceTransform(np.pad(mask.astype(np.uint8), 1), cv2.DIST_L2, 3)
    depth = dt[dt > 0]
    return depth.size == 0 or float(np.percentile(depth, 90)) < half_width


@BACKENDS.register("opencv")
class OpenCVShapes(FrameSteps, RegionSteps, ShapeBackend):
    """Edge-bounded regions, fragment merging and contour classification (package docstring)."""

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        p = self.params
        self.canny_low = int(p.get("canny_low", 20))
        self.canny_high = int(p.get("canny_high", 50))
        self.sketch_low = int(p.get("sketch_canny_low", 100))
        self.sketch_high = int(p.get("sketch_canny_high", 250))
        self.min_area = float(p.get("min_area", 150))
        self.min_side = float(p.get("min_side", 8))
        self.text_overlap = float(p.get("text_overlap", 0.6))
        self.min_solidity = float(p.get("min_solidity", 0.8))
        self.min_solidity_bg = float(p.get("min_solidity_bg", 0.9))
        self.color_tol = float(p.get("color_tol", 14))
        self.merge_gap = int(p.get("merge_gap", 9))
        self.surround_frac = float(p.get("surround_frac", 0.75))
        self.frame_len = float(p.get("frame_len", 1.5))
        self.frame_dash_gap = float(p.get("frame_dash_gap", 0.6))

    def fingerprint(self) -> dict[str, Any]:
        # 2: dashed, rounded frames; 3: short frames, own corners; 4: ellipses fit point by point;
        # 5: four-sided kinds fit side by side, paper-coloured irregular regions are no shapes;
        # 6: frame runs continued past a corner are cut back, a side's top lies above its upper end;
        # 7: a frame side's runs are joined under a label written on it; 8: (the agent's operator
        # step) a circled plus's quadrants are read as an area on the ink, small glyphs kept;
        # 9: paper read as a cylinder only from a sagging top is paper too when its text hugs its rim;
        # 10: (the agent's operator step) a small circle is an operator only inside its own box
        # 11: filled regions closed over connector channels; paper of a panel closed in by
        # connectors is no shape
        # 12: frame sides up to 0.25 text heights thick; irregular regions of a frame's fill along
        # its sides are pieces of it (the frame replaces them); an outline's band is thin at its
        # 90th percentile; 13: channels between shapes are no shapes; 14: a frame side turns into
        # its own bottom too (boxes stacked in line, sketched corners); double sides (subroutine
        # boxes) grow to their outer line; 15: a cylinder cap's arc rises in the middle;
        # 16: sketched (hatched) fills found on a median-smoothed pass; 17: a photograph replaces
        # the shapes of its shading; (the agent's text boxes) a multi-line turned label keeps its
        # rotation; 18: a region on a filled panel grows over its outline against the panel's
        # fill, not the page's; 19: (the agent's operator step) a one-symbol OCR line (``④``) is
        # tested as a circled operator inside its own box; ring radius ties go to the one found
        return {"backend": "opencv", "opencv": cv2.__version__, "version": 19}

    def barriers(self, image: np.ndarray, low: int | None = None, high: int | None = None) -> np.ndarray:
        edges = np.zeros(image.shape[:2], np.uint8)
        for c in range(3):
            edges |= cv2.Canny(image[:, :, c], low or self.canny_low, high or self.canny_high)
        return cv2.dilate(edges, np.ones((3, 3), np.uint8))

    def find(self, image: np.ndarray, text_lines: list[TextBox]) -> list[Shape]:
        bg = background_color(image)
        barrier = self.barriers(image)
        if not text_lines:
            return self._add_frames(self._regions(image, bg, barrier, text_lines), image, bg, text_lines)
        # glyph edges are not outlines. Pass A drops barrier pieces lying wholly inside an OCR
        # line box; pass B (for labels packed tightly in their shape, whose glyph edges touch
        # the outline) clears each line box shrunk by max(2, 0.15 h) px.
        barrier_a = without_glyphs(barrier, text_lines)
        barrier_b = barrier_a.copy()
        for t in text_lines:
            x0, y0, x1, y1 = t.bbox
            m = max(2.0, 0.15 * t.height)  # the glyph height (across a line drawn at 90 / 270)
            xa, ya, xb, yb = int(np.ceil(x0 + m)), int(np.ceil(y0 + m)), int(x1 - m), int(y1 - m)
            if xb > xa and yb > ya:
                barrier_b[max(0, ya) : max(0, yb), max(0, xa) : max(0, xb)] = 0
        found = self._regions(image, bg, barrier_a, text_lines)
        # pass C: a sketched (hand-drawn) fill is hatched with thin pale strokes whose edges cut
        # the region apart; a 3 x 3 median thins them and edges of high contrast only
        # (``sketch_canny_low``/``high``) keep the outline and drop what is left of them
        smooth = cv2.medianBlur(image, 3)
        barrier_c = without_glyphs(self.barriers(smooth, self.sketch_low, self.sketch_high), text_lines)
        sketched = [sc for sc in self._regions(image, bg, barrier_c, text_lines) if hatched(sc, barrier_a)]
        for sb in self._regions(image, bg, barrier_b, text_lines) + sketched:
            if any(_iou(sb.bbox, sa.bbox) > 0.5 or _inside_frac(sa.bbox, sb.bbox) > 0.9 for sa in found):
                continue
            found.append(sb)
        found = self._add_blobs(found, image, bg, text_lines)
        th = float(np.median([t.height for t in text_lines]))
        shapes = drop_channels(self._add_frames(found, image, bg, text_lines), image, bg, th)
        return assign_parents(grow_double_sides(shapes, image, bg, th))

    def _regions(
        self, image: np.ndarray, bg: np.ndarray, barrier: np.ndarray, text_lines: list[TextBox]
    ) -> list[Shape]:
        h, w = image.shape[:2]
        n, labels, stats, _ = cv2.connectedComponentsWithStats((barrier == 0).astype(np.uint8), connectivity=4)
        cands: dict[int, dict[str, Any]] = {}
        for i in range(1, n):
            x, y, bw, bh, area = (int(v) for v in stats[i])
            if area < self.min_area or bw < self.min_side or bh < self.min_side:
                continue
            if x == 0 or y == 0 or x + bw >= w or y + bh >= h:
                continue
            if any(
                _inside_frac((x, y, x + bw, y + bh), t.bbox) > self.text_overlap and max(bw, bh) < 1.5 * t.height
                for t in text_lines
            ):
                continue  # a letter's counter (o, e, D ...), not a shape; t.height is the glyphs' size
            mask = (labels[y : y + bh, x : x + bw] == i).astype(np.uint8)
            filled = _fill_holes(mask)
            farea = float(filled.sum())
            cnts, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            hull = float(cv2.contourArea(cv2.convexHull(max(cnts, key=cv2.contourArea)))) if cnts else 0.0
            solidity = farea / max(hull, 1.0)
            if solidity < _FRAGMENT_SOLIDITY:  # regions enclosed by connectors
                continue
            if mask.sum() < 0.35 * farea and outline_band(mask):
                continue  # the band inside a thick outline, not a shape
            pix = image[y : y + bh, x : x + bw][mask > 0]
            color = np.median(pix, axis=0)
            # colour noise (JPEG, gradients): the 75th percentile of the pixels' deviation from the median
            noise = float(np.percentile(np.abs(pix.astype(np.int16) - color.astype(np.int16)).max(axis=1), 75))
            cands[i] = {"box": (x, y, x + bw, y + bh), "mask": mask, "color": color, "area": farea, "noise": noise,
                        # too hollow to be a shape alone: a piece of a panel that a chain of
                        # connectors and boxes cuts in two, a shape only merged with the rest
                        "fragment": solidity < self.min_solidity}
        groups = self._merge(cands, labels, bg)
        return self._finish(groups, cands, image, bg, barrier, text_lines)


def hatched(sh: Shape, barrier: np.ndarray, depth: int = 4, frac: float = 0.15) -> bool:
    """Whether the inside of ``sh`` (its polygon eroded by ``depth`` px, off the outline) is
    cut by the ordinary ``barrier`` edges over at least ``frac`` of its pixels (glyph edges are
    already cleared from it): the hatching of a sketched fill, which the ordinary pass cannot
    see through. A box whose fill is flat, or a gap between shapes crossed by one connector,
    is cut far less.

    >>> b = np.zeros((60, 100), np.uint8); b[::4, :] = 255           # a stroke every 4 rows
    >>> box = Shape(0, "rect", (10, 10, 90, 50), ((10, 10), (90, 10), (90, 50), (10, 50)), (255, 255, 255), 0.9, 3200.0)
    >>> hatched(box, b), hatched(box, np.zeros((60, 100), np.uint8))
    (True, False)
    """
    pts = np.round(np.array(sh.polygon)).astype(np.int32)
    if pts.size == 0:
        return False
    # on a window round the polygon, a margin wider than the erosion on every side
    h, w = barrier.shape
    X0, Y0 = max(0, int(pts[:, 0].min()) - depth - 2), max(0, int(pts[:, 1].min()) - depth - 2)
    X1, Y1 = min(w, int(pts[:, 0].max()) + depth + 3), min(h, int(pts[:, 1].max()) + depth + 3)
    if X1 <= X0 or Y1 <= Y0:
        return False
    mask = np.zeros((Y1 - Y0, X1 - X0), np.uint8)
    cv2.fillPoly(mask, [pts - np.array([X0, Y0], np.int32)], 1)
    inner = cv2.erode(mask, np.ones((2 * depth + 1, 2 * depth + 1), np.uint8)) > 0
    if inner.sum() < 50:
        return False
    return bool((barrier[Y0:Y1, X0:X1][inner] > 0).mean() >= frac)
