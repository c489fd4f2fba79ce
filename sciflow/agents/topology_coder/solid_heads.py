"""Step 4, last resort: a filled arrowhead read from the stroke's own thickness.

The window test (:func:`~sciflow.agents.topology_coder.heads.arrowhead`) measures how far the
ink near a contact spreads across the stroke. A connector that bends just before its end
(Mermaid's ``step`` and ``basis`` curves between boxes close together) spreads to one side
there at both ends, and the head that sits against the outline is lost among the bend's ink.
The thickness of the stroke does not care about bends: along the skeleton the distance to
the nearest paper pixel is half the line's width, and it doubles inside a filled head.

On a two-contact connector with no head at either end, the skeleton pixels within
``radius`` of each contact (and nearer to it than to the other contact) give the end's
thickness (their largest distance-transform value) and the skeleton pixels farther than
``radius`` from both give the shaft's (their median). One end is a head when it is at least
``max(1.5 s, s + 1)`` thick, ``s`` the shaft's, and at least 1.35 x the other end (a plain
line, bent or not, keeps the shaft's thickness; a small marker head whose tip lies under the
outline mask is ~1.6 x an anti-aliased hairline). Open (chevron) heads are thin and are left
to the window test.
"""

from __future__ import annotations

import logging
import math

import cv2
import numpy as np

from sciflow.agents.topology_coder.attach import Contact
from sciflow.agents.topology_coder.components import Comp, skeleton

log = logging.getLogger(__name__)


def ridge(comps: dict[int, Comp], members: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(xs, ys, half_widths)``: the image coordinates of the skeleton pixels of the pieces
    ``members`` and the distance from each to the nearest paper pixel of its piece.

    >>> m = np.zeros((9, 30), bool); m[3:6, :] = True        # a line 3 px wide
    >>> xs, ys, r = ridge({0: Comp(0, 10, 20, m)}, [0])
    >>> float(np.median(ys)), float(np.median(r))
    (24.0, 2.0)
    """
    xs_l, ys_l, r_l = [], [], []
    for m in members:
        c = comps[m]
        mask = np.pad(c.mask, 1).astype(np.uint8)
        dt = cv2.distanceTransform(mask, cv2.DIST_L2, 5)[1:-1, 1:-1]
        yy, xx = np.nonzero(skeleton(c.mask))
        xs_l.append(xx + c.x0)
        ys_l.append(yy + c.y0)
        r_l.append(dt[yy, xx])
    if not xs_l:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    return (np.concatenate(xs_l).astype(float), np.concatenate(ys_l).astype(float), np.concatenate(r_l).astype(float))


def solid_ends(cts: list[Contact], comps: dict[int, Comp], members: list[int], radius: float) -> None:
    """Mark the one end of a headless two-contact connector that is a filled head by its
    thickness (module docstring). Nothing changes otherwise.

    >>> from sciflow.agents.topology_coder.attach import Contact
    >>> m = np.zeros((20, 70), bool); m[9:12, 0:70] = True        # a 3 px shaft ...
    >>> for k in range(12):                                      # ... ending in a filled head
    ...     m[10 - (12 - k) // 2 : 11 + (12 - k) // 2, 58 + k] = True
    >>> cts = [Contact(0, 0, 0.0, 10.0), Contact(0, 1, 69.0, 10.0)]
    >>> solid_ends(cts, {0: Comp(0, 0, 0, m)}, [0], 16.0); [c.head for c in cts]
    [False, True]
    >>> m2 = np.zeros((20, 70), bool); m2[9:12, 0:70] = True      # a plain line: no head
    >>> cts = [Contact(0, 0, 0.0, 10.0), Contact(0, 1, 69.0, 10.0)]
    >>> solid_ends(cts, {0: Comp(0, 0, 0, m2)}, [0], 16.0); [c.head for c in cts]
    [False, False]
    """
    if len(cts) != 2 or any(c.head for c in cts):
        return
    a, b = cts
    L = math.hypot(b.x - a.x, b.y - a.y)
    r = min(radius, 0.45 * L)
    if r < 3.0:
        return
    xs, ys, half = ridge(comps, members)
    if half.size < 6:
        return
    da = np.hypot(xs - a.x, ys - a.y)
    db = np.hypot(xs - b.x, ys - b.y)
    shaft_px = (da > r) & (db > r)
    if shaft_px.sum() < 3:
        return
    s = float(np.median(half[shaft_px]))
    ends = []
    for d_own, d_other in ((da, db), (db, da)):
        near = (d_own <= r) & (d_own < d_other)
        ends.append(float(half[near].max()) if near.any() else 0.0)
    need = max(1.5 * s, s + 1.0)
    for i, j in ((0, 1), (1, 0)):
        if ends[i] >= need and ends[i] >= 1.35 * ends[j]:
            cts[i].head = True
            cts[i].margin = float(min(1.0, (ends[i] - need) / need))
            log.debug("contacts at (%.0f,%.0f)/(%.0f,%.0f): ends %.1f/%.1f thick over a %.1f shaft, head at the first",
                      cts[i].x, cts[i].y, cts[j].x, cts[j].y, ends[i], ends[j], s)
            return
