"""The outline of a picture named by a caption beside it (the Grounder's captioned icons)."""

from __future__ import annotations


def icon_outline(icon: tuple[float, ...], caption: tuple[float, ...]) -> tuple[tuple[float, float], ...]:
    """The outline of a captioned icon: its pictures' box and its caption's box (one above
    the other) joined by the strip of their common width, a rectilinear polygon. A caption
    wider than its picture leaves the paper beside the picture out, where arrows arrive.

    >>> icon_outline((40, 0, 60, 20), (20, 24, 80, 34))
    ((40, 0), (60, 0), (60, 24), (80, 24), (80, 34), (20, 34), (20, 24), (40, 24))
    >>> icon_outline((0, 0, 100, 50), (30, 55, 70, 65))
    ((0, 0), (100, 0), (100, 50), (70, 50), (70, 65), (30, 65), (30, 50), (0, 50))
    """
    top, low = (icon, caption) if icon[1] <= caption[1] else (caption, icon)
    mx0, mx1 = max(top[0], low[0]), min(top[2], low[2])
    if mx1 <= mx0:  # no common width: the box round both
        x0, x1, y1 = min(top[0], low[0]), max(top[2], low[2]), max(top[3], low[3])
        return ((x0, top[1]), (x1, top[1]), (x1, y1), (x0, y1))
    pts = [(top[0], top[1]), (top[2], top[1])]
    # right side, down: the top box's side, across to the lower box's where that is wider
    pts += [(top[2], top[3])] if top[2] > low[2] else [(top[2], low[1])]
    pts += [(low[2], top[3])] if top[2] > low[2] else [(low[2], low[1])]
    pts += [(low[2], low[3]), (low[0], low[3])]
    pts += [(low[0], top[3])] if top[0] < low[0] else [(low[0], low[1])]
    pts += [(top[0], top[3])] if top[0] < low[0] else [(top[0], low[1])]
    out: list[tuple[float, float]] = []
    for p in pts:
        if not out or p != out[-1]:
            out.append(p)
    return tuple(out)
