"""Step 4b: a connector that branches at one contact (lines fanning out of one port).

Lines that leave one box together (Mermaid draws every edge from the same port) run side by
side near that contact, so the head test measures the bundle's width there and calls it a
head. The contact where the connector branches is seen on rings round it: the connector
crosses one in two or more arcs, every other contact's in one (:func:`branching_contact`).
Where all contacts read as heads, the branching one is the tail (:func:`fan_tail`).
"""

from __future__ import annotations

import math

import numpy as np

from sciflow.agents.diagram import GroundedNode
from sciflow.agents.topology_coder.attach import Contact
from sciflow.agents.topology_coder.components import Comp
from sciflow.agents.topology_coder.heads import member_pixels, stroke_width


def ring_arcs(dx: np.ndarray, dy: np.ndarray, r: float, tol: float = 1.5, gap: float = 25.0) -> int:
    """How many arcs the pixels at offsets ``dx``, ``dy`` from a point cross the ring of radius
    ``r`` in: their angles on the ring, split wherever ``gap`` degrees hold none.

    >>> t = np.linspace(0, 40, 81)
    >>> ring_arcs(t, 0 * t, 20.0), ring_arcs(np.r_[t, 0.7 * t], np.r_[0 * t, -0.7 * t], 20.0)
    (1, 2)
    """
    return len(ring_arc_lengths(dx, dy, r, tol, gap))


def ring_arc_lengths(dx: np.ndarray, dy: np.ndarray, r: float, tol: float = 1.5, gap: float = 25.0) -> list[float]:
    """The length in px along the ring of radius ``r`` of each arc the pixels at offsets
    ``dx``, ``dy`` cross it in (split wherever ``gap`` degrees hold none); a line crossing
    the ring square gives an arc about as long as the line is wide.

    >>> yy, xx = np.mgrid[-30:31, -30:31]
    >>> band = np.abs(yy) <= 2                                    # a 5 px wide line through the centre
    >>> [round(v) for v in ring_arc_lengths(xx[band].astype(float), yy[band].astype(float), 20.0)]
    [4, 4]
    """
    ring = np.abs(np.hypot(dx, dy) - r) <= tol
    if not ring.any():
        return []
    ang = np.sort(np.degrees(np.arctan2(dy[ring], dx[ring])) % 360)
    gaps = np.diff(np.concatenate([ang, ang[:1] + 360]))
    cuts = np.nonzero(gaps > gap)[0]
    if cuts.size == 0:  # one arc (or the whole ring)
        return [float(np.radians(ang[-1] - ang[0]) * r)]
    # arcs run from just after one cut to the next cut (wrapping round 360)
    starts = ang[(cuts + 1) % ang.size]
    ends = ang[np.roll(cuts, -1)]
    return [float(np.radians((e - s_) % 360) * r) for s_, e in zip(starts, ends, strict=True)]


def branching_contact(
    cts: list[Contact], xs: np.ndarray, ys: np.ndarray, th: float, head: float, w: float = 1.0,
    inner: bool = True,
) -> int | None:
    """The index of the one contact where the connector (pixels ``xs``, ``ys``) branches, or
    ``None`` when no contact, or more than one, does.

    First on the ring of radius ``1.25 R`` (just beyond the head window, ``R = max(6, head *
    th)``; arcs apart by 25 degrees). When no contact branches there: a contact whose one arc
    on that ring is at least ``max(1.8 w, w + 2.5)`` px long (lines leaving one port side by
    side; ``w`` the connector's stroke width) and which is crossed in two or more arcs on a
    ring twice as wide, where those lines have parted (arcs apart by ``0.25 R`` px; only while
    that ring stays under 0.45 x the distance to the contact's nearest other contact, so it
    does not reach another contact's line). A thin line's end beside a line passing by has
    one short arc on the inner ring and is no bundle. With ``inner`` false only a bundle is
    reported (``None`` as soon as the inner ring finds a contact branching).

    >>> t = np.linspace(0, 60, 121)
    >>> xs, ys = np.r_[t, t], np.r_[0.5 * t, -0.5 * t]   # two lines out of (0, 0)
    >>> cts = [Contact(0, 0, 0.0, 0.0), Contact(0, 1, 60.0, 30.0), Contact(0, 2, 60.0, -30.0)]
    >>> branching_contact(cts, xs, ys, th=10.0, head=1.0)
    0
    """
    big = max(6.0, head * th)
    arcs = [ring_arc_lengths(xs - c.x, ys - c.y, 1.25 * big) for c in cts]
    fans = [i for i, a in enumerate(arcs) if len(a) >= 2]
    if fans:
        return fans[0] if len(fans) == 1 and inner else None
    # a bundle: one arc on the inner ring several line widths long, two or more on the
    # outer ring where the lines have parted
    bundle = max(1.8 * w, w + 2.5)
    r = 2.5 * big
    fans = []
    for i, c in enumerate(cts):
        if len(arcs[i]) != 1 or arcs[i][0] < bundle:
            continue
        near = min(math.hypot(o.x - c.x, o.y - c.y) for o in cts if o is not c)
        if r <= 0.45 * near and ring_arcs(xs - c.x, ys - c.y, r, gap=math.degrees(0.25 * big / r)) >= 2:
            fans.append(i)
    return fans[0] if len(fans) == 1 else None


def fan_tail(cts: list[Contact], comps: dict[int, Comp], members: list[int], th: float, head: float,
             targets: list[GroundedNode], inner: bool = True) -> None:
    """On a connector of two or more contacts that all read as heads, the one contact where
    the connector branches (:func:`branching_contact`) is its tail (two contacts: a fan-out
    whose branches all end on one node, merged into one contact there). Lines fanning out of
    one box spread across each other where they leave it, which the head test takes for a
    head's spread; a head has one line behind it. The tail must be a drawn node: free text
    at a branching point is a label set beside a junction (``96-d`` where a residual branch
    leaves the input line), and a contact on a container's outline branches where the line
    crosses a dashed frame (its dashes on the ring). Nothing changes when no contact, or more
    than one, branches. ``inner`` as in :func:`branching_contact`."""
    if len(cts) < 2 or not all(c.head for c in cts):
        return
    xs, ys = member_pixels(comps, members)
    k = branching_contact(cts, xs, ys, th, head, stroke_width(comps, members), inner)
    if k is not None and targets[cts[k].target].kind not in ("text", "container"):
        cts[k].head = False
