"""Shape Hunter: closed shapes, filled colour regions, containers, operator symbols.

Backends (``[parser.shape_hunter] backend``), registered in :data:`BACKENDS`:

* ``opencv`` (default), algorithm (exact):

  1. The background colour is the median of the image's 1-px border.
  2. Edges: Canny (``canny_low``/``canny_high``) on each RGB channel, OR-ed, dilated with a
     3x3 kernel: these are the *barriers*, minus every barrier piece that lies wholly inside
     an OCR line box (+2 px): glyph edges do not bound shapes. A second pass also clears each
     line box shrunk by ``max(2, 0.15 h)`` px (labels packed tightly in their shape) and adds
     the shapes it finds that overlap no first-pass shape. Regions are the 4-connected components of the
     non-barrier pixels. Regions touching the image border are background.
  3. A region is a shape candidate when its area is at least ``min_area`` px, both sides are
     at least ``min_side`` px, it is not a letter counter (more than ``text_overlap`` of its
     bbox inside one OCR line box while smaller than 1.5 line heights), and its filled outer
     contour has solidity of at least ``min_solidity``
     (``min_solidity_bg`` when its colour equals the background colour); a thin band (under
     35 % of its filled area, under 8 px thick) is the inside of a thick outline and is skipped.
  4. Fragments are merged: two candidates of the same colour (max channel difference at most
     3 x the sum of their colour noise, the 75th percentile of their pixels' deviation from
     the median, clamped to ``[4, color_tol]``: a flat #f5f5f5 ellipse is not the white
     paper next to it) that are separated only by a thin stroke (within ``merge_gap`` px) are one
     shape (a container cut by a connector, a cylinder's cap and body) unless either is
     surrounded (``surround_frac`` of its outer ring) by other candidates of its colour, which
     makes it a nested shape.
     A merged group is dropped as a patch of paper closed in by connectors, container
     borders and other shapes when it holds no OCR line's centre and at least 30 % of the
     non-ink pixels 3-7 px outside it have its colour (:meth:`OpenCVShapes._enclosed_gap`).
  5. Kind from the contour: ellipse/circle (area within 6 % of the fitted ellipse), 4-vertex
     polygons as rect / diamond / parallelogram / trapezoid, rounded rect (bbox fill ratio in
     ``[0.86, 0.985)`` with straight sides), cylinder (a merged cap on top, or a cap arc found
     above the body by :func:`_cap_above`: a fill-coloured gap, a smooth arc, no text inside
     the cap), else polygon. A diamond's polygon is its 4 corners grown out
     to the outline's sharp tips (:func:`_diamond_tips`).
  6. ``parent`` is the smallest other shape whose outline contains this shape's bbox.
  8. Frames: rectangles assembled from long straight ink runs (at least ``frame_len`` x the
     text height): top and bottom runs with matching ends plus left and right runs covering
     60 % of the height. They catch containers whose interior is cut by connectors; a frame
     overlapping a region shape (IoU > 0.8, or holding it within ``max(6, 0.4 th)`` px on
     every side: a thick outline) is not added twice.
  9. Pictures: solid blobs and photos survive a morphological opening that removes strokes
     and text; see :meth:`OpenCVShapes._add_blobs`.
  7. Operators: Hough circles of radius ``operator_radius`` (fractions of the text height),
     accepted when ink covers at least 75 % of the circumference; ink on both the horizontal
     and vertical diameters gives ``⊕``, on both diagonals ``⊗``.

* ``sam``: Segment Anything masks (optional; needs ``segment_anything`` and a ``checkpoint``,
  a segment-anything ``.pth`` state dict; ``[parser.shape_hunter.sam]``, every key checked):

  1. Model: ``model_type`` ``vit_h``/``vit_l``/``vit_b`` is built by segment-anything's
     ``sam_model_registry``; ``custom`` is built from ``segment_anything.modeling`` with the
     architecture of ``[parser.shape_hunter.sam.custom]`` (encoder width, depth, heads,
     global-attention blocks, window, image and patch size, prompt width, decoder sizes;
     defaults are vit_b's), e.g. a small distilled or test model. The state dict is loaded
     strictly (``weights_only``, onto the CPU, then the runtime ``device``, default CPU, which
     :class:`~sciflow.pipeline.Parser` passes outside the hashed config); a checkpoint of another
     architecture is an error naming the mismatched parameters. The fingerprint holds the
     checkpoint's SHA-256 (and the custom architecture).
  2. Text prompts (``text_prompts``; the text spotter runs first): each text label (a
     multi-line label's box, or an OCR line in no multi-line label) prompts SAM with a
     foreground point at its centre (plus a box padded by ``prompt_box_pad`` label heights
     when that is > 0). Of the three masks, those scored at least ``prompt_min_score`` that
     hold the label box (2-px margin) and make a valid shape (step 4) are candidates; the
     smallest is the label's shape.
  3. Automatic masks (``automatic``): ``SamAutomaticMaskGenerator`` with ``points_per_side``,
     ``points_per_batch``, ``pred_iou_thresh``, ``stability_score_thresh``, ``box_nms_thresh``.
  4. Mask -> shape (:func:`mask_to_shape`): the largest component, holes filled; dropped when
     under ``min_area`` px, touching the image border (background) or text (more than
     ``text_overlap`` of its bbox in one text box while under 1.5 box heights); the kind by the
     contour rules of step 5 (on the mask upsampled 4x, pixel count as area); confidence is
     the kind's times SAM's predicted IoU.
  5. Prompted shapes first, then automatic ones; a shape whose bbox has IoU above
     ``dedupe_iou`` with a kept one is dropped. Then steps 6-7 as above.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import BBox, Diagram, Operator, Shape, TextBox
from sciflow.agents.registry import AGENTS, BackendAgent, Registry

log = logging.getLogger(__name__)

BACKENDS = Registry("shape_hunter backend")


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


class ShapeBackend:
    """Protocol: ``find(image, text_lines) -> list[Shape]`` plus ``fingerprint()``."""

    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)

    def find(self, image: np.ndarray, text_lines: list[TextBox]) -> list[Shape]:  # pragma: no cover
        raise NotImplementedError

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": getattr(self, "registered_name", type(self).__name__)}


def _classify(contour: np.ndarray, area: float, merged_cap: bool) -> tuple[str, float]:
    x, y, w, h = cv2.boundingRect(contour)
    fill = area / max(w * h, 1)
    hull = cv2.convexHull(contour)
    solidity = area / max(cv2.contourArea(hull), 1.0)
    if merged_cap:
        return "cylinder", 0.9
    peri = cv2.arcLength(contour, True)
    approx = cv2.approxPolyDP(contour, 0.03 * peri, True).reshape(-1, 2)
    if len(contour) >= 5:
        (_, _), (ea, eb), _ = cv2.fitEllipse(contour)
        e_area = np.pi * ea * eb / 4.0
        if e_area > 0 and abs(area / e_area - 1.0) < 0.06 and 0.7 < fill < 0.83:
            return ("circle" if 0.85 < w / max(h, 1) < 1.18 else "ellipse"), 0.95
    if fill >= 0.985:
        return "rect", 0.99
    if len(approx) == 4:
        if 0.4 < fill < 0.6:
            # diamond: vertices near the bbox edge midpoints
            mids = np.array([[x + w / 2, y], [x + w, y + h / 2], [x + w / 2, y + h], [x, y + h / 2]])
            d = np.min(np.linalg.norm(approx[:, None, :] - mids[None], axis=2), axis=1)
            if np.all(d < 0.2 * max(w, h)):
                return "diamond", 0.9
        ys = np.sort(approx[:, 1])
        top = approx[approx[:, 1] <= ys[1]]
        bot = approx[approx[:, 1] >= ys[2]]
        if len(top) == 2 and len(bot) == 2 and fill < 0.97:
            tl, tr = sorted(top[:, 0])
            bl, br = sorted(bot[:, 0])
            if abs(tl - bl) < 0.1 * w and abs(tr - br) < 0.1 * w:
                return ("rounded", 0.9) if fill < 0.975 else ("rect", 0.95)
            if abs((tr - tl) - (br - bl)) <= 0.08 * w:
                return "parallelogram", 0.85
            return "trapezoid", 0.85
        if fill > 0.9:
            return "rect", 0.95
    if 0.86 <= fill < 0.985 and solidity > 0.97:
        return "rounded", 0.9
    return ("polygon" if solidity > 0.9 else "region"), float(min(0.8, solidity))


@BACKENDS.register("opencv")
class OpenCVShapes(ShapeBackend):
    """Edge-bounded regions, fragment merging and contour classification (module docstring)."""

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        p = self.params
        self.canny_low = int(p.get("canny_low", 20))
        self.canny_high = int(p.get("canny_high", 50))
        self.min_area = float(p.get("min_area", 150))
        self.min_side = float(p.get("min_side", 8))
        self.text_overlap = float(p.get("text_overlap", 0.6))
        self.min_solidity = float(p.get("min_solidity", 0.8))
        self.min_solidity_bg = float(p.get("min_solidity_bg", 0.9))
        self.color_tol = float(p.get("color_tol", 14))
        self.merge_gap = int(p.get("merge_gap", 9))
        self.surround_frac = float(p.get("surround_frac", 0.75))
        self.frame_len = float(p.get("frame_len", 3.0))

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "opencv", "opencv": cv2.__version__}

    def barriers(self, image: np.ndarray) -> np.ndarray:
        edges = np.zeros(image.shape[:2], np.uint8)
        for c in range(3):
            edges |= cv2.Canny(image[:, :, c], self.canny_low, self.canny_high)
        return cv2.dilate(edges, np.ones((3, 3), np.uint8))

    def find(self, image: np.ndarray, text_lines: list[TextBox]) -> list[Shape]:
        bg = background_color(image)
        barrier = self.barriers(image)
        if not text_lines:
            return self._add_frames(self._regions(image, bg, barrier, text_lines), image, bg, text_lines)
        # glyph edges are not outlines. Pass A drops barrier pieces lying wholly inside an OCR
        # line box; pass B (for labels packed tightly in their shape, whose glyph edges touch
        # the outline) clears each line box shrunk by max(2, 0.15 h) px.
        nb, blab, bst, _ = cv2.connectedComponentsWithStats(barrier, connectivity=8)
        bx0, by0 = bst[:, 0], bst[:, 1]
        bx1, by1 = bx0 + bst[:, 2], by0 + bst[:, 3]
        glyph = np.zeros(nb, bool)
        for t in text_lines:
            x0, y0, x1, y1 = t.bbox
            glyph |= (bx0 >= x0 - 2) & (by0 >= y0 - 2) & (bx1 <= x1 + 2) & (by1 <= y1 + 2)
        glyph[0] = False
        barrier_a = np.where(glyph[blab], 0, barrier).astype(np.uint8)
        barrier_b = barrier_a.copy()
        for t in text_lines:
            x0, y0, x1, y1 = t.bbox
            m = max(2.0, 0.15 * (y1 - y0))
            xa, ya, xb, yb = int(np.ceil(x0 + m)), int(np.ceil(y0 + m)), int(x1 - m), int(y1 - m)
            if xb > xa and yb > ya:
                barrier_b[max(0, ya) : max(0, yb), max(0, xa) : max(0, xb)] = 0
        found = self._regions(image, bg, barrier_a, text_lines)
        for sb in self._regions(image, bg, barrier_b, text_lines):
            if any(_iou(sb.bbox, sa.bbox) > 0.5 or _inside_frac(sa.bbox, sb.bbox) > 0.9 for sa in found):
                continue
            found.append(sb)
        found = self._add_blobs(found, image, bg, text_lines)
        return self._add_frames(found, image, bg, text_lines)

    def _add_blobs(
        self, shapes: list[Shape], image: np.ndarray, bg: np.ndarray, text_lines: list[TextBox]
    ) -> list[Shape]:
        """Pictures and solid blobs (step 9): ink (difference from the background > 40)
        closed with a ``0.3 th`` kernel and opened with a ``0.8 th`` kernel (strokes and text
        vanish, photos and icons stay); components of at least ``(2 th)^2`` px that overlap
        no shape already found (IoU <= 0.5, not inside one) and are less than 30 % covered by
        OCR line boxes (else highlighted text) become ``image`` shapes."""
        th = float(np.median([t.height for t in text_lines])) if text_lines else 16.0
        ink = ink_mask(image, bg, 40)
        kc = max(3, int(0.3 * th) | 1)
        ko = max(5, int(0.8 * th) | 1)
        m = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((kc, kc), np.uint8))
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((ko, ko), np.uint8))
        n, _lab, st, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
        out = list(shapes)
        for i in range(1, n):
            x, y, w, h, area = (int(v) for v in st[i])
            if area < (2 * th) ** 2:
                continue
            box = (float(x), float(y), float(x + w), float(y + h))
            if any(_iou(box, sh.bbox) > 0.5 or _inside_frac(box, sh.bbox) > 0.8 for sh in out):
                continue
            covered = np.zeros((h, w), bool)
            for t in text_lines:
                tx0, ty0 = max(int(t.bbox[0]) - x, 0), max(int(t.bbox[1]) - y, 0)
                tx1, ty1 = min(int(np.ceil(t.bbox[2])) - x, w), min(int(np.ceil(t.bbox[3])) - y, h)
                if tx1 > tx0 and ty1 > ty0:
                    covered[ty0:ty1, tx0:tx1] = True
            if covered.mean() >= 0.3:  # highlighted or dense text, not a picture
                continue
            fill = tuple(int(v) for v in np.median(image[y : y + h, x : x + w].reshape(-1, 3), axis=0))
            poly = ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3]))
            out.append(Shape(len(out), "image", box, poly, fill, 0.7, float(w * h)))  # type: ignore[arg-type]
        return out

    def _regions(
        self, image: np.ndarray, bg: np.ndarray, barrier: np.ndarray, text_lines: list[TextBox]
    ) -> list[Shape]:
        h, w = image.shape[:2]
        n, labels, stats, _ = cv2.connectedComponentsWithStats((barrier == 0).astype(np.uint8), connectivity=4)
        text_boxes = [t.bbox for t in text_lines]
        cands: dict[int, dict[str, Any]] = {}
        for i in range(1, n):
            x, y, bw, bh, area = (int(v) for v in stats[i])
            if area < self.min_area or bw < self.min_side or bh < self.min_side:
                continue
            if x == 0 or y == 0 or x + bw >= w or y + bh >= h:
                continue
            if any(
                _inside_frac((x, y, x + bw, y + bh), tb) > self.text_overlap and max(bw, bh) < 1.5 * (tb[3] - tb[1])
                for tb in text_boxes
            ):
                continue  # a letter's counter (o, e, D ...), not a shape
            mask = (labels[y : y + bh, x : x + bw] == i).astype(np.uint8)
            filled = _fill_holes(mask)
            farea = float(filled.sum())
            cnts, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            hull = float(cv2.contourArea(cv2.convexHull(max(cnts, key=cv2.contourArea)))) if cnts else 0.0
            if farea / max(hull, 1.0) < self.min_solidity:  # regions enclosed by connectors
                continue
            if mask.sum() < 0.35 * farea:
                dtm = cv2.distanceTransform(np.pad(mask, 1), cv2.DIST_L2, 3).max()
                if dtm < 4.0:  # the band inside a thick outline, not a shape
                    continue
            pix = image[y : y + bh, x : x + bw][mask > 0]
            color = np.median(pix, axis=0)
            # colour noise (JPEG, gradients): the 75th percentile of the pixels' deviation from the median
            noise = float(np.percentile(np.abs(pix.astype(np.int16) - color.astype(np.int16)).max(axis=1), 75))
            cands[i] = {"box": (x, y, x + bw, y + bh), "mask": mask, "color": color, "area": farea, "noise": noise}
        groups = self._merge(cands, labels, bg)
        return self._finish(groups, cands, image, bg, barrier, text_lines)

    # -- rectangular frames (containers) -----------------------------------------
    def _add_frames(
        self, shapes: list[Shape], image: np.ndarray, bg: np.ndarray, text_lines: list[TextBox]
    ) -> list[Shape]:
        """Rectangles assembled from long straight ink segments (step 8): containers whose
        interior is cut by connectors are not one region, but their outline is intact."""
        th = float(np.median([t.height for t in text_lines])) if text_lines else 16.0
        L = int(max(40, self.frame_len * th))
        ink = ink_mask(image, bg, 40)
        hor = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, L), np.uint8))
        ver = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((L, 1), np.uint8))

        def segs(m: np.ndarray, horizontal: bool) -> list[tuple[float, float, float]]:
            n, _, st, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
            out = []
            for i in range(1, n):
                x, y, w, h, _a = (int(v) for v in st[i])
                if horizontal and h <= 8:
                    out.append((y + h / 2, float(x), float(x + w)))
                elif not horizontal and w <= 8:
                    out.append((x + w / 2, float(y), float(y + h)))
            return out

        H = segs(hor, True)
        V = segs(ver, False)
        tol = max(6.0, 0.8 * th)
        frames: list[BBox] = []
        for yt, tx0, tx1 in H:
            for yb, bx0, bx1 in H:
                if yb <= yt + L / 2 or abs(tx0 - bx0) > tol or abs(tx1 - bx1) > tol:
                    continue
                x0, x1 = min(tx0, bx0), max(tx1, bx1)
                left = [
                    v
                    for v in V
                    if abs(v[0] - x0) <= tol
                    and v[1] >= yt - 3
                    and v[2] <= yb + 3
                    and v[2] - v[1] >= 0.6 * (yb - yt) - 2 * tol
                ]
                right = [
                    v
                    for v in V
                    if abs(v[0] - x1) <= tol
                    and v[1] >= yt - 3
                    and v[2] <= yb + 3
                    and v[2] - v[1] >= 0.6 * (yb - yt) - 2 * tol
                ]
                if left and right:
                    lx = min(v[0] for v in left)
                    rx = max(v[0] for v in right)
                    frames.append((lx - 1, yt - 1, rx + 2, yb + 2))
        out = list(shapes)
        m = max(6.0, 0.4 * th)
        for fb in sorted(set(frames)):
            if any(
                _iou(fb, s.bbox) > 0.8
                or (
                    s.bbox[0] - fb[0] <= m
                    and s.bbox[1] - fb[1] <= m
                    and fb[2] - s.bbox[2] <= m
                    and fb[3] - s.bbox[3] <= m
                    and _inside_frac(s.bbox, fb) > 0.95
                )
                for s in out
            ):
                continue  # the outline of a shape already found (thick borders)
            if any(_iou(fb, f) > 0.8 for f in frames if f < fb):
                continue
            x0, y0, x1, y1 = (int(round(v)) for v in fb)
            inner = image[y0 + 4 : y1 - 4, x0 + 4 : x1 - 4]
            if inner.size == 0:
                continue
            fill = tuple(int(v) for v in np.median(inner.reshape(-1, 3), axis=0))
            poly = ((fb[0], fb[1]), (fb[2], fb[1]), (fb[2], fb[3]), (fb[0], fb[3]))
            out.append(Shape(len(out), "rect", fb, poly, fill, 0.8, _box_area(fb), None, 1.0))  # type: ignore[arg-type]
        out.sort(key=lambda sh: (sh.bbox[1], sh.bbox[0], sh.bbox[3], sh.bbox[2]))
        out = [
            Shape(i, sh.kind, sh.bbox, sh.polygon, sh.fill, sh.confidence, sh.area, None, sh.stroke)
            for i, sh in enumerate(out)
        ]
        return assign_parents(out)

    # -- fragments ---------------------------------------------------------------
    def _same_fill(self, a: dict[str, Any], b: dict[str, Any]) -> bool:
        """Two fragments have one fill when their median colours differ by at most their colour
        noise (``3 x`` the sum, at least 4, at most ``color_tol``): flat fills must match
        closely (a #f5f5f5 ellipse on white is its own shape), noisy ones (JPEG, gradients)
        get the full tolerance."""
        tol = min(self.color_tol, max(4.0, 3.0 * (a.get("noise", 0.0) + b.get("noise", 0.0))))
        return _same_color(a["color"], b["color"], tol)

    def _merge(self, cands: dict[int, dict[str, Any]], labels: np.ndarray, bg: np.ndarray) -> list[list[int]]:
        g = self.merge_gap
        h, w = labels.shape
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * g + 1, 2 * g + 1))
        adj: dict[int, dict[int, int]] = {}
        surrounded: set[int] = set()
        for i, c in cands.items():
            x0, y0, x1, y1 = c["box"]
            X0, Y0, X1, Y1 = max(0, x0 - g), max(0, y0 - g), min(w, x1 + g), min(h, y1 + g)
            m = np.zeros((Y1 - Y0, X1 - X0), np.uint8)
            m[y0 - Y0 : y1 - Y0, x0 - X0 : x1 - X0] = _fill_holes(c["mask"])
            ring = cv2.dilate(m, kernel) & ~cv2.dilate(m, np.ones((3, 3), np.uint8))
            lab = labels[Y0:Y1, X0:X1][ring > 0]
            lab = lab[lab > 0]
            if lab.size == 0:
                continue
            ids, counts = np.unique(lab, return_counts=True)
            same = {}
            for j, k in zip(ids.tolist(), counts.tolist(), strict=True):
                if j != i and j in cands and self._same_fill(cands[j], c):
                    same[j] = k
            total = int(lab.size)
            if sum(same.values()) >= self.surround_frac * total:
                surrounded.add(i)
            adj[i] = {j: k / total for j, k in same.items()}
        parent = {i: i for i in cands}

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        gbox = {i: c["box"] for i, c in cands.items()}
        garea = {i: c["area"] for i, c in cands.items()}
        pairs = sorted(
            ((-frac, i, j) for i in adj for j, frac in adj[i].items() if i < j or i not in adj.get(j, {})),
        )
        for _, i, j in pairs:
            if i in surrounded or j in surrounded or -_ < 0.02:
                continue
            if adj.get(j, {}).get(i, 0.0) >= 0.6 or -_ >= 0.6:
                continue
            a, b = find(i), find(j)
            if a == b:
                continue
            # merge only when the union is a cleaner shape than its parts (fill of its bbox)
            ba, bb = gbox[a], gbox[b]
            bu = (min(ba[0], bb[0]), min(ba[1], bb[1]), max(ba[2], bb[2]), max(ba[3], bb[3]))
            fa = garea[a] / max(_box_area(ba), 1.0)
            fb = garea[b] / max(_box_area(bb), 1.0)
            fu = (garea[a] + garea[b]) / max(_box_area(bu), 1.0)
            if fu < 0.7 or fu < max(fa, fb) - 0.06:
                continue
            parent[a] = b
            gbox[b] = bu
            garea[b] = garea[a] + garea[b]
        groups: dict[int, list[int]] = {}
        for i in sorted(cands):
            groups.setdefault(find(i), []).append(i)
        return list(groups.values())

    def _enclosed_gap(
        self,
        m: np.ndarray,
        X0: int,
        Y0: int,
        image: np.ndarray,
        ink: np.ndarray,
        color: np.ndarray,
        members: list[int],
        cands: dict[int, dict[str, Any]],
        centres: list[tuple[float, float]],
    ) -> bool:
        """True for a patch of the surrounding paper closed in by connectors, container
        borders and other shapes (not a shape): it holds no text line's centre and its fill
        is the colour of at least 30 % of the non-ink pixels 3-7 px outside its outline,
        within the fragments' colour noise (:meth:`_same_fill`). A drawn shape either differs from its
        surroundings or, on diagrams with text, holds a label; an empty box of the paper's
        colour is lost, which is rarer than the spurious regions such patches make."""
        mh, mw = m.shape
        for cx, cy in centres:
            xi, yi = int(cx) - X0, int(cy) - Y0
            if 0 <= xi < mw and 0 <= yi < mh and m[yi, xi]:
                return False
        outer = cv2.dilate(m, np.ones((15, 15), np.uint8))
        ring = (outer > 0) & (cv2.dilate(m, np.ones((7, 7), np.uint8)) == 0)
        sub_ink = ink[Y0 : Y0 + mh, X0 : X0 + mw]
        pix = image[Y0 : Y0 + mh, X0 : X0 + mw][ring & ~sub_ink]
        if pix.shape[0] < 20:
            return False
        noise = max(cands[i].get("noise", 0.0) for i in members)
        tol = min(self.color_tol, max(4.0, 3.0 * noise))
        dev = np.abs(pix.astype(np.int16) - np.asarray(color, np.int16).reshape(1, 3)).max(axis=1)
        # a patch cut from a container by its border has the container's fill on part of its ring only
        return float((dev <= tol).mean()) >= 0.3

    def _finish(
        self,
        groups: list[list[int]],
        cands: dict[int, dict[str, Any]],
        image: np.ndarray,
        bg: np.ndarray,
        barrier: np.ndarray,
        text_lines: list[TextBox] | None = None,
    ) -> list[Shape]:
        h, w = image.shape[:2]
        centres = [((t.bbox[0] + t.bbox[2]) / 2, (t.bbox[1] + t.bbox[3]) / 2) for t in text_lines or ()]
        ink = ink_mask(image, bg, 40) > 0
        found: list[tuple[BBox, np.ndarray, str, float, tuple[int, int, int], float]] = []
        for members in groups:
            boxes = [cands[i]["box"] for i in members]
            x0 = min(b[0] for b in boxes)
            y0 = min(b[1] for b in boxes)
            x1 = max(b[2] for b in boxes)
            y1 = max(b[3] for b in boxes)
            pad = self.merge_gap + 12
            X0, Y0, X1, Y1 = max(0, x0 - pad), max(0, y0 - pad), min(w, x1 + pad), min(h, y1 + pad)
            m = np.zeros((Y1 - Y0, X1 - X0), np.uint8)
            for i in members:
                bx0, by0, bx1, by1 = cands[i]["box"]
                m[by0 - Y0 : by1 - Y0, bx0 - X0 : bx1 - X0] |= cands[i]["mask"]
            if len(members) > 1:
                k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (self.merge_gap, self.merge_gap))
                m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, k)
            m = _fill_holes(m)
            # The region is the interior: grow it over the outline (as thick as it is).
            m = _grow_over_outline(m, ink[Y0:Y1, X0:X1])
            cnts, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            if not cnts:
                continue
            cnt = max(cnts, key=cv2.contourArea)
            area = float(cv2.contourArea(cnt))
            hull_area = float(cv2.contourArea(cv2.convexHull(cnt)))
            solidity = area / max(hull_area, 1.0)
            colors = [cands[i]["color"] for i in members]
            areas = [cands[i]["mask"].sum() for i in members]
            color = colors[int(np.argmax(areas))]
            is_bg = _same_color(color, bg, self.color_tol)
            if solidity < (self.min_solidity_bg if is_bg else self.min_solidity):
                continue
            if centres and self._enclosed_gap(m, X0, Y0, image, ink, color, members, cands, centres):
                continue
            cap = False
            if len(members) == 2:
                (a, b) = sorted(members, key=lambda i: cands[i]["box"][1])
                ba, bb = cands[a]["box"], cands[b]["box"]
                wa, ha = ba[2] - ba[0], ba[3] - ba[1]
                cap = wa >= 0.8 * (x1 - x0) and ha < 0.4 * (y1 - y0) and bb[1] >= ba[1] + 0.5 * ha
            arc = _cap_above(m, X0, Y0, image, color, [t.bbox for t in text_lines or ()])
            sag = 0.0 if arc is not None else _cylinder_sag(m)
            if arc is not None:  # a cylinder body: cover the cap's upper arc
                cap = True
                pts = np.array([[[x - X0, y - Y0]] for x, y in arc], np.int32)
                cnt = cv2.convexHull(np.concatenate([cnt.astype(np.int32), pts]))
            elif sag > 0:  # a concave-topped body whose cap region was not found
                cap = True
                up = cnt.copy()
                up[:, 0, 1] -= int(round(sag)) + 2
                cnt = cv2.convexHull(np.concatenate([cnt, up]))
            cnt = cnt + np.array([[[X0, Y0]]])
            kind, conf = _classify(cnt, area, cap)
            poly = cv2.approxPolyDP(cnt, 1.0, True).reshape(-1, 2)
            if kind == "diamond":
                tips = _diamond_tips(cnt, ink)
                if tips is not None:
                    poly = tips
                    cnt = tips.reshape(-1, 1, 2)
            bx, by, bw2, bh2 = cv2.boundingRect(cnt)
            stroke = 1.0
            found.append(
                (
                    (float(bx), float(by), float(bx + bw2), float(by + bh2)),
                    poly,
                    kind,
                    conf * float(min(1.0, solidity + 0.05)),
                    tuple(int(v) for v in color),  # type: ignore[misc]
                    stroke,
                )
            )
        found.sort(key=lambda f: (f[0][1], f[0][0], f[0][3], f[0][2]))
        shapes = [
            Shape(i, kind, box, tuple((float(x), float(y)) for x, y in poly), color, conf, _box_area(box), None, stroke)
            for i, (box, poly, kind, conf, color, stroke) in enumerate(found)
        ]
        return shapes


def assign_parents(shapes: list[Shape]) -> list[Shape]:
    """Set ``parent`` to the smallest other shape whose bbox contains this shape's bbox
    (2-px tolerance) and whose outline contains its centre."""
    out = []
    for s in shapes:
        best: Shape | None = None
        cx, cy = (s.bbox[0] + s.bbox[2]) / 2, (s.bbox[1] + s.bbox[3]) / 2
        for o in shapes:
            if o.id == s.id or o.area <= s.area:
                continue
            b = o.bbox
            if not (
                b[0] - 2 <= s.bbox[0] and b[1] - 2 <= s.bbox[1] and s.bbox[2] <= b[2] + 2 and s.bbox[3] <= b[3] + 2
            ):
                continue
            poly = np.array(o.polygon, np.float32).reshape(-1, 1, 2)
            if cv2.pointPolygonTest(poly, (cx, cy), False) < 0:
                continue
            if best is None or o.area < best.area:
                best = o
        out.append(
            Shape(s.id, s.kind, s.bbox, s.polygon, s.fill, s.confidence, s.area, best.id if best else None, s.stroke)
        )
    return out


def find_operators(image: np.ndarray, text_height: float, params: Mapping[str, Any]) -> list[Operator]:
    """Circled operators (see module docstring, step 7)."""
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


# ------------------------------------------------------------------ SAM backend

#: The SAM architecture parameters of ``[parser.shape_hunter.sam.custom]`` (their defaults equal
#: segment-anything's ``vit_b``), used when ``model_type = "custom"``.
SAM_ARCH_KEYS = (
    "image_size",
    "patch_size",
    "encoder_embed_dim",
    "encoder_depth",
    "encoder_num_heads",
    "encoder_global_attn_indexes",
    "encoder_window_size",
    "encoder_mlp_ratio",
    "prompt_embed_dim",
    "mask_in_chans",
    "decoder_depth",
    "decoder_mlp_dim",
    "decoder_num_heads",
    "iou_head_depth",
    "iou_head_hidden_dim",
)
#: Runtime settings the :class:`~sciflow.pipeline.Parser` puts into the backend table, outside
#: the hashed configuration: ``device`` (a torch device string, see :mod:`sciflow.models.device`).
SAM_RUNTIME_KEYS = ("device",)
#: ``model_type`` values besides ``custom``: segment-anything's ``sam_model_registry`` builders.
SAM_REGISTRY_TYPES = ("vit_h", "vit_l", "vit_b")


def _sam_defaults() -> dict[str, Any]:
    """The ``[parser.shape_hunter.sam]`` table of the pinned default config (the one place
    the backend's keys and defaults are written down)."""
    from sciflow.config import default_data  # noqa: PLC0415  (sciflow.config never imports the agents)

    return dict(default_data()["parser"]["shape_hunter"]["sam"])


def _agent_scalar_keys() -> set[str]:
    """Scalar keys of ``[parser.shape_hunter]``: :class:`BackendAgent` passes them to every backend."""
    from sciflow.config import default_data  # noqa: PLC0415

    table = default_data()["parser"]["shape_hunter"]
    return {k for k, v in table.items() if not isinstance(v, Mapping)}


def check_sam_arch(arch: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a custom SAM architecture table; returns it with typed values.
    Raises :class:`~sciflow.config.ConfigError` on an unknown key or an inconsistent shape."""
    from sciflow.config import ConfigError  # noqa: PLC0415

    unknown = sorted(set(arch) - set(SAM_ARCH_KEYS))
    if unknown:
        raise ConfigError(
            f"[parser.shape_hunter.sam.custom]: unknown key(s) {', '.join(unknown)}; known: {', '.join(SAM_ARCH_KEYS)}"
        )
    missing = [k for k in SAM_ARCH_KEYS if k not in arch]
    if missing:
        raise ConfigError(f"[parser.shape_hunter.sam.custom]: missing key(s) {', '.join(missing)}")
    non_int = ("encoder_global_attn_indexes", "encoder_mlp_ratio")
    a: dict[str, Any] = {k: int(arch[k]) for k in SAM_ARCH_KEYS if k not in non_int}
    a["encoder_mlp_ratio"] = float(arch["encoder_mlp_ratio"])
    a["encoder_global_attn_indexes"] = [int(i) for i in arch["encoder_global_attn_indexes"]]
    problems = []
    if any(v <= 0 for k, v in a.items() if isinstance(v, int) and k != "encoder_window_size"):
        problems.append("sizes must be positive (encoder_window_size may be 0: global attention everywhere)")
    if a["encoder_window_size"] < 0 or a["encoder_mlp_ratio"] <= 0:
        problems.append("encoder_window_size must be >= 0 and encoder_mlp_ratio > 0")
    if a["image_size"] <= 0 or a["patch_size"] <= 0 or a["image_size"] % a["patch_size"]:
        problems.append("image_size must be a positive multiple of patch_size")
    if a["encoder_embed_dim"] <= 0 or a["encoder_num_heads"] <= 0 or a["encoder_embed_dim"] % a["encoder_num_heads"]:
        problems.append("encoder_embed_dim must be a multiple of encoder_num_heads")
    if a["encoder_depth"] <= 0 or any(not 0 <= i < a["encoder_depth"] for i in a["encoder_global_attn_indexes"]):
        problems.append("encoder_global_attn_indexes must lie in [0, encoder_depth)")
    # the mask decoder upsamples to prompt_embed_dim // 8 channels; its cross-attention works
    # at half width, split over decoder_num_heads heads
    if a["prompt_embed_dim"] <= 0 or a["prompt_embed_dim"] % 8:
        problems.append("prompt_embed_dim must be a positive multiple of 8")
    if a["decoder_num_heads"] <= 0 or (a["prompt_embed_dim"] // 2) % a["decoder_num_heads"]:
        problems.append("prompt_embed_dim / 2 must be a multiple of decoder_num_heads")
    if min(a["decoder_depth"], a["decoder_mlp_dim"], a["mask_in_chans"], a["iou_head_depth"]) <= 0:
        problems.append("decoder_depth, decoder_mlp_dim, mask_in_chans and iou_head_depth must be positive")
    if problems:
        raise ConfigError("[parser.shape_hunter.sam.custom]: " + "; ".join(problems))
    return a


def build_sam(model_type: str, arch: Mapping[str, Any] | None = None) -> Any:
    """An untrained ``segment_anything.modeling.Sam`` in eval mode: ``vit_h``/``vit_l``/``vit_b``
    from segment-anything's ``sam_model_registry``, or ``custom`` from ``arch`` (the keys of
    :data:`SAM_ARCH_KEYS`) with the same classes and fixed choices as segment-anything's own
    builder (LayerNorm eps 1e-6, relative positions, three multimask outputs, the ImageNet pixel
    mean and std)."""
    from functools import partial  # noqa: PLC0415

    try:
        import torch  # noqa: PLC0415
        from segment_anything import sam_model_registry  # noqa: PLC0415
        from segment_anything.modeling import (  # noqa: PLC0415
            ImageEncoderViT,
            MaskDecoder,
            PromptEncoder,
            Sam,
            TwoWayTransformer,
        )
    except ImportError as exc:
        raise RuntimeError("shape_hunter backend 'sam' needs `pip install segment-anything`") from exc
    if model_type in SAM_REGISTRY_TYPES:
        return sam_model_registry[model_type](checkpoint=None).eval()
    if model_type != "custom":
        raise RuntimeError(
            f"shape_hunter backend 'sam': unknown model_type {model_type!r}; "
            f"use one of {', '.join(SAM_REGISTRY_TYPES)} or 'custom' (with [parser.shape_hunter.sam.custom])"
        )
    a = check_sam_arch(arch or {})
    grid = a["image_size"] // a["patch_size"]
    sam = Sam(
        image_encoder=ImageEncoderViT(
            depth=a["encoder_depth"],
            embed_dim=a["encoder_embed_dim"],
            img_size=a["image_size"],
            mlp_ratio=a["encoder_mlp_ratio"],
            norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
            num_heads=a["encoder_num_heads"],
            patch_size=a["patch_size"],
            qkv_bias=True,
            use_rel_pos=True,
            global_attn_indexes=tuple(a["encoder_global_attn_indexes"]),
            window_size=a["encoder_window_size"],
            out_chans=a["prompt_embed_dim"],
        ),
        prompt_encoder=PromptEncoder(
            embed_dim=a["prompt_embed_dim"],
            image_embedding_size=(grid, grid),
            input_image_size=(a["image_size"], a["image_size"]),
            mask_in_chans=a["mask_in_chans"],
        ),
        mask_decoder=MaskDecoder(
            num_multimask_outputs=3,
            transformer=TwoWayTransformer(
                depth=a["decoder_depth"],
                embedding_dim=a["prompt_embed_dim"],
                mlp_dim=a["decoder_mlp_dim"],
                num_heads=a["decoder_num_heads"],
            ),
            transformer_dim=a["prompt_embed_dim"],
            iou_head_depth=a["iou_head_depth"],
            iou_head_hidden_dim=a["iou_head_hidden_dim"],
        ),
        pixel_mean=[123.675, 116.28, 103.53],
        pixel_std=[58.395, 57.12, 57.375],
    )
    return sam.eval()


def load_sam(
    checkpoint: str | Path, model_type: str, arch: Mapping[str, Any] | None = None, device: str = "cpu"
) -> Any:
    """:func:`build_sam`, then the checkpoint's state dict (a segment-anything ``.pth``: a plain
    ``state_dict``, read with ``weights_only=True`` onto the CPU) loaded strictly: a checkpoint of
    another architecture is an error naming the mismatched parameters."""
    import torch  # noqa: PLC0415

    sam = build_sam(model_type, arch)
    try:
        state = torch.load(str(checkpoint), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (pickle, zip and torch errors alike)
        raise RuntimeError(f"shape_hunter backend 'sam': cannot read checkpoint {checkpoint}: {exc}") from exc
    if not isinstance(state, Mapping):
        raise RuntimeError(f"shape_hunter backend 'sam': checkpoint {checkpoint} is not a state dict")
    own = sam.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    resized = sorted(k for k in set(own) & set(state) if tuple(own[k].shape) != tuple(state[k].shape))
    if missing or unexpected or resized:
        parts = [
            f"{what} {len(keys)} ({', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''})"
            for what, keys in (("missing", missing), ("unexpected", unexpected), ("other shape", resized))
            if keys
        ]
        raise RuntimeError(
            f"shape_hunter backend 'sam': checkpoint {checkpoint} does not match model_type {model_type!r}: "
            + "; ".join(parts)
        )
    sam.load_state_dict(state, strict=True)
    return sam.to(device)


def label_boxes(text_boxes: list[TextBox]) -> list[TextBox]:
    """The text labels among the boxes :class:`ShapeHunter` hands its backend: every multi-line
    label (id < 0) and every OCR line that lies in none of them (a one-line label)."""
    multi = [t for t in text_boxes if t.id < 0]
    lines = [t for t in text_boxes if t.id >= 0 and not any(_inside_frac(t.bbox, m.bbox) > 0.9 for m in multi)]
    return sorted(multi + lines, key=lambda t: (t.bbox[1], t.bbox[0], t.id))


def mask_to_shape(
    mask: np.ndarray,
    image: np.ndarray,
    *,
    min_area: float,
    score: float = 1.0,
    text_boxes: list[TextBox] | None = None,
    text_overlap: float = 0.6,
    shape_id: int = 0,
) -> Shape | None:
    """One SAM mask (H x W, bool or 0/1, the image's size) as a :class:`Shape`, or None.

    The mask's largest 8-connected component with its holes filled (a label's glyphs cut holes)
    is the shape. None when it has fewer than ``min_area`` px, when it touches the image border
    (background, as in the opencv backend; this drops a mask of the whole image) or when it is
    text (more than ``text_overlap`` of its bbox inside one text box while under 1.5 box heights
    tall). The kind comes from the contour rules of the opencv backend (:func:`_classify`),
    applied to the contour traced on the mask upsampled 4x, with the pixel count as the area, so
    that pixel-exact rectangles are ``rect`` and small ellipses still fit their ellipse.
    ``bbox`` is ``(x0, y0, x1 + 1, y1 + 1)`` of the component's pixels; ``fill`` the median RGB
    of the mask's own pixels; ``confidence`` the kind's confidence times ``score`` (clipped to
    [0, 1])."""
    h, w = image.shape[:2]
    m = np.asarray(mask).astype(bool)
    if m.shape != (h, w):
        raise ValueError(f"mask shape {m.shape} differs from the image's {(h, w)}")
    if m.sum() < min_area:
        return None
    n, labels, stats, _ = cv2.connectedComponentsWithStats(m.astype(np.uint8), connectivity=8)
    if n <= 1:
        return None
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, bw, bh = (int(v) for v in stats[k, :4])
    if x == 0 or y == 0 or x + bw >= w or y + bh >= h:
        return None
    comp = (labels[y : y + bh, x : x + bw] == k).astype(np.uint8)
    solid = _fill_holes(comp)
    area = float(solid.sum())
    if area < min_area:
        return None
    box: BBox = (float(x), float(y), float(x + bw), float(y + bh))
    for t in text_boxes or ():
        if _inside_frac(box, t.bbox) > text_overlap and bh < 1.5 * max(t.height, 1.0):
            return None
    up = 4
    big = cv2.resize(np.pad(solid, 1), None, fx=up, fy=up, interpolation=cv2.INTER_NEAREST)
    cnts, _ = cv2.findContours(big, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    kind, conf = _classify(max(cnts, key=cv2.contourArea), area * up * up, False)
    # the outline at the original scale, in image pixel coordinates (as the opencv backend)
    cnts, _ = cv2.findContours(solid, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    cnt = max(cnts, key=cv2.contourArea) + np.array([[[x, y]]])
    poly = cv2.approxPolyDP(cnt, 1.0, True).reshape(-1, 2)
    own = comp.astype(bool) & m[y : y + bh, x : x + bw]
    color = tuple(int(v) for v in np.median(image[y : y + bh, x : x + bw][own], axis=0))
    conf = float(np.clip(conf * score, 0.0, 1.0))
    return Shape(shape_id, kind, box, tuple((float(a), float(b)) for a, b in poly), color, conf, area)  # type: ignore[arg-type]


@BACKENDS.register("sam")
class SAMShapes(ShapeBackend):
    """Segment Anything masks as shapes (module docstring). Parameters: the
    ``[parser.shape_hunter.sam]`` table (its keys are checked; defaults from the pinned config)."""

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        from sciflow.config import ConfigError  # noqa: PLC0415

        defaults = _sam_defaults()
        unknown = sorted(set(self.params) - set(defaults) - _agent_scalar_keys() - set(SAM_RUNTIME_KEYS))
        if unknown:
            raise ConfigError(
                f"[parser.shape_hunter.sam]: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(defaults))}"
            )
        p = {**defaults, **self.params}
        self.model_type = str(p["model_type"])
        if self.model_type not in (*SAM_REGISTRY_TYPES, "custom"):
            raise RuntimeError(
                f"shape_hunter backend 'sam': unknown model_type {self.model_type!r}; "
                f"use one of {', '.join(SAM_REGISTRY_TYPES)} or 'custom' (with [parser.shape_hunter.sam.custom])"
            )
        self.arch: dict[str, Any] | None = None
        if self.model_type == "custom":
            self.arch = check_sam_arch({**dict(defaults["custom"]), **dict(p["custom"])})
        ckpt = p["checkpoint"]
        if not ckpt:
            raise RuntimeError(
                "shape_hunter backend 'sam' needs [parser.shape_hunter.sam] checkpoint = '<file.pth>' "
                "(no SAM weights ship in any installable package)"
            )
        self.checkpoint = Path(str(ckpt)).expanduser()
        if not self.checkpoint.is_file():
            raise RuntimeError(f"shape_hunter backend 'sam': checkpoint {self.checkpoint} does not exist")
        self.automatic = bool(p["automatic"])
        self.text_prompts = bool(p["text_prompts"])
        if not (self.automatic or self.text_prompts):
            raise ConfigError("[parser.shape_hunter.sam]: automatic and text_prompts are both false")
        self.min_area = float(p["min_area"])
        self.text_overlap = float(p["text_overlap"])
        self.prompt_box_pad = float(p["prompt_box_pad"])
        self.prompt_min_score = float(p["prompt_min_score"])
        self.dedupe_iou = float(p["dedupe_iou"])
        self.device = str(p.get("device", "cpu"))
        self.sam = load_sam(self.checkpoint, self.model_type, self.arch, self.device)
        from segment_anything import SamAutomaticMaskGenerator, SamPredictor  # noqa: PLC0415  (load_sam checked it)

        self.generator = SamAutomaticMaskGenerator(
            self.sam,
            points_per_side=int(p["points_per_side"]),
            points_per_batch=int(p["points_per_batch"]),
            pred_iou_thresh=float(p["pred_iou_thresh"]),
            stability_score_thresh=float(p["stability_score_thresh"]),
            box_nms_thresh=float(p["box_nms_thresh"]),
        )
        self.predictor = SamPredictor(self.sam)
        self._sha256: str | None = None
        log.info(
            "shape_hunter sam: %s model from %s (automatic=%s, text_prompts=%s)",
            self.model_type,
            self.checkpoint,
            self.automatic,
            self.text_prompts,
        )

    def fingerprint(self) -> dict[str, Any]:
        from sciflow.format.hashing import file_sha256  # noqa: PLC0415

        if self._sha256 is None:
            self._sha256 = file_sha256(self.checkpoint)
        fp: dict[str, Any] = {"backend": "sam", "model_type": self.model_type, "checkpoint_sha256": self._sha256}
        if self.arch is not None:
            fp["arch"] = dict(self.arch)
        return fp

    def _shape(self, mask: np.ndarray, image: np.ndarray, score: float, text_boxes: list[TextBox]) -> Shape | None:
        return mask_to_shape(
            mask, image, min_area=self.min_area, score=score, text_boxes=text_boxes, text_overlap=self.text_overlap
        )

    def prompted_shapes(self, image: np.ndarray, text_boxes: list[TextBox]) -> list[Shape]:
        """At most one shape per text label (:func:`label_boxes`): SAM is prompted with a
        foreground point at the label's centre (plus, when ``prompt_box_pad > 0``, a box: the
        label box padded by that many label heights on each side). Of its three masks (SAM's
        sub-part, part and whole), those scored at least ``prompt_min_score`` whose filled
        outline holds the label box with a 2-px margin and that make a valid shape
        (:func:`mask_to_shape`) are candidates; the smallest one is the label's shape (the
        innermost closed shape around a label is its node; containers come from the automatic
        masks)."""
        labels = label_boxes(text_boxes)
        if not labels:
            return []
        import torch  # noqa: PLC0415

        h, w = image.shape[:2]
        out: list[Shape] = []
        with torch.no_grad():
            self.predictor.set_image(image)
            try:
                for t in labels:
                    x0, y0, x1, y1 = t.bbox
                    box = None
                    if self.prompt_box_pad > 0:
                        pad = self.prompt_box_pad * max(t.height, 1.0)
                        box = np.array(
                            [max(0.0, x0 - pad), max(0.0, y0 - pad), min(w - 1.0, x1 + pad), min(h - 1.0, y1 + pad)]
                        )
                    masks, scores, _ = self.predictor.predict(
                        point_coords=np.array([[(x0 + x1) / 2, (y0 + y1) / 2]], np.float32),
                        point_labels=np.array([1]),
                        box=box,
                        multimask_output=True,
                    )
                    cands = []
                    for m, sc in zip(masks, scores, strict=True):
                        comp = _component_holding(m, t.bbox) if float(sc) >= self.prompt_min_score else None
                        shape = self._shape(comp, image, float(sc), text_boxes) if comp is not None else None
                        if shape is not None:
                            cands.append(shape)
                    if cands:
                        out.append(min(cands, key=lambda c: c.area))
            finally:
                self.predictor.reset_image()
        return out

    def find(self, image: np.ndarray, text_lines: list[TextBox]) -> list[Shape]:
        found: list[Shape] = []
        if self.text_prompts:
            found += self.prompted_shapes(image, text_lines)
        if self.automatic:
            for m in self.generator.generate(image):
                s = self._shape(m["segmentation"], image, float(m["predicted_iou"]), text_lines)
                if s is not None:
                    found.append(s)
        kept: list[Shape] = []
        for s in found:  # prompted shapes first: a later one with (nearly) the same box is the same shape
            if not any(_iou(s.bbox, o.bbox) > self.dedupe_iou for o in kept):
                kept.append(s)
        kept.sort(key=lambda s: (s.bbox[1], s.bbox[0], s.bbox[3], s.bbox[2]))
        shapes = [Shape(i, s.kind, s.bbox, s.polygon, s.fill, s.confidence, s.area) for i, s in enumerate(kept)]
        return assign_parents(shapes)


def _component_holding(mask: np.ndarray, box: BBox, margin: float = 2.0) -> np.ndarray | None:
    """The part of ``mask`` in its component at the centre of ``box`` (holes filled), when that
    filled component holds ``box`` enlarged by ``margin`` px on every side; else None."""
    m = np.asarray(mask).astype(bool)
    h, w = m.shape
    cx, cy = int((box[0] + box[2]) / 2), int((box[1] + box[3]) / 2)
    if not (0 <= cx < w and 0 <= cy < h):
        return None
    filled = _fill_holes(m.astype(np.uint8))
    if not filled[cy, cx]:
        return None
    _, labels = cv2.connectedComponents(filled, connectivity=8)
    comp = labels == labels[cy, cx]
    ys, xs = np.nonzero(comp)
    holds = (
        xs.min() <= box[0] - margin
        and ys.min() <= box[1] - margin
        and xs.max() + 1 >= box[2] + margin
        and ys.max() + 1 >= box[3] + margin
    )
    return (m & comp) if holds else None


@AGENTS.register("shape_hunter")
class ShapeHunter(BackendAgent):
    """The Shape Hunter agent; fills ``diagram.shapes`` and ``diagram.operators``."""

    backends = BACKENDS
    default_backend = "opencv"

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        self.find_operators = bool(self.params.get("operators", True))

    def run(self, diagram: Diagram) -> None:
        # multi-line labels count as text boxes too (glyph edges may join across lines)
        boxes = list(diagram.text_lines) + [
            TextBox(-1 - lb.id, lb.text, lb.bbox, lb.confidence) for lb in diagram.text_labels if len(lb.line_ids) > 1
        ]
        diagram.shapes = self.backend.find(diagram.image, boxes)
        if self.find_operators:
            ops = find_operators(diagram.image, diagram.text_height(), self.params)
            # an operator must not be a letter: drop circles inside OCR line boxes
            ops = [o for o in ops if not any(_inside_frac(o.bbox, t.bbox) > 0.5 for t in diagram.text_lines)]
            diagram.operators = ops
        diagram.evidence["shape_hunter"] = {
            "shapes": [(s.id, s.kind, s.bbox, s.parent) for s in diagram.shapes],
            "operators": [(o.symbol, o.center, o.radius) for o in diagram.operators],
        }


def _cylinder_sag(m: np.ndarray) -> float:
    """Cap height of a cylinder body: the bottom edge bulges down (at least 2.5 px, under 30 %
    of the height) while the top edge is flat or concave; else 0. ``m`` is a filled mask."""
    cols = np.nonzero(m.any(axis=0))[0]
    if len(cols) < 20:
        return 0.0
    sub = m[:, cols]
    top = sub.argmax(axis=0).astype(float)
    bot = (sub.shape[0] - 1 - sub[::-1].argmax(axis=0)).astype(float)
    k = max(2, len(cols) // 10)
    mid = slice(len(cols) // 2 - k, len(cols) // 2 + k)
    sag_top = float(np.median(top[mid]) - min(np.median(top[:k]), np.median(top[-k:])))
    sag_bot = float(np.median(bot[mid]) - max(np.median(bot[:k]), np.median(bot[-k:])))
    height = float(bot.max() - top.min())
    if sag_top >= -1 and 2.5 <= sag_bot < 0.3 * height:
        return max(sag_top, sag_bot)
    return 0.0


def _running_median5(a: np.ndarray) -> np.ndarray:
    """``out[i] = median(a[max(0, i - 2) : i + 3])``: a 5-wide running median whose windows
    shrink at the ends.

    >>> _running_median5(np.array([0.0, 0, 9, 0, 0, 0])).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    if len(a) < 5:
        return np.array([np.median(a[max(0, i - 2) : i + 3]) for i in range(len(a))])
    ends = [np.median(a[: i + 3]) for i in (0, 1)], [np.median(a[i - 2 :]) for i in (len(a) - 2, len(a) - 1)]
    middle = np.median(np.lib.stride_tricks.sliding_window_view(a, 5), axis=1)
    return np.concatenate([ends[0], middle, ends[1]])


