"""Step 8c: boxes drawn with a second side line (Mermaid's subroutine ``[[ ]]``, a
predefined process in flowcharts): the region found is the panel between the inner lines;
the box reaches out to its outer outline.

A side of a ``rect`` or ``rounded`` shape moves out to a straight line parallel to it, ``d``
px outside (``3 <= d <= max(6, 0.6 th)``), when:

* that line is ink along at least 90 % of the side's length;
* a strip of the box's inside lies between them (some line across the gap, parallel to the
  side, holds ink along under half of it): a thick outline is no second line;
* the shape's own top and bottom outline (for a left or right side; left and right for a top
  or bottom) run on through the gap to that line: a neighbouring box or a card stacked
  behind has outlines of its own that do not.

The nearest such line wins. The second lines come in pairs: both of two opposite sides
move, by the same amount within 2 px (the box then grows on those two sides only), and the
grown box must not be another shape already found (a card drawn round a box inside it).
Without this, the outer outline and the bars stay connector
ink next to the box, and the arrowheads that touch them are read as part of a stroke along
the box.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from sciflow.agents.shape_hunter.base import Shape
from sciflow.agents.shape_hunter.boxes import _iou
from sciflow.agents.shape_hunter.ink import ink_mask

#: the kinds whose sides are axis-aligned straight lines
BOX_KINDS = ("rect", "rounded")


def outer_side(
    ink: np.ndarray, bbox: tuple[float, float, float, float], side: str, reach: int, fill: np.ndarray | None = None
) -> int:
    """How many px ``side`` (``"left"``, ``"right"``, ``"top"``, ``"bottom"``) of the box
    ``bbox`` moves out to the outer line of a double side, or 0 (see the module docstring).
    ``ink``: the outline pixels (neither paper nor the box's fill); ``fill``: the pixels of the
    box's fill colour (default: not ``ink``).

    >>> ink = np.zeros((40, 60), bool)
    >>> ink[10, 10:50] = ink[30, 10:50] = True           # top and bottom, run on to x = 10
    >>> ink[10:31, 10] = ink[10:31, 16] = ink[10:31, 49] = True  # outer left, inner left, right
    >>> outer_side(ink, (16, 10, 49, 30), "left", 8), outer_side(ink, (16, 10, 49, 30), "right", 8)
    (6, 0)
    >>> ink[10, 10:16] = False                           # the top stops at the inner line
    >>> outer_side(ink, (16, 10, 49, 30), "left", 8)
    0
    """
    if fill is None:
        fill = ~ink
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    # work on a view where the side is the left one: columns run outwards from it
    if side == "left":
        view, inside, a, lo, hi = ink, fill, x0, y0, y1
    elif side == "right":
        view, inside, a, lo, hi = ink[:, ::-1], fill[:, ::-1], ink.shape[1] - 1 - x1, y0, y1
    elif side == "top":
        view, inside, a, lo, hi = ink.T, fill.T, y0, x0, x1
    else:
        view, inside, a, lo, hi = ink.T[:, ::-1], fill.T[:, ::-1], ink.shape[0] - 1 - y1, x0, x1
    h, w = view.shape
    if hi - lo < 8 or lo < 2 or hi + 3 > h:
        return 0
    rows = slice(lo + 2, hi - 1)
    for d in range(3, reach + 1):
        c = a - d
        if c < 0:
            break
        if view[rows, c].mean() < 0.9:
            continue
        gap = inside[rows, c + 1 : a]
        if gap.size == 0 or gap.mean(axis=0).max() < 0.5:
            continue  # no inside between the lines: a thick outline
        if all(_runs_across(view, e, c, a) for e in (lo, hi)):
            return d
    return 0


def _runs_across(view: np.ndarray, e: int, c: int, a: int, slack: int = 4) -> bool:
    """Whether a line of ``view`` near row ``e`` (within ``slack`` px: a region's box may be
    grown over its outline) is ink in every column from ``c`` to ``a`` (a 3-row band, so a
    line one px off straight counts)."""
    h = view.shape[0]
    for r in range(max(1, e - slack), min(h - 1, e + slack + 1)):
        if view[r - 1 : r + 2, c : a + 1].any(axis=0).all():
            return True
    return False


def grow_double_sides(shapes: list[Shape], image: np.ndarray, bg: np.ndarray, th: float) -> list[Shape]:
    """``shapes`` with every ``rect`` / ``rounded`` shape grown out to the outer lines of a pair
    of double sides (:func:`outer_side`, module docstring); its polygon points on those sides
    move with them."""
    paper = ink_mask(image, bg, 40) > 0
    reach = int(max(6.0, 0.6 * th))
    out: list[Shape] = []
    for sh in shapes:
        if sh.kind not in BOX_KINDS:
            out.append(sh)
            continue
        x0, y0, x1, y1 = sh.bbox
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        # measured on a window round the box, reach and a margin wider on every side
        m = reach + 8
        X0, Y0 = max(0, int(x0) - m), max(0, int(y0) - m)
        X1, Y1 = min(image.shape[1], int(x1) + m + 1), min(image.shape[0], int(y1) + m + 1)
        # the box's outline differs from both the paper and its fill
        fill = ~(ink_mask(image[Y0:Y1, X0:X1], np.asarray(sh.fill), 40) > 0)
        ink = paper[Y0:Y1, X0:X1] & ~fill
        local = (x0 - X0, y0 - Y0, x1 - X0, y1 - Y0)
        moves = {s: outer_side(ink, local, s, reach, fill) for s in ("left", "right", "top", "bottom")}
        for a, b in (("left", "right"), ("top", "bottom")):
            if not (moves[a] and moves[b] and abs(moves[a] - moves[b]) <= 2):
                moves[a] = moves[b] = 0  # the bars come in pairs, alike
        bbox = (x0 - moves["left"], y0 - moves["top"], x1 + moves["right"], y1 + moves["bottom"])
        if not any(moves.values()) or any(_iou(bbox, o.bbox) > 0.8 for o in shapes if o is not sh):
            out.append(sh)
            continue
        poly = tuple(
            (
                x - moves["left"] if x < cx else x + moves["right"],
                y - moves["top"] if y < cy else y + moves["bottom"],
            )
            for x, y in sh.polygon
        )
        area = float((bbox[2] - bbox[0]) * (bbox[3] - bbox[1]))
        out.append(replace(sh, bbox=bbox, polygon=poly, area=area))
    return out
