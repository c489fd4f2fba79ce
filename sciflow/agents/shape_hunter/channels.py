"""Channels between shapes (step 8b): a region that is only the gap between two shapes.

Two frames side by side on a coloured band (the columns of a figure laid over coloured rows)
leave between them a region of the band's colour whose left and right sides are the frames'
outlines and whose top and bottom are where the band's colour stops: no line is drawn there.
Read as a box, it makes a node of the edge label set in the gap (BYOL's ``f_theta`` between
its "view" and "representation" columns) and cuts the arrows that pass through it. A drawn box
has an outline of its own on every side; this region has one only where its neighbours do.
"""

from __future__ import annotations

import numpy as np

from sciflow.agents.diagram import BBox, Shape
from sciflow.agents.shape_hunter.base import assign_parents
from sciflow.agents.shape_hunter.ink import ink_mask

#: a side "carries a line" when ink covers at least this share of it (at the best of a few
#: offsets across it)
LINE_COVER = 0.6


def _side_ink(
    ink: np.ndarray, box: BBox, side: str, reach: int, beyond: int = 0, rails: tuple[float, ...] = ()
) -> float:
    """The largest share of ``side`` (``top``, ``bottom``, ``left``, ``right``) of ``box`` that
    an outline covers: ink on one row (column) within ``reach`` px of it. With ``beyond`` > 0 a
    row whose ink also covers ``beyond`` px past both ends of the side is a stroke passing
    through (a connector crossing the gap), not an outline ending at its corners, and counts 0,
    unless it lies within ``reach`` px of one of ``rails`` (the parallel sides of other shapes:
    boxes stacked with their sides in line make one straight line of outlines).

    >>> ink = np.zeros((50, 60), np.uint8); ink[10, 5:55] = 255
    >>> _side_ink(ink, (5.0, 11.0, 55.0, 40.0), "top", 2), _side_ink(ink, (5.0, 11.0, 55.0, 40.0), "bottom", 2)
    (1.0, 0.0)
    >>> _side_ink(ink, (15.0, 11.0, 45.0, 40.0), "top", 2, beyond=6)      # the line runs on past it
    0.0
    """
    h, w = ink.shape
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    x0, x1 = max(0, x0), min(w, x1)
    y0, y1 = max(0, y0), min(h, y1)
    if x1 <= x0 or y1 <= y0:
        return 0.0
    horizontal = side in ("top", "bottom")
    at = {"top": y0, "bottom": y1 - 1, "left": x0, "right": x1 - 1}[side]
    lo, hi, size = (x0, x1, w) if horizontal else (y0, y1, h)
    best = 0.0
    for off in range(-reach, reach + 1):
        k = at + off
        if not 0 <= k < (h if horizontal else w):
            continue
        line = (ink[k, :] if horizontal else ink[:, k]) > 0
        cover = float(line[lo:hi].mean())
        through = beyond > 0 and lo - beyond >= 0 and hi + beyond <= size
        through = through and all(abs(k - r) > reach for r in rails)
        if through and min(line[lo - beyond : lo].mean(), line[hi : hi + beyond].mean()) >= LINE_COVER:
            cover = 0.0  # a stroke passing through
        best = max(best, cover)
    return best


def is_channel(sh: Shape, shapes: list[Shape], ink: np.ndarray, m: float) -> bool:
    """Whether ``sh`` is the gap between two other shapes: its left and right sides lie within
    ``m`` px of a side of two other shapes beside it (each overlapping 80 % of its height, and
    neither holding it), or its top and bottom likewise, while its other two sides carry no
    outline (:data:`LINE_COVER`; ``ink`` a 0/255 mask of what differs from the paper): ink
    there that runs on ``2 m`` px past both ends, off the other shapes' parallel sides, is a
    connector crossing the gap, which cuts the region where it passes.

    >>> ink = np.zeros((120, 200), np.uint8)
    >>> ink[10:110, 40] = ink[10:110, 80] = 255         # two frames' facing sides
    >>> a = Shape(0, "rect", (0.0, 10.0, 41.0, 110.0), (), (255, 255, 255), 0.8, 4100.0)
    >>> b = Shape(1, "rect", (79.0, 10.0, 160.0, 110.0), (), (255, 255, 255), 0.8, 8100.0)
    >>> gap = Shape(2, "rounded", (41.0, 10.0, 79.0, 60.0), (), (235, 235, 255), 0.9, 1900.0)
    >>> is_channel(gap, [a, b, gap], ink, 4.0)
    True
    >>> ink[10, 41:79] = ink[59, 41:79] = 255           # a box drawn between them: its own lines
    >>> is_channel(gap, [a, b, gap], ink, 4.0)
    False
    """
    x0, y0, x1, y1 = sh.bbox
    reach = max(2, int(round(m / 2)))
    others = [o for o in shapes if o is not sh and not _holds(o.bbox, sh.bbox, m)]

    def overlap(lo0: float, hi0: float, lo1: float, hi1: float) -> float:
        return max(0.0, min(hi0, hi1) - max(lo0, lo1)) / max(hi0 - lo0, 1.0)

    left = any(abs(o.bbox[2] - x0) <= m and overlap(y0, y1, o.bbox[1], o.bbox[3]) >= 0.8 for o in others)
    right = any(abs(o.bbox[0] - x1) <= m and overlap(y0, y1, o.bbox[1], o.bbox[3]) >= 0.8 for o in others)
    beyond = int(round(2 * m))
    rows = tuple(v for o in others for v in (o.bbox[1], o.bbox[3]))
    cols = tuple(v for o in others for v in (o.bbox[0], o.bbox[2]))
    if left and right:
        return all(_side_ink(ink, sh.bbox, s, reach, beyond, rows) < LINE_COVER for s in ("top", "bottom"))
    above = any(abs(o.bbox[3] - y0) <= m and overlap(x0, x1, o.bbox[0], o.bbox[2]) >= 0.8 for o in others)
    below = any(abs(o.bbox[1] - y1) <= m and overlap(x0, x1, o.bbox[0], o.bbox[2]) >= 0.8 for o in others)
    if above and below:
        return all(_side_ink(ink, sh.bbox, s, reach, beyond, cols) < LINE_COVER for s in ("left", "right"))
    return False


def _holds(outer: BBox, inner: BBox, m: float) -> bool:
    return (outer[0] - m <= inner[0] and outer[1] - m <= inner[1]
            and inner[2] <= outer[2] + m and inner[3] <= outer[3] + m)


def drop_channels(shapes: list[Shape], image: np.ndarray, bg: np.ndarray, th: float) -> list[Shape]:
    """``shapes`` without the channels between shapes (:func:`is_channel`, ``m = max(8, 0.3
    th)``: a region closed over its outline reaches a few px into its neighbours' outlines;
    pictures are never channels), renumbered in order with their parents assigned again."""
    ink = ink_mask(image, bg, 40)
    m = max(8.0, 0.3 * th)
    keep = [s for s in shapes if s.kind == "image" or not is_channel(s, shapes, ink, m)]
    if len(keep) == len(shapes):
        return shapes
    out = [Shape(i, s.kind, s.bbox, s.polygon, s.fill, s.confidence, s.area, None, s.stroke)
           for i, s in enumerate(keep)]
    return assign_parents(out)
