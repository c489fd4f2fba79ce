"""Drop shadows: the offset copy of a box drawn under it, showing as a band of flat colour
along two adjacent sides (slide software's default for boxes).

A shadow is part of the box as drawn. Left out, it is ink outside every node: the Topology
Coder traces it as a connector that touches the box at its corners and joins the arrows
meeting the box (issue 17, cause 2: "offset outlines of stacked cards").

What the image shows: right outside one vertical and one horizontal side, every row (resp.
column) along the side starts with a run of pixels unlike the colour just beyond it, all of
one length (the offset) and one flat colour, over the whole side but its corners. A
connector meeting the side crosses it at a few rows only; a neighbouring box runs on past
the largest offset; a stacked card's outline leaves a gap of paper before it.
"""

from __future__ import annotations

import dataclasses

import cv2
import numpy as np

from sciflow.agents.diagram import Shape

__all__ = ["drop_shadow", "with_shadows"]

_DIFF = 30          # a shadow pixel differs from the colour beyond the shadow by more than this
_STEADY = 0.6       # share of the side's rows whose run is the offset (+-1 px): an arrowhead
                    # meeting the side crosses the shadow on up to a third of a short side
_FLAT = 24          # 90th percentile of the shadow pixels' channel deviation from their median


def _strip(img: np.ndarray, lines: np.ndarray, start: int, step: int, n: int, vertical: bool) -> np.ndarray | None:
    """The ``n`` pixels going ``step`` (+1 / -1) from ``start`` across a side, per line (a row
    for a vertical side, a column for a horizontal one): ``lines x n x 3`` int16, or None
    where the strip leaves the image."""
    h, w = img.shape[:2]
    idx = [start + step * k for k in range(n)]
    if min(idx) < 0 or max(idx) >= (w if vertical else h):
        return None
    if vertical:
        return img[lines][:, idx].astype(np.int16)
    return img[:, lines][idx].transpose(1, 0, 2).astype(np.int16)


def _offset(strip: np.ndarray, around: np.ndarray, limit: int) -> int | None:
    """The shadow's width on one side, from its strip (the side's ``limit + 1`` outer pixels per
    line), or None. The shadow colour is the median 2 px out (the first pixel or two may be
    the outline's anti-aliasing, so a shadow is at least 3 px); it must differ from ``around``, the colour outside the
    box's other sides. Per line the run is the first pixel from 2 px out unlike that
    colour; the offset is the median run when 60 % of lines are within 1 px of it, it lies in
    ``[3, limit]``, and the runs of those lines are one flat colour."""
    colour = np.median(strip[:, 2], axis=0)
    if float(np.abs(colour - around).max()) <= _DIFF:
        return None
    like = np.abs(strip - colour.astype(np.int16)).max(axis=2) <= _DIFF
    like[:, :2] = True
    runs = np.where(like.all(axis=1), limit + 1, np.argmin(like, axis=1))
    d = int(np.median(runs))
    steady = np.abs(runs - d) <= 1
    if not 3 <= d <= limit or float(np.mean(steady)) < _STEADY:
        return None
    pix = strip[steady, 2:d].reshape(-1, 3)  # an arrow crossing the shadow is not its colour
    dev = np.abs(pix - np.median(pix, axis=0)).max(axis=1)
    return d if float(np.percentile(dev, 90)) <= _FLAT else None


def drop_shadow(img: np.ndarray, bbox: tuple[float, float, float, float], max_offset: int) -> tuple[int, int] | None:
    """The offset ``(dx, dy)`` of the drop shadow under the box ``bbox`` (``x0, y0, x1, y1``,
    ``x1``/``y1`` exclusive, the outline included) in the RGB image ``img``, or None.

    A shadow offset by ``(sx d1, sy d2)`` (signs ``s`` in +-1, ``3 <= d <= max_offset``,
    ``|d1 - d2| <= 2``) shows as runs of ``d1`` px of one flat colour right outside the side
    ``x1`` (``sx`` = +1) or ``x0`` on every row but the ``max_offset + 2`` nearest each
    corner (60 % of them within 1 px of the median run), the same along the side ``y1`` or
    ``y0`` with ``d2``; that colour is not the one outside the two other sides (a box with
    neighbours close by on two sides has paper there). Exactly one pair of signs must fit.

    >>> img = np.full((80, 100, 3), 255, np.uint8)
    >>> img[26:56, 26:76] = 120                  # the shadow, 6 px down and right
    >>> img[20:50, 20:70] = (200, 220, 240)      # the box over it
    >>> drop_shadow(img, (20, 20, 70, 50), 10)
    (6, 6)
    >>> img[26:56, 26:76] = 255; img[34:36, 70:100] = 0   # no shadow; an arrow meets the side
    >>> drop_shadow(img, (20, 20, 70, 50), 10) is None
    True
    """
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    m = max_offset + 2
    rows, cols = np.arange(y0 + m, y1 - m), np.arange(x0 + m, x1 - m)
    if max_offset < 3 or rows.size < 4 or cols.size < 4:
        return None
    n = max_offset + 1
    sides = {
        ("x", 1): _strip(img, rows, x1, 1, n, True), ("x", -1): _strip(img, rows, x0 - 1, -1, n, True),
        ("y", 1): _strip(img, cols, y1, 1, n, False), ("y", -1): _strip(img, cols, y0 - 1, -1, n, False),
    }
    if any(v is None for v in sides.values()):
        return None
    found: list[tuple[int, int]] = []
    for sx in (1, -1):
        for sy in (1, -1):
            vert, horiz = sides[("x", sx)], sides[("y", sy)]
            opposite = np.concatenate([sides[("x", -sx)][:, 2], sides[("y", -sy)][:, 2]])  # type: ignore[index]
            around = np.median(opposite, axis=0)
            d1 = _offset(vert, around, max_offset)  # type: ignore[arg-type]
            d2 = _offset(horiz, around, max_offset)  # type: ignore[arg-type]
            if d1 is not None and d2 is not None and abs(d1 - d2) <= 2:
                found.append((sx * d1, sy * d2))
    return found[0] if len(found) == 1 else None


def with_shadows(shapes: list[Shape], img: np.ndarray, max_offset: int) -> list[Shape]:
    """``shapes`` with each shape that has a drop shadow (:func:`drop_shadow`) grown over
    it: the outline is the convex hull of the outline and its copy shifted by the offset, the
    bbox and area follow. Other shapes are returned unchanged."""
    out = []
    for s in shapes:
        off = drop_shadow(img, s.bbox, max_offset) if s.polygon else None
        if off is None:
            out.append(s)
            continue
        pts = np.array(s.polygon, np.float32)
        hull = cv2.convexHull(np.concatenate([pts, pts + np.array(off, np.float32)])).reshape(-1, 2)
        x0, y0 = hull.min(axis=0)
        x1, y1 = hull.max(axis=0)
        out.append(
            dataclasses.replace(
                s,
                bbox=(float(x0), float(y0), float(x1), float(y1)),
                polygon=tuple((float(x), float(y)) for x, y in hull),
                area=float((x1 - x0) * (y1 - y0)),
            )
        )
    return out
