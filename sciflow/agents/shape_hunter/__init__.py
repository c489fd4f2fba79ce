"""Shape Hunter: closed shapes, filled colour regions, containers, operator symbols.

Backends (``[parser.shape_hunter] backend``), registered in :data:`BACKENDS`:

* ``opencv`` (default), algorithm (exact):

  1. The background colour is the median of the image's 1-px border.
  2. Edges: Canny (``canny_low``/``canny_high``) on each RGB channel, OR-ed, dilated with a
     3x3 kernel: these are the *barriers*, minus every barrier piece that lies wholly inside
     an OCR line box (+2 px): glyph edges do not bound shapes. A second pass also clears each
     line box shrunk by ``max(2, 0.15 h)`` px (labels packed tightly in their shape) and adds
     the shapes it finds that overlap no first-pass shape. A third pass (sketched fills) finds
     regions on a 3 x 3 median of the image with edges of high contrast only
     (``sketch_canny_low``/``sketch_canny_high``) and adds those, overlapping no shape found
     so far, whose inside the ordinary edges cut over at least 15 % of its pixels (the
     hatching of a hand-drawn fill: :func:`~.opencv.hatched`). Regions are the 4-connected components of the
     non-barrier pixels. Regions touching the image border are background.
  3. A region is a shape candidate when its area is at least ``min_area`` px, both sides are
     at least ``min_side`` px, it is not a letter counter (more than ``text_overlap`` of its
     bbox inside one OCR line box while smaller than 1.5 line heights), and its filled outer
     contour has solidity of at least ``min_solidity``
     (``min_solidity_bg`` when its colour equals the background colour; a region of solidity
     0.4 to ``min_solidity`` is kept as a *fragment* that becomes a shape only merged with
     another in step 4: a panel cut in two by a chain of boxes and connectors); a thin band (under
     35 % of its filled area, its 90th-percentile depth under 4 px: under 8 px thick nearly
     everywhere, a thick arrow drawn on from the outline included) is the inside of a thick
     outline and is skipped (:func:`~.opencv.outline_band`).
  4. Fragments are merged: two candidates of the same colour (max channel difference at most
     3 x the sum of their colour noise, the 75th percentile of their pixels' deviation from
     the median, clamped to ``[4, color_tol]``: a flat #f5f5f5 ellipse is not the white
     paper next to it) that are separated only by a thin stroke (within ``merge_gap`` px) are one
     shape (a container cut by a connector, a cylinder's cap and body) unless either is
     surrounded (``surround_frac`` of its outer ring) by other candidates of its colour, which
     makes it a nested shape.
     A merged group is dropped as a patch of paper closed in by connectors, container
     borders and other shapes when it holds no OCR line's centre and at least 30 % of the
     non-ink pixels 3-7 px outside it have its colour (:meth:`OpenCVShapes._enclosed_gap`),
     and so is an irregular one of that colour (the page's or the panel's around it) whose
     text all hugs its rim. A group, and a one-piece region of a fill other than the
     background, is closed over gaps under ``merge_gap`` px (a connector from a box inside a
     panel out across its border leaves the box a hole of the panel, not a bay).
  5. Kind from the contour: ellipse/circle (area within 6 % of the fitted ellipse), 4-vertex
     polygons as rect / diamond / parallelogram / trapezoid, rounded rect (bbox fill ratio in
     ``[0.86, 0.985)`` with straight sides), cylinder (a merged cap on top, or a cap arc found
     above the body by :func:`_cap_above`: a fill-coloured gap, a smooth arc, no text inside
     the cap), else polygon. A diamond's polygon is its 4 corners grown out
     to the outline's sharp tips (:func:`_diamond_tips`).
  6. ``parent`` is the smallest other shape whose outline contains this shape's bbox.
  8. Frames: rectangles assembled from long straight ink runs (at least ``frame_len`` x the
     text height, 1.5: the clusters of a left-to-right layout are short; ink pieces lying
     wholly inside an OCR line box are left out; at most ``max(8 px, 0.25 th)`` thick, so a
     figure drawn large keeps its frames): top and bottom runs with matching ends
     plus left and right runs covering 60 % of the height. A run on the outline of a box
     already found is no side (two boxes stacked with their sides in line frame nothing;
     an irregular ``polygon`` region is no box),
     and a side whose top end lies nearer the end of another horizontal run than this
     frame's corner belongs to the frame next door.
     Dashed and dotted sides count: gaps of up to ``frame_dash_gap`` text heights are closed
     along the run's direction, on the ink outside the solid straight runs only (so solid
     lines side by side are never joined). Rounded corners: the sides may lie up to one text
     height outside the ends of the top and bottom runs; that inset is the corner radius,
     and the frame's outline is the rounded rectangle (kind ``rounded``), so the connector
     masks cover its corner arcs. Of the runs that qualify as a side, the one whose ends best
     meet the corners (from ``yt + r`` to ``yb - r``) is taken, and of near-duplicate frames
     (IoU > 0.8) the one whose sides fit best: a neighbouring frame's side, or a box's
     outline running close to the frame's bottom, ends elsewhere. They catch containers
     whose interior is cut by connectors; a frame overlapping a region shape (IoU > 0.8,
     or holding it within ``max(6, 0.4 th)`` px on
     every side: a thick outline) is not added twice, unless that shape is a *piece* of the
     frame's panel: an irregular ``polygon`` region of the frame's fill lying inside it along
     two or more of its sides and covering under 90 % of it (connectors crossing the border
     cut the panel's fill into such pieces). The frame replaces its pieces.
  8b. Channels (:mod:`.channels`): a region lying between two other shapes, its left and
     right sides (or top and bottom) within ``max(8, 0.3 th)`` px of theirs, whose other two
     sides carry no outline (ink over 60 % of a side, not counting a stroke running on past
     both ends of it off the other shapes' parallel sides: a connector crossing the gap) is
     the gap between them, not a shape (two column frames over a coloured row band leave one,
     and the edge label set in it became a node).
  9. Pictures: solid blobs and photos survive a morphological opening that removes strokes
     and text; see :meth:`OpenCVShapes._add_blobs`.
  7. Operators: Hough circles of radius ``operator_radius`` (fractions of the text height),
     accepted when ink covers at least 75 % of the circumference; ink on both the horizontal
     and vertical diameters with empty quadrants (:func:`~.operators.quadrant_ink` at most
     15 %) gives ``⊕``, on both diagonals ``⊗``. A circle inside an OCR line box is a letter,
     unless the line is one symbol the OCR misread (``④`` for ``⊕``); such a line's box with
     no circle found is tested itself, a circle round the ink inside it (centred on that
     ink, half its larger side across: :func:`~.operators.symbol_in_box`, a glyph typed at
     the text's size is below the search's smallest radius); one under
     ``operator_loose_min`` text heights is an operator only inside a shape holding no other
     text (a symbol typed as a box's label).

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

Whatever the backend, a shape with a drop shadow (:func:`~.shadows.drop_shadow`: a band of
one flat colour, 3 px to ``shadow_max`` text heights wide, along one vertical and one
horizontal side, unlike the colour outside the other two) is grown over it: the shadow is
part of the box as drawn, not a connector touching it.

Layout of this package (one idea a file): :mod:`.base` (the :data:`BACKENDS` registry, the
:class:`ShapeBackend` protocol, :func:`assign_parents`), :mod:`.ink` (background, channel
differences, ink masks), :mod:`.boxes` (box arithmetic), :mod:`.masks` (region masks),
:mod:`.shapes` (the kind tests of step 5), :mod:`.operators` (step 7), :mod:`.shadows` (drop
shadows), :mod:`.channels` (step 8b), :mod:`.opencv` with
:mod:`.opencv_regions` (steps 4-5) and :mod:`.opencv_frames` (steps 8-9), :mod:`.sam` with
:mod:`.sam_model` (building and loading the model); here the :class:`ShapeHunter` agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import Diagram, Operator, Shape, TextBox
from sciflow.agents.overlay import BLACK, PALETTE, RED, text
from sciflow.agents.registry import AGENTS, BackendAgent
from sciflow.agents.shape_hunter.base import BACKENDS, ShapeBackend, assign_parents
from sciflow.agents.shape_hunter.boxes import _box_area, _inside_frac, _iou, bbox_inter
from sciflow.agents.shape_hunter.ink import _max_channel, _same_color, background_color, channel_difference, ink_mask
from sciflow.agents.shape_hunter.masks import _fill_holes, _grow_over_outline
from sciflow.agents.shape_hunter.opencv import OpenCVShapes
from sciflow.agents.shape_hunter.operators import find_operators, symbol_in_box
from sciflow.agents.shape_hunter.sam import (
    SAMShapes,
    _agent_scalar_keys,
    _component_holding,
    _sam_defaults,
    label_boxes,
    mask_to_shape,
)
from sciflow.agents.shape_hunter.sam_model import (
    SAM_ARCH_KEYS,
    SAM_REGISTRY_TYPES,
    SAM_RUNTIME_KEYS,
    build_sam,
    check_sam_arch,
    load_sam,
)
from sciflow.agents.shape_hunter.shadows import with_shadows
from sciflow.agents.shape_hunter.shapes import _cap_above, _classify, _cylinder_sag, _diamond_tips, _running_median5
from sciflow.agents.text_filters import symbol_reading

# the names this module held before it became a package (private ones included: tests use them)
__all__ = [
    "BACKENDS",
    "SAM_ARCH_KEYS",
    "SAM_REGISTRY_TYPES",
    "SAM_RUNTIME_KEYS",
    "OpenCVShapes",
    "SAMShapes",
    "ShapeBackend",
    "ShapeHunter",
    "assign_parents",
    "background_color",
    "bbox_inter",
    "build_sam",
    "channel_difference",
    "check_sam_arch",
    "find_operators",
    "ink_mask",
    "label_boxes",
    "load_sam",
    "mask_to_shape",
    "_agent_scalar_keys",
    "_box_area",
    "_cap_above",
    "_classify",
    "_component_holding",
    "_cylinder_sag",
    "_diamond_tips",
    "_fill_holes",
    "_grow_over_outline",
    "_inside_frac",
    "_iou",
    "_max_channel",
    "_running_median5",
    "_same_color",
    "_sam_defaults",
]


@AGENTS.register("shape_hunter")
class ShapeHunter(BackendAgent):
    overlay_legend = (("shape outline (a colour per shape), with its kind", PALETTE[2]), ("operator", RED))
    """The Shape Hunter agent; fills ``diagram.shapes`` and ``diagram.operators``."""

    backends = BACKENDS
    default_backend = "opencv"

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        self.find_operators = bool(self.params.get("operators", True))
        self.shadow_max = float(self.params.get("shadow_max", 0.6))

    def run(self, diagram: Diagram) -> None:
        # multi-line labels count as text boxes too (glyph edges may join across lines), drawn
        # the way their lines are (a rotated label's glyph height is its box's width)
        boxes = list(diagram.text_lines) + [
            TextBox(-1 - lb.id, lb.text, lb.bbox, lb.confidence, rotation=lb.rotation)
            for lb in diagram.text_labels if len(lb.line_ids) > 1
        ]
        diagram.shapes = self.backend.find(diagram.image, boxes)
        if self.shadow_max > 0:  # a box's drop shadow is part of the box (:mod:`.shadows`)
            limit = int(round(max(4.0, self.shadow_max * diagram.text_height())))
            diagram.shapes = with_shadows(diagram.shapes, diagram.image, limit)
        if self.find_operators:
            ops = find_operators(diagram.image, diagram.text_height(), self.params)
            # an operator must not be a letter: drop circles inside OCR line boxes, unless the
            # line is one symbol the OCR could not read as it is (a ``⊕`` read as ``④``)
            ops = [
                o
                for o in ops
                if not any(
                    _inside_frac(o.bbox, t.bbox) > 0.5 and not symbol_reading(t.text) for t in diagram.text_lines
                )
            ]
            # a one-symbol reading whose box holds no circle found: a glyph typed at the text's
            # size is smaller than the search's smallest circle; test the box itself
            lone = [t for t in diagram.text_lines
                    if symbol_reading(t.text) and not any(_inside_frac(o.bbox, t.bbox) > 0.5 for o in ops)]
            if lone:
                thr = int(self.params.get("ink_threshold", 60))
                ink = ink_mask(diagram.image, background_color(diagram.image), thr) > 0
                ops += [op for op in (symbol_in_box(ink, t.bbox) for t in lone) if op is not None]
            # a circle under ``operator_loose_min`` text heights is an operator only inside a
            # shape that holds no other text (a symbol typed as a box's label); loose on the
            # page, a circle that small is a letter of text the OCR did not read
            small = float(self.params.get("operator_loose_min", 0.35)) * diagram.text_height()
            ops = [o for o in ops if o.radius >= small or _in_own_box(o, diagram.shapes, diagram.text_lines)]
            diagram.operators = ops
        diagram.evidence["shape_hunter"] = {
            "shapes": [(s.id, s.kind, s.bbox, s.parent) for s in diagram.shapes],
            "operators": [(o.symbol, o.center, o.radius) for o in diagram.operators],
        }

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """Draw each shape's outline (a colour per id) and kind, and each operator's circle, on
        ``canvas`` in place."""
        for s in diagram.shapes:
            pts = np.round(np.array(s.polygon)).astype(np.int32)
            cv2.polylines(canvas, [pts], True, PALETTE[s.id % len(PALETTE)], 2)
            text(canvas, s.kind, s.bbox[0], s.bbox[1] - 2, BLACK)
        for o in diagram.operators:
            cv2.circle(canvas, (int(o.center[0]), int(o.center[1])), int(o.radius), RED, 2)


def _in_own_box(op: Operator, shapes: list[Shape], text_lines: list[TextBox]) -> bool:
    """Whether operator ``op`` lies inside a shape whose only text lines are symbol
    readings (:func:`~sciflow.agents.text_filters.symbol_reading`) or none."""
    cx, cy = op.center
    for sh in shapes:
        x0, y0, x1, y1 = sh.bbox
        if sh.kind == "image" or not (x0 < cx < x1 and y0 < cy < y1):
            continue
        inside = [t for t in text_lines if _inside_frac(t.bbox, sh.bbox) > 0.5]
        if all(symbol_reading(t.text) for t in inside):
            return True
    return False
