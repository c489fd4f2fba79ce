"""The :class:`Diagram` that flows through the parser agents, and its evidence types.

Every evidence type is plain data (boxes, polygons, polylines, confidences) so that each
agent can be tested on a hand-made :class:`Diagram` without running the others.
Coordinates are pixels of :attr:`Diagram.image` (the *working* image, after the load-time
rescaling recorded in :attr:`Diagram.scale`); ``bbox`` is ``(x0, y0, x1, y1)`` with
``x1``/``y1`` exclusive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

BBox = tuple[float, float, float, float]
Point = tuple[float, float]


def bbox_union(boxes: list[BBox]) -> BBox:
    """The smallest box containing every box in ``boxes`` (non-empty)."""
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def bbox_area(b: BBox) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def bbox_intersection(a: BBox, b: BBox) -> float:
    return bbox_area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


def bbox_iou(a: BBox, b: BBox) -> float:
    """Intersection over union of two boxes (0.0 when both are empty)."""
    inter = bbox_intersection(a, b)
    union = bbox_area(a) + bbox_area(b) - inter
    return inter / union if union > 0 else 0.0


def bbox_center(b: BBox) -> Point:
    return ((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0)


@dataclass(frozen=True)
class TextBox:
    """One OCR text line: ``polygon`` is the 4-point quadrilateral the OCR returned;
    ``rotation`` the counter-clockwise degrees the line is drawn at (0, 90: reads bottom to
    top, 270: reads top to bottom; :mod:`sciflow.agents.text_rotation`)."""

    id: int
    text: str
    bbox: BBox
    confidence: float
    polygon: tuple[Point, ...] = ()
    rotation: int = 0

    @property
    def height(self) -> float:
        """The glyph height: across the line (the box's width for a line drawn at 90 or 270)."""
        if self.rotation % 180:
            return self.bbox[2] - self.bbox[0]
        return self.bbox[3] - self.bbox[1]


@dataclass(frozen=True)
class TextLabel:
    """Text lines grouped into one label (reading order); ``line_ids`` index ``TextBox.id``;
    ``rotation`` that of its lines (lines of different rotations never share a label)."""

    id: int
    text: str
    bbox: BBox
    confidence: float
    line_ids: tuple[int, ...]
    rotation: int = 0


@dataclass(frozen=True)
class Shape:
    """A closed shape or filled colour region.

    ``kind``: rect, rounded, ellipse, circle, diamond, trapezoid, parallelogram, cylinder,
    polygon, region (an irregular filled area) or image (a picture or solid blob).
    ``polygon`` is the simplified outer contour (grown over the outline); ``fill`` the median
    RGB inside the shape; ``parent`` the id of the innermost shape containing it (or
    ``None``). ``stroke`` is an outline-thickness slot; the opencv backend does not measure
    it and records 1.0.
    """

    id: int
    kind: str
    bbox: BBox
    polygon: tuple[Point, ...]
    fill: tuple[int, int, int]
    confidence: float
    area: float
    parent: int | None = None
    stroke: float = 1.0


@dataclass(frozen=True)
class LayoutBox:
    """A detector box: ``cls`` is the detector's class name."""

    bbox: BBox
    cls: str
    confidence: float


@dataclass(frozen=True)
class Operator:
    """A drawn operator symbol (e.g. circled plus ``⊕``), centre and radius in pixels."""

    symbol: str
    center: Point
    radius: float
    confidence: float

    @property
    def bbox(self) -> BBox:
        x, y = self.center
        r = self.radius
        return (x - r, y - r, x + r, y + r)


@dataclass(frozen=True)
class GroundedNode:
    """A node candidate.

    ``kind``: the shape kind, ``"text"`` for free-standing text, ``"operator"`` for an
    operator symbol, ``"icon"`` for an untexted shape or picture named by a caption, or
    ``"container"`` for a group shape. ``candidate`` is True for free-standing text, icons
    and containers, which become graph nodes only when an edge attaches.
    ``polygon`` is the outline used for masking and edge attachment.
    """

    id: str
    label: str
    bbox: BBox
    kind: str
    confidence: float
    polygon: tuple[Point, ...]
    candidate: bool = False
    shape_id: int | None = None
    text_ids: tuple[int, ...] = ()
    group: str | None = None


@dataclass(frozen=True)
class GroupEvidence:
    """A container that holds nodes: ``id`` matches a container GroundedNode id."""

    id: str
    label: str | None
    bbox: BBox
    parent: str | None = None


@dataclass(frozen=True)
class Stroke:
    """A traced connector (one ink component after bridging dashes and container borders).

    ``contacts`` are ``(node_id, x, y, has_head)`` for every place the stroke meets a node
    outline; ``polyline`` is a coarse skeleton path; ``style`` is solid/dashed/dotted.
    """

    id: int
    polyline: tuple[Point, ...]
    contacts: tuple[tuple[str, float, float, bool], ...]
    style: str
    width: float
    bbox: BBox


@dataclass(frozen=True)
class EdgeEvidence:
    """A directed connection between two grounded node ids."""

    source: str
    target: str
    confidence: float
    style: str = "solid"
    label: str | None = None
    stroke_id: int | None = None


@dataclass
class Diagram:
    """The image and the evidence gathered so far (one attribute per evidence layer).

    ``scale`` maps working-image pixels back to the input: ``input = working / scale``.
    ``evidence`` keeps each agent's raw output under the agent's name for debugging.
    """

    image: np.ndarray
    item_id: str = "diagram"
    scale: float = 1.0
    source: str | None = None
    text_lines: list[TextBox] = field(default_factory=list)
    text_labels: list[TextLabel] = field(default_factory=list)
    logos: list[TextBox] = field(default_factory=list)  # OCR lines dropped as logos (Text Spotter step 2)
    shapes: list[Shape] = field(default_factory=list)
    operators: list[Operator] = field(default_factory=list)
    layout: list[LayoutBox] = field(default_factory=list)
    nodes: list[GroundedNode] = field(default_factory=list)
    groups: list[GroupEvidence] = field(default_factory=list)
    free_text: list[TextLabel] = field(default_factory=list)
    strokes: list[Stroke] = field(default_factory=list)
    edges: list[EdgeEvidence] = field(default_factory=list)
    graph: Any = None
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def height(self) -> int:
        return int(self.image.shape[0])

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    def text_height(self) -> float:
        """Median OCR line height, or 2 % of the image height when no text was read."""
        if self.text_lines:
            return float(np.median([t.height for t in self.text_lines]))
        return max(8.0, 0.02 * self.height)