def _cap_above(
    m: np.ndarray, X0: int, Y0: int, image: np.ndarray, fill: np.ndarray, text_boxes: list[BBox] | None = None
) -> list[tuple[int, int]] | None:
    """Height of a cylinder cap drawn above a region (``m``: the region grown onto its
    outline). Scanning up from the top of ``m`` in the middle 80 % of its columns: any rest of
    the outline, then a gap of the region's fill colour (max channel difference <= 40), then
    an outline again (the cap's upper arc), within 40 % of the region height, in at least
    60 % of the columns; the arc is not lower in the middle than at the sides. Then two
    checks against what else draws ink above a box: arc points more than 3 px off the
    arc's running median (5 columns) are dropped (an arrowhead or connector landing on the
    top is not the cap's smooth arc), and the cap's interior (between the region's top and
    the arc) must hold no text: when it covers 25 % of an OCR line box, the "cap" is the
    band of the box's own top above a label that cut the region (a rounded box whose top
    an arrowhead touches). Returns the arc's top pixels ``(x, y)`` in image coordinates, or
    None."""
    cols = np.nonzero(m.any(axis=0))[0]
    if len(cols) < 20:
        return None
    rows = np.nonzero(m.any(axis=1))[0]
    height = float(rows[-1] - rows[0] + 1)
    lim = max(4, int(0.4 * height))
    k = len(cols) // 10
    fill_i = np.asarray(fill, np.int16)
    # all middle columns at once: row o of `ink` is o + 1 px above each column's top pixel
    mid_cols = cols[k : len(cols) - k]
    yt_all = np.argmax(m[:, mid_cols], axis=0) + Y0
    x_all = mid_cols + X0
    rows = yt_all[None, :] - 1 - np.arange(lim)[:, None]
    valid = rows >= 0  # the scan stops at the image's top edge
    seg = image[np.maximum(rows, 0), x_all[None, :]].astype(np.int16)
    ink = (np.abs(seg - fill_i).max(axis=2) > 40) & valid
    gap = ~ink & valid
    # first pixel of the fill gap above the outline, then the first ink above that gap
    first_gap = np.where(gap.any(axis=0), gap.argmax(axis=0), lim)
    above = ink & (np.arange(lim)[:, None] > first_gap[None, :])
    has_arc = above.any(axis=0)
    j_all = above.argmax(axis=0)
    tops = [int(v) for v in x_all[has_arc]]
    bottoms = [int(v) for v in yt_all[has_arc]]
    arcs = [int(v) for v in (yt_all - 1 - j_all - 2)[has_arc]]  # the arc's lower edge, plus a 2-px outline
    n = len(cols) - 2 * k
    if n <= 0 or len(arcs) < 0.6 * n:
        return None
    arcs_a = np.array(arcs, float)
    # a cap's arc is smooth: points off the running median (5 columns, fewer at the ends)
    # are arrowheads or connectors
    med = _running_median5(arcs_a)
    keep = np.abs(arcs_a - med) <= 3.0
    if keep.sum() < 0.6 * n:
        return None
    tops = [x for x, kk in zip(tops, keep, strict=True) if kk]
    bottoms = [b for b, kk in zip(bottoms, keep, strict=True) if kk]
    arcs_a = arcs_a[keep]
    arcs = [int(a) for a in arcs_a]
    band = (float(min(tops)), float(arcs_a.min()), float(max(tops) + 1), float(np.median(bottoms)))
    for tb in text_boxes or ():
        if _box_area(tb) > 0 and bbox_inter(band, tb) >= 0.25 * _box_area(tb):
            return None  # text inside the "cap": the box's own top band above its label
    q = max(1, len(arcs_a) // 5)
    mid = float(np.median(arcs_a[len(arcs_a) // 2 - q // 2 : len(arcs_a) // 2 + q // 2 + 1]))
    side = float(np.median(np.concatenate([arcs_a[:q], arcs_a[-q:]])))
    if mid > side:  # the arc must not sag in the middle
        return None
    return [(x, int(y)) for x, y in zip(tops, arcs, strict=True)]


def _diamond_tips(cnt: np.ndarray, ink: np.ndarray) -> np.ndarray | None:
    """The 4 corners of a diamond grown out to its outline's sharp tips. The interior (and
    so the contour grown from it) stops short of an acute tip, where the two outline strokes
    merge into solid ink; ``approxPolyDP`` cuts the rest. Each side is fitted with a line
    (the contour points of its middle 60 %); adjacent sides meet at the tip. A corner moves
    to that intersection, walked back to the last ink pixel on the way there (so an open or
    rounded tip is not overshot), by at most 40 % of the corner's distance to the centre.
    ``cnt``: the contour in image coordinates; ``ink``: the image's ink mask. None when the
    contour does not simplify to 4 corners."""
    c = cnt.reshape(-1, 2).astype(np.float64)
    approx = cv2.approxPolyDP(cnt.astype(np.int32), 0.03 * cv2.arcLength(cnt.astype(np.int32), True), True)
    if len(approx) != 4:
        return None
    corners = approx.reshape(-1, 2).astype(np.float64)
    # contour index of each corner
    idx = [int(np.argmin(np.linalg.norm(c - v, axis=1))) for v in corners]
    n = len(c)
    lines = []
    for a in range(4):
        i0, i1 = idx[a], idx[(a + 1) % 4]
        span = (i1 - i0) % n
        if span < 5:
            return None
        sel = [(i0 + int(t)) % n for t in np.linspace(0.2 * span, 0.8 * span, max(5, int(0.6 * span)))]
        vx, vy, x0, y0 = cv2.fitLine(c[sel].astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], float), np.array([vx, vy], float)))
    centre = corners.mean(axis=0)
    h, w = ink.shape
    out = corners.copy()
    for a in range(4):
        (p1, d1), (p2, d2) = lines[(a - 1) % 4], lines[a]
        den = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(den) < 1e-6:
            continue
        t = ((p2[0] - p1[0]) * d2[1] - (p2[1] - p1[1]) * d2[0]) / den
        tip = p1 + t * d1
        v = corners[a]
        reach = float(np.linalg.norm(tip - v))
        if reach < 1.0 or reach > 0.4 * float(np.linalg.norm(v - centre)):
            continue
        # the outward direction must point away from the centre
        if float(np.dot(tip - v, v - centre)) <= 0:
            continue
        best = v
        for f in np.linspace(0.0, 1.0, int(reach) + 2):
            q = v + f * (tip - v)
            xi, yi = int(round(q[0])), int(round(q[1]))
            if not (0 <= xi < w and 0 <= yi < h):
                break
            if ink[max(0, yi - 1) : yi + 2, max(0, xi - 1) : xi + 2].any():
                best = q
            else:
                break
        out[a] = best
    return np.round(out).astype(np.int32)


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


def _same_color(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    return float(np.max(np.abs(np.asarray(a, float) - np.asarray(b, float)))) <= tol


def _inside_frac(a: BBox, b: BBox) -> float:
    """Fraction of box ``a``'s area inside box ``b``."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy / max((a[2] - a[0]) * (a[3] - a[1]), 1e-9)


def _iou(a: BBox, b: BBox) -> float:
    inter = max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    union = _box_area(a) + _box_area(b) - inter
    return inter / union if union > 0 else 0.0


def bbox_inter(a: BBox, b: BBox) -> float:
    """Area of the intersection of two boxes."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def _box_area(b: BBox) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])
