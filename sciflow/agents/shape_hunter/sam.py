"""The ``sam`` backend: Segment Anything masks as shapes (package docstring, ``sam``)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import BBox, Shape, TextBox
from sciflow.agents.shape_hunter.base import BACKENDS, ShapeBackend, assign_parents
from sciflow.agents.shape_hunter.boxes import _inside_frac, _iou
from sciflow.agents.shape_hunter.masks import _fill_holes
from sciflow.agents.shape_hunter.sam_model import SAM_REGISTRY_TYPES, SAM_RUNTIME_KEYS, check_sam_arch, load_sam
from sciflow.agents.shape_hunter.shapes import _classify

log = logging.getLogger(__name__)


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
    """Segment Anything masks as shapes (package docstring). Parameters: the
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
        # version 2: the boxes of multi-line turned labels keep their rotation (the agent's text boxes)
        # 3: (the agent's operator step) a one-symbol OCR line is tested as a circled operator
        fp: dict[str, Any] = {"backend": "sam", "version": 3, "model_type": self.model_type,
                              "checkpoint_sha256": self._sha256}
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
