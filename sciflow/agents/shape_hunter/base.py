"""What every shape backend shares: the :data:`BACKENDS` registry, the :class:`ShapeBackend`
protocol and the containment step (6) that sets each shape's ``parent``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

from sciflow.agents.diagram import Shape, TextBox
from sciflow.agents.registry import Registry

BACKENDS = Registry("shape_hunter backend")


class ShapeBackend:
    """Protocol: ``find(image, text_lines) -> list[Shape]`` plus ``fingerprint()``."""

    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)

    def find(self, image: np.ndarray, text_lines: list[TextBox]) -> list[Shape]:  # pragma: no cover
        raise NotImplementedError

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": getattr(self, "registered_name", type(self).__name__)}


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
