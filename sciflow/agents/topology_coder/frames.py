"""Step 3b: container borders, the outlines that connectors cross or end on.

Two contacts of different pieces on the same container band within the band width plus two
contact radii, whose pieces leave the outline to opposite sides (one into the container, one
out of it: :func:`_opposite_sides`), are one stroke crossing the outline (joined, contacts
dropped); so are two
farther apart (up to ``4 th``) whose pieces leave in opposite directions along the line
joining them (within 30 degrees) and that line crosses the outline at more than 5 degrees:
a stroke crossing the outline at a shallow angle, whose masked stretch is the band width
over the sine of that angle (pieces in line along the outline are leftover dashes of it). Where
two frames run side by side and one masked stretch crosses both outlines, a contact on each,
of different connectors, within the two half-bands plus two contact radii, whose pieces
continue each other (within 30 degrees), are one stroke crossing both. A remaining
end on a container outline whose stroke leaves it outward stays on a titled container
unless a node inside lies at the frame there or the stroke goes on inside to a node (another
stroke touches it straight on); a stroke leaving it inward (a panel's port) goes to a node
inside only where one lies at the frame there, else is dropped; an end on an untitled
container goes to the node inside nearest to it (within ``2.5 th``), else is dropped
(:func:`retarget_container_ends`).

A stroke crossing the outline right beside a text (the container's title, or an edge label
set against the outline) passes under the text too: a contact on the outline and one on a
free text whose box comes within the band plus two contact radii of it, of different
pieces, whose pieces leave in opposite directions along the line joining them (within 30
degrees) and that lie no farther apart than that plus the text's diagonal, are one stroke
(joined, both contacts dropped), never an edge from the text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import cv2
import numpy as np

from sciflow.agents.diagram import GroundedNode
from sciflow.agents.text_filters import fold_label
from sciflow.agents.topology_coder.attach import Contact, continues, direction, join_pairs
from sciflow.agents.topology_coder.components import Comp


def bridge_containers(
    contacts: list[Contact],
    targets: list[GroundedNode],
    band_w: Mapping[int, int],
    r_contact: float,
    find: Callable[[int], int],
    parent: dict[int, int],
    bridges: list[tuple[float, float, float, float]],
    comps: dict[int, Comp],
    th: float,
    head: float,
) -> list[Contact]:
    """Join the pieces of strokes crossing a container outline (container target ``k``'s
    band ``band_w[k]`` px wide, contact radius ``r_contact``) and drop their contacts there."""
    cont = [i for i, ct in enumerate(contacts) if targets[ct.target].kind == "container"]
    for i in cont:
        direction(contacts[i], comps, th, head)

    def crossing(ca: Contact, cb: Contact) -> bool:
        d = math.hypot(ca.x - cb.x, ca.y - cb.y)
        lim = band_w[ca.target] + 2 * r_contact + 2
        vx, vy = (cb.x - ca.x) / (d or 1.0), (cb.y - ca.y) / (d or 1.0)
        # a stroke crosses the outline, however shallow; pieces in line along it are
        # leftover dashes of the frame itself
        across = _across_outline(targets[ca.target].polygon, (ca.x + cb.x) / 2, (ca.y + cb.y) / 2, vx, vy)
        near = d <= lim and _opposite_sides(ca, cb, targets[ca.target].polygon, max(6.0, head * th))
        return near or (continues(ca, cb) and across and d <= 4 * th)

    drop = join_pairs(contacts, cont, crossing, lambda a, b: a.comp != b.comp, find, parent, bridges)

    def through_both(ca: Contact, cb: Contact) -> bool:
        """Two frames side by side, their bands touching: one masked stretch crosses both."""
        d = math.hypot(ca.x - cb.x, ca.y - cb.y)
        return d <= (band_w[ca.target] + band_w[cb.target]) / 2 + 2 * r_contact + 2 and continues(ca, cb)

    rest = [i for i in cont if i not in drop]
    drop |= join_pairs(contacts, rest, through_both, lambda a, b: find(a.comp) != find(b.comp), find, parent,
                       bridges, same=lambda a, b: a.target != b.target)
    # a container's own outline, and its title (a free text that names it): not any text
    # right inside the outline, which may be what an arrow crossing there points at
    titles = {fold_label(n.label) for n in targets if n.kind == "container" and n.label.strip()}
    near_outline = [i for i, ct in enumerate(contacts) if targets[ct.target].kind == "container"
                    or (targets[ct.target].kind == "text" and fold_label(targets[ct.target].label) in titles)]
    drop |= twin_contacts(contacts, near_outline, drop, r_contact)
    return [ct for i, ct in enumerate(contacts) if i not in drop]


def twin_contacts(contacts: list[Contact], idx: list[int], dropped: set[int], reach: float = 3.0) -> set[int]:
    """The contacts among ``idx`` (those on containers and their titles) that repeat a
    ``dropped`` one (a crossing of a container's outline): same piece, within ``reach`` px
    (the contact radius: one touch of the piece), when the piece goes on to a contact
    farther away. A piece whose end meets an outline's band along two neighbouring pixels
    has two contacts there, and a line crossing the outline straight through the
    container's title (Mermaid draws edges over subgraph titles) or right beside it touches
    the title's box there; when the crossing is joined, either would leave the stroke ending
    on the container or its title.

    >>> cts = [Contact(5, 0, 159.0, 292.0), Contact(6, 0, 159.0, 300.0), Contact(6, 1, 159.0, 301.0)]
    >>> sorted(twin_contacts(cts, [0, 1, 2], {0, 1}))            # piece 6 ends there
    []
    >>> sorted(twin_contacts(cts + [Contact(6, 2, 160.0, 337.0)], [0, 1, 2], {0, 1}))
    [2]
    """
    out = set()
    for i in idx:
        if i in dropped:
            continue
        c = contacts[i]
        twin_of = [j for j in dropped if contacts[j].comp == c.comp
                   and math.hypot(contacts[j].x - c.x, contacts[j].y - c.y) <= reach]
        # the piece goes on past both (to its own end elsewhere): a piece that stops on a
        # text just inside the outline ends there
        beyond = any(k.comp == c.comp and all(math.hypot(k.x - contacts[j].x, k.y - contacts[j].y) > reach
                                               for j in twin_of) for k in contacts)
        if twin_of and beyond:
            out.add(i)
    return out


def bridge_beside_text(
    contacts: list[Contact],
    targets: list[GroundedNode],
    band_w: Mapping[int, int],
    r_contact: float,
    find: Callable[[int], int],
    parent: dict[int, int],
    bridges: list[tuple[float, float, float, float]],
) -> list[Contact]:
    """Join the pieces of a stroke that crosses a container's outline and then a text right
    beside the crossing: the container's title, or an edge label set against the outline
    (module docstring). ``out_dir`` must be set on both contacts (:func:`bridge_containers`,
    and :func:`~sciflow.agents.topology_coder.underpass.bridge_text` for free text)."""
    kinds = [n.kind for n in targets]
    idx = [i for i, ct in enumerate(contacts) if kinds[ct.target] in ("container", "text")]

    def beside(a: Contact, b: Contact) -> bool:
        """``a`` on a container's outline, ``b`` on a text whose box comes within ``near`` of ``a``."""
        if kinds[a.target] != "container" or kinds[b.target] != "text":
            return False
        x0, y0, x1, y1 = targets[b.target].bbox
        return math.hypot(max(x0 - a.x, 0.0, a.x - x1), max(y0 - a.y, 0.0, a.y - y1)) <= near(a, b)

    def near(a: Contact, b: Contact) -> float:
        """The band plus two contact radii, for the band of whichever is on the container."""
        return band_w[a.target if kinds[a.target] == "container" else b.target] + 2 * r_contact

    def under(a: Contact, b: Contact) -> bool:
        t = targets[a.target if kinds[a.target] == "text" else b.target].bbox
        reach = near(a, b) + math.hypot(t[2] - t[0], t[3] - t[1])
        return math.hypot(a.x - b.x, a.y - b.y) <= reach and continues(a, b)

    drop = join_pairs(contacts, idx, under, lambda a, b: find(a.comp) != find(b.comp), find, parent, bridges,
                      same=lambda a, b: beside(a, b) or beside(b, a))
    return [ct for i, ct in enumerate(contacts) if i not in drop]


def _opposite_sides(a: Contact, b: Contact, polygon: tuple[tuple[float, float], ...], reach: float) -> bool:
    """Whether the pieces at contacts ``a`` and ``b`` on a container's outline leave it to
    opposite sides, one into the container and one out of it (a stroke crossing the
    outline), judged by the signed distance to the outline ``reach`` px along each piece's
    ``out_dir`` against the contact's own. Two arrows ending side by side on the same side of
    a frame are two arrows, however close. Unknown directions, pieces running within 30
    degrees of the outline (a shallow crossing) and contacts within ``reach`` of a corner of
    the polygon (a stroke grazing it) do not object.

    >>> square = ((0.0, 0.0), (100.0, 0.0), (100.0, 100.0), (0.0, 100.0))
    >>> inner = Contact(0, 0, 2.0, 50.0, out_dir=(1.0, 0.0))
    >>> outer = Contact(1, 0, -2.0, 54.0, out_dir=(-1.0, 0.0))
    >>> beside = Contact(2, 0, -2.0, 70.0, out_dir=(-0.9, 0.4))
    >>> _opposite_sides(inner, outer, square, 10.0), _opposite_sides(outer, beside, square, 10.0)
    (True, False)
    """
    if a.out_dir == (0.0, 0.0) or b.out_dir == (0.0, 0.0):
        return True
    # at a corner the nearest side changes under the stroke: a graze there tells no side
    if any(math.hypot(c.x - px, c.y - py) <= reach for c in (a, b) for px, py in polygon):
        return True
    # a piece running along the outline (within 30 degrees) tells no side: a stroke crossing
    # at a shallow angle leaves both its pieces nearly parallel to the outline
    if not all(_across_outline(polygon, c.x, c.y, *c.out_dir, min_angle=30.0) for c in (a, b)):
        return True
    return _inward(a, polygon, reach) != _inward(b, polygon, reach)


def _inward(c: Contact, polygon: tuple[tuple[float, float], ...], reach: float) -> bool:
    """Whether the piece at contact ``c`` leaves the outline into the polygon: ``reach`` px
    along its ``out_dir`` lies deeper inside (signed distance) than the contact."""
    poly = np.asarray(polygon, np.float32).reshape(-1, 1, 2)
    here = cv2.pointPolygonTest(poly, (float(c.x), float(c.y)), True)
    ahead = cv2.pointPolygonTest(poly, (float(c.x + reach * c.out_dir[0]), float(c.y + reach * c.out_dir[1])), True)
    return ahead > here


def _across_outline(
    polygon: tuple[tuple[float, float], ...], x: float, y: float, vx: float, vy: float, min_angle: float = 5.0
) -> bool:
    """Whether the unit direction ``(vx, vy)`` at ``(x, y)`` crosses the polygon's nearest side
    at more than ``min_angle`` degrees (parallel to it: a run along the outline, not across it).

    >>> square = ((0.0, 0.0), (100.0, 0.0), (100.0, 100.0), (0.0, 100.0))
    >>> _across_outline(square, 50.0, 1.0, 0.98, 0.2), _across_outline(square, 50.0, 1.0, 1.0, 0.01)
    (True, False)
    """
    best, side = math.inf, (1.0, 0.0)
    n = len(polygon)
    for k in range(n):
        (ax, ay), (bx, by) = polygon[k], polygon[(k + 1) % n]
        ex, ey = bx - ax, by - ay
        L2 = ex * ex + ey * ey
        if L2 <= 0:
            continue
        t = max(0.0, min(1.0, ((x - ax) * ex + (y - ay) * ey) / L2))
        dist = math.hypot(x - (ax + t * ex), y - (ay + t * ey))
        if dist < best:
            best, side = dist, (ex / math.sqrt(L2), ey / math.sqrt(L2))
    return abs(vx * side[1] - vy * side[0]) > math.sin(math.radians(min_angle))


def _box_distance(b: tuple[float, ...], x: float, y: float) -> float:
    """Distance from ``(x, y)`` to the box ``b``; 0 inside it."""
    return math.hypot(max(b[0] - x, 0.0, x - b[2]), max(b[1] - y, 0.0, y - b[3]))


def _frame_distance(b: tuple[float, ...], x: float, y: float) -> float:
    """Distance from ``(x, y)`` to the border of the box ``b`` (from inside or outside)."""
    if b[0] <= x <= b[2] and b[1] <= y <= b[3]:
        return min(x - b[0], b[2] - x, y - b[1], b[3] - y)
    return _box_distance(b, x, y)


def _ahead_within(ct: Contact, x: float, y: float, reach: float, cone: float = 25.0) -> bool:
    """Whether ``(x, y)`` lies within ``reach`` of contact ``ct`` and within ``cone`` degrees of
    the straight line on from its piece (against its ``out_dir``).

    >>> ct = Contact(0, 0, 0.0, 0.0, out_dir=(-1.0, 0.0))
    >>> _ahead_within(ct, 20.0, 3.0, 50.0), _ahead_within(ct, 5.0, 20.0, 50.0), _ahead_within(ct, -20.0, 0.0, 50.0)
    (True, False, False)
    """
    d = math.hypot(x - ct.x, y - ct.y)
    if d > reach or d == 0.0:
        return d == 0.0
    cos = -((x - ct.x) * ct.out_dir[0] + (y - ct.y) * ct.out_dir[1]) / d
    return cos >= math.cos(math.radians(cone))


def retarget_container_ends(
    contacts: list[Contact], targets: list[GroundedNode], th: float, reach: float
) -> list[Contact]:
    """Give a stroke end on a container outline to the container, or to the node inside it
    that it was drawn to, or drop it. ``out_dir`` must be set (:func:`bridge_containers`).

    A titled container is a node when a stroke from outside ends on its border (the
    annotation protocol: an arrow to a container is an edge to the container, labelled by its
    title). So an end whose piece leaves the outline outward (``reach`` px along it lies
    outside, the piece crossing the outline at more than 30 degrees) stays on a titled
    container, unless a node inside lies at the frame there: its box no more than
    ``max(3, th / 4)`` px farther from the contact than the frame (a node drawn against the
    container's side, which the stroke reaches through the frame), or another stroke's
    contact on a node inside lies within ``2.5 th`` straight on from the piece (within 25
    degrees of its direction: the stroke goes on inside to that node:
    a crossing whose inner piece was paired with another stroke, as where three arrows
    converge on one node just inside the frame). A stroke ending on a titled card beside its
    listed items, which nothing touches, with padding between the frame and the nearest
    item, stays on the card. A piece that leaves the outline inward is drawn inside the
    container from its border (a panel's input or output port): the container is no end of
    it, and neither is a node inside unless it lies at the frame there (as above); else the
    end is dropped (the connector's other ends then say nothing of this one: a port's line
    fanning out to two boxes is no arrow between them). Any other end (an untitled
    container, which never becomes a node, or a direction the outline does not tell) goes
    to the nearest node inside within ``2.5 th``, else stays on a titled container, else is
    dropped.

    >>> from sciflow.agents.diagram import GroundedNode as N
    >>> box = lambda x0, y0, x1, y1: ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    >>> def card(title):
    ...     return [N("g1", title, (0.0, 0.0, 100.0, 100.0), "container", 1.0, box(0, 0, 100, 100), True),
    ...             N("s1", "Item", (10.0, 60.0, 90.0, 88.0), "rect", 1.0, box(10, 60, 90, 88), group="g1")]
    >>> def end(title, out_dir):
    ...     t, ct = card(title), Contact(0, 0, 50.0, 103.0, out_dir=out_dir)
    ...     return [t[c.target].id for c in retarget_container_ends([ct], t, 20, 10)]
    >>> end("Card", (0.0, 1.0)), end("", (0.0, 1.0)), end("Card", (0.0, -1.0))
    (['g1'], ['s1'], [])
    >>> t = card("Panel")
    >>> retarget_container_ends([Contact(0, 0, 50.0, -3.0, out_dir=(0.0, 1.0))], t, 20, 10)  # a port
    []
    >>> heads = [Contact(0, 0, 50.0, 103.0, out_dir=(0.0, 1.0)), Contact(1, 1, 48.0, 89.0)]
    >>> [t[c.target].id for c in retarget_container_ends(heads, t, 20, 10)]  # going on to the item
    ['s1', 's1']
    """
    index = {n.id: i for i, n in enumerate(targets)}
    reached = [(ct.target, ct.x, ct.y) for ct in contacts if targets[ct.target].kind != "container"]
    out = []
    for ct in contacts:
        c = targets[ct.target]
        if c.kind != "container":
            out.append(ct)
            continue
        titled = bool(c.label.strip())
        told = ct.out_dir != (0.0, 0.0) and _across_outline(c.polygon, ct.x, ct.y, *ct.out_dir, min_angle=30.0)
        inward = told and _inward(ct, c.polygon, reach)
        outward = titled and told and not inward
        if outward or inward:
            limit = _frame_distance(c.bbox, ct.x, ct.y) + max(3.0, th / 4)
        else:
            limit = 2.5 * th
        # (rank, distance, node): a node within the limit first, then one the stroke goes on to
        cands: list[tuple[int, float, int]] = []
        for n in targets:
            if n.group != c.id or n.candidate:
                continue
            d, k = _box_distance(n.bbox, ct.x, ct.y), index[n.id]
            if d <= limit:
                cands.append((0, d, k))
            elif outward and d <= 2.5 * th and any(t == k and _ahead_within(ct, x, y, 2.5 * th)
                                                   for t, x, y in reached):
                cands.append((1, d, k))
        if cands:
            ct.target = min(cands)[2]
            out.append(ct)
        elif titled and (outward or not told):
            out.append(ct)
    return out
