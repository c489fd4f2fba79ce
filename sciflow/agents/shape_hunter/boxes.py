"""Box arithmetic on ``(x0, y0, x1, y1)`` boxes: overlap fractions, IoU, intersection, area."""

from __future__ import annotations

from sciflow.agents.diagram import BBox


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
