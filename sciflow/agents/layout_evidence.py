"""Queries on the Layout Detector's boxes (``diagram.layout``) for the agents that use them.

Plain functions over :class:`~sciflow.agents.diagram.LayoutBox` lists; an empty list (the
``none`` backend) answers "no support" everywhere, so agents behave as without a detector.

>>> from sciflow.agents.diagram import LayoutBox
>>> boxes = [LayoutBox((10.0, 10.0, 20.0, 20.0), "arrowhead", 0.9)]
>>> arrowhead_support(boxes, 21.0, 15.0, radius=2.0)
0.9
>>> arrowhead_support(boxes, 40.0, 15.0, radius=2.0)
0.0
>>> arrowtail_support([LayoutBox((10.0, 10.0, 20.0, 20.0), "arrowtail", 0.7)], 15.0, 21.0, radius=2.0)
0.7
"""

from __future__ import annotations

from sciflow.agents.diagram import BBox, LayoutBox, bbox_area, bbox_intersection


def arrowhead_support(layout: list[LayoutBox], x: float, y: float, radius: float, min_conf: float = 0.0) -> float:
    """The highest confidence of a detected ``arrowhead`` whose box, grown by ``radius`` on
    every side, contains the point ``(x, y)`` (a connector's end at a node outline); 0.0 when
    none does."""
    return _support(layout, "arrowhead", x, y, radius, min_conf)


def arrowtail_support(layout: list[LayoutBox], x: float, y: float, radius: float, min_conf: float = 0.0) -> float:
    """As :func:`arrowhead_support` for a detected ``arrowtail`` (the end of a one-headed
    connector without the head, a class of ``layout-detector-v2``); 0.0 for detectors without it."""
    return _support(layout, "arrowtail", x, y, radius, min_conf)


def _support(layout: list[LayoutBox], cls: str, x: float, y: float, radius: float, min_conf: float) -> float:
    best = 0.0
    for b in layout:
        if b.cls != cls or b.confidence < min_conf:
            continue
        x0, y0, x1, y1 = b.bbox
        if x0 - radius <= x <= x1 + radius and y0 - radius <= y <= y1 + radius:
            best = max(best, b.confidence)
    return best


def enclosing_node_box(
    layout: list[LayoutBox], bbox: BBox, min_conf: float = 0.0, cover: float = 0.8
) -> LayoutBox | None:
    """The smallest detected ``node`` box holding at least ``cover`` of ``bbox``'s area (a
    text label's box) and larger than it; ``None`` when no detection holds the label."""
    area = bbox_area(bbox)
    if area <= 0:
        return None
    found = [
        b
        for b in layout
        if b.cls == "node"
        and b.confidence >= min_conf
        and bbox_intersection(b.bbox, bbox) >= cover * area
        and bbox_area(b.bbox) > area
    ]
    return min(found, key=lambda b: (bbox_area(b.bbox), -b.confidence, b.bbox)) if found else None
