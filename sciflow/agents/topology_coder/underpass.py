"""Step 3c: strokes passing under a free text or through an inline label box.

A connector drawn through a free text box is cut by the text mask: two contacts on the same
text candidate whose strokes leave in opposite directions (within 30 degrees) along the line
joining them are one stroke passing under the text (joined, contacts dropped).

An edge label often sits in its own small filled box that interrupts the line (Mermaid,
draw.io, many paper figures). Such an *inline label box* is a drawn shape that holds exactly
one text line and fits it tightly: at most ``1.8`` line heights tall and at most ``2 th``
wider than the line (a node's box has a padding of about a text height on every side), and
it has no outline of its own (:func:`has_outline`: a label's background is a flat patch of
colour, a node's box is drawn with a border). The same pass-through test applies to it
when neither of the two contacts carries an arrowhead (a connector that ends with a head on
a small box feeds that box). For a label box, and for free text whose two contacts carry no
head, a line that bends just outside the label also passes through (:func:`_across`). A label
box whose every contact was bridged is no longer a node: it becomes free text, and step 6
makes it the label of the connector running through it.

A stroke that grazes a drawn node (passes over its corner or along its side) is cut by the
node's mask as well: two contacts on the same node, at most ``4 th`` apart (a shallow graze along a side is
masked over a long stretch), whose pieces leave
in opposite directions along the line joining them and whose midpoint lies no deeper inside
the node than its outline band (``w + 3`` px) are one stroke passing by (joined, contacts
dropped, :func:`bridge_grazes`). A stroke running through a small node (an operator between
two arrows in line) passes through its middle and is not a graze.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import cv2
import numpy as np

from sciflow.agents.diagram import GroundedNode, TextBox
from sciflow.agents.topology_coder.attach import Contact, continues, direction, join_pairs
from sciflow.agents.topology_coder.components import Comp
from sciflow.agents.topology_coder.heads import arrowhead

#: inline label boxes: at most this many line heights tall ...
LABEL_BOX_HEIGHT = 1.8
#: ... and at most this many text heights wider than their one text line
LABEL_BOX_SLACK = 2.0


def is_label_box(n: GroundedNode, lines: dict[int, TextBox], th: float) -> bool:
    """True for a drawn box that holds exactly one text line and fits it tightly (module
    docstring): an edge label's background box, not a node.

    >>> from sciflow.agents.diagram import TextBox
    >>> line = TextBox(0, "weights", (10, 10, 60, 30), 0.9)
    >>> box = GroundedNode("s1", "weights", (6, 6, 64, 34), "rect", 0.9, (), text_ids=(0,))
    >>> is_label_box(box, {0: line}, 20.0)
    True
    >>> node = GroundedNode("s2", "weights", (0, -10, 70, 50), "rect", 0.9, (), text_ids=(0,))
    >>> is_label_box(node, {0: line}, 20.0)
    False
    """
    if n.kind in ("text", "container", "operator", "icon", "image") or n.candidate or len(n.text_ids) != 1:
        return False
    t = lines.get(n.text_ids[0])
    if t is None:
        return False
    bh, bw = n.bbox[3] - n.bbox[1], n.bbox[2] - n.bbox[0]
    return bh <= LABEL_BOX_HEIGHT * t.height and bw <= (t.bbox[2] - t.bbox[0]) + LABEL_BOX_SLACK * th


def bridge_text(
    contacts: list[Contact],
    comps: dict[int, Comp],
    targets: list[GroundedNode],
    th: float,
    head: float,
    find: Callable[[int], int],
    parent: dict[int, int],
    bridges: list[tuple[float, float, float, float]],
    text_lines: tuple[TextBox, ...] | list[TextBox] = (),
    image: np.ndarray | None = None,
) -> list[Contact]:
    """Join the pieces of strokes passing under a free text or through an inline label box
    and drop their contacts there (the stroke direction at every such contact is set on the
    way, see :func:`~sciflow.agents.topology_coder.attach.direction`). Label boxes whose every
    contact was bridged are turned into free text in ``targets`` (their index is kept)."""
    lines = {t.id: t for t in text_lines}
    boxes = {
        k for k, n in enumerate(targets)
        if is_label_box(n, lines, th)
        and (image is None or not has_outline(image, n.bbox, text=lines[n.text_ids[0]].bbox))
    }
    passable = {k for k, n in enumerate(targets) if n.kind == "text"} | boxes
    for ct in contacts:
        if ct.target in passable:
            direction(ct, comps, th, head)
    idx = [i for i, ct in enumerate(contacts) if ct.target in passable]

    def passes(ca: Contact, cb: Contact) -> bool:
        straight = continues(ca, cb)
        return (straight and ca.target not in boxes) or (
            (straight or _across(ca, cb, targets[ca.target].bbox)) and not _headed(ca, cb, comps, th, head, contacts)
        )

    drop = join_pairs(contacts, idx, passes, lambda a, b: find(a.comp) != find(b.comp), find, parent, bridges)
    # a connector that passes under a text has no end on it: the other dots or dashes of a
    # dotted line that also come near the text are pieces of the same pass
    through = {(find(contacts[i].comp), contacts[i].target) for i in drop}
    drop |= {i for i, ct in enumerate(contacts) if (find(ct.comp), ct.target) in through}
    kept = [ct for i, ct in enumerate(contacts) if i not in drop]
    bridged = {contacts[i].target for i in drop} & boxes
    for k in bridged - {ct.target for ct in kept}:
        targets[k] = dataclasses.replace(targets[k], kind="text", candidate=True)
    return kept


def has_outline(
    image: np.ndarray,
    bbox: tuple[float, float, float, float],
    thr: int = 40,
    depth: int = 5,
    text: tuple[float, float, float, float] | None = None,
) -> bool:
    """Whether the box ``bbox`` of ``image`` has a drawn outline: along most of its perimeter
    (over half of the positions), some pixel of the outer ``depth`` px (a box's outline may
    lie a few px inside its grown bbox) differs from the interior's colour by more than
    ``thr`` (max channel). The interior's colour is its commonest (in steps of 8): a label
    packed tightly in its box has nearly as many glyph pixels as fill. Connected marks lying
    wholly inside the text's box ``text`` (1 px of slack) are glyphs, not outline: a label
    packed tightly reaches into those px. A node's box is outlined; an edge label's
    background box is a flat patch of colour.

    >>> img = np.full((40, 60, 3), 255, np.uint8)
    >>> img[10:30, 10:50] = 230
    >>> has_outline(img, (8, 8, 52, 32))
    False
    >>> img[11:29:4, 12:48] = 0         # rows of glyphs filling the box up to its edges
    >>> has_outline(img, (8, 8, 52, 32)), has_outline(img, (8, 8, 52, 32), text=(12, 11, 48, 28))
    (True, False)
    >>> img[10:30, 10] = img[10:30, 49] = img[10, 10:50] = img[29, 10:50] = 0
    >>> has_outline(img, (8, 8, 52, 32), text=(12, 11, 48, 28))
    True
    """
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    X0, Y0 = max(0, x0), max(0, y0)
    crop = image[Y0:y1, X0:x1].astype(np.int16)
    k = depth
    if crop.shape[0] < 2 * k + 2 or crop.shape[1] < 2 * k + 2:
        return False
    fill = _commonest_color(crop[k:-k, k:-k].reshape(-1, 3))
    diff = np.abs(crop - fill).max(axis=2) > thr
    if text is not None:
        n, lab, st, _ = cv2.connectedComponentsWithStats(diff.astype(np.uint8), connectivity=8)
        tx0, ty0, tx1, ty1 = text[0] - X0 - 1, text[1] - Y0 - 1, text[2] - X0 + 1, text[3] - Y0 + 1
        glyph = np.zeros(n, bool)
        for i in range(1, n):
            x, y, w, h = (int(v) for v in st[i, :4])
            glyph[i] = x >= tx0 and y >= ty0 and x + w <= tx1 and y + h <= ty1
        diff &= ~glyph[lab]
    sides = [diff[:k].any(axis=0), diff[-k:].any(axis=0), diff[:, :k].any(axis=1), diff[:, -k:].any(axis=1)]
    return bool(np.concatenate(sides).mean() > 0.5)


def _commonest_color(pix: np.ndarray, step: int = 8) -> np.ndarray:
    """The mean colour of the commonest ``step``-quantised colour among the pixels ``pix``
    (``(n, 3)``).

    >>> pix = np.array([[230, 230, 230]] * 5 + [[20, 20, 20]] * 3 + [[120, 120, 120]] * 4)
    >>> _commonest_color(pix).tolist()
    [230.0, 230.0, 230.0]
    """
    q = pix.astype(np.int64) // step
    keys = (q[:, 0] * 64 + q[:, 1]) * 64 + q[:, 2]
    vals, counts = np.unique(keys, return_counts=True)
    return pix[keys == vals[int(np.argmax(counts))]].mean(axis=0)


def _across(a: Contact, b: Contact, box: tuple[float, float, float, float]) -> bool:
    """Two contacts on opposite sides of ``box``, on a line through its middle (off it by at
    most a quarter of the box's extent across that line), whose strokes both leave away from
    it (within 90 degrees of the outward direction): a line that bends right before or after
    its label (a rounded elbow) still runs through it.

    >>> a = Contact(0, 0, 10.0, 20.0, out_dir=(-0.6, -0.8))
    >>> b = Contact(1, 0, 50.0, 20.0, out_dir=(1.0, 0.0))
    >>> _across(a, b, (10, 10, 50, 30))
    True
    >>> _across(a, Contact(1, 0, 30.0, 30.0, out_dir=(0.0, 1.0)), (10, 10, 50, 30))
    False
    >>> _across(a, Contact(1, 0, 50.0, 20.0, out_dir=(-1.0, 0.0)), (10, 10, 50, 30))
    False
    >>> _across(Contact(0, 0, 10.0, 12.0, out_dir=(-0.7, 0.7)), Contact(1, 0, 50.0, 12.0, out_dir=(0.7, 0.7)),
    ...         (10, 10, 50, 30))
    False
    """
    cx, cy = 0.5 * (box[0] + box[2]), 0.5 * (box[1] + box[3])
    vx, vy = b.x - a.x, b.y - a.y
    L2 = vx * vx + vy * vy
    if L2 == 0:
        return False
    t = ((cx - a.x) * vx + (cy - a.y) * vy) / L2
    if not 0.25 <= t <= 0.75:  # the box's middle is not between them
        return False
    # the line through them runs through the box's middle (an undetected outline around a
    # text touches it at two corners, off the middle)
    L = math.sqrt(L2)
    off = abs((cx - a.x) * vy - (cy - a.y) * vx) / L
    extent = abs(vy) / L * (box[2] - box[0]) + abs(vx) / L * (box[3] - box[1])
    if off > 0.25 * extent:
        return False
    for ct in (a, b):
        ox, oy = ct.x - cx, ct.y - cy
        no = math.hypot(ox, oy) or 1.0
        if (ct.out_dir[0] * ox + ct.out_dir[1] * oy) / no < 0.0:
            return False
    return True


def _headed(a: Contact, b: Contact, comps: dict[int, Comp], th: float, head: float,
            contacts: Sequence[Contact] = ()) -> bool:
    """Whether either of two contacts on one label carries an arrowhead (its own piece
    only; the contacts are probed on copies, the real reading comes in step 4). The window is
    held to ``4 + 6 w`` px (``w``: the piece's stroke width), the size of a head drawn for that
    stroke, so a line that bends just outside its label does not read as a head, and, as in
    step 4, to 0.45 x the distance to the piece's nearest other contact among ``contacts`` (a
    short piece from the label to the next box has that box's head at its other end)."""
    for ct in (a, b):
        own = [math.hypot(o.x - ct.x, o.y - ct.y) for o in contacts if o.comp == ct.comp and o is not ct]
        own = [d for d in own if d > 0.0]
        limit = min(0.45 * math.hypot(a.x - b.x, a.y - b.y), 4.0 + 6.0 * comps[ct.comp].width,
                    0.45 * min(own) if own else math.inf)
        probe = dataclasses.replace(ct)
        arrowhead(probe, comps, [ct.comp], th, head, limit)
        if probe.head:
            return True
    return False


def bridge_grazes(
    contacts: list[Contact],
    comps: dict[int, Comp],
    targets: list[GroundedNode],
    th: float,
    head: float,
    find: Callable[[int], int],
    parent: dict[int, int],
    bridges: list[tuple[float, float, float, float]],
) -> list[Contact]:
    """Join the pieces of strokes grazing a drawn node (module docstring) and drop their
    contacts there.

    >>> from sciflow.agents.diagram import GroundedNode
    >>> box = GroundedNode("b", "B", (0, 0, 100, 40), "rect", 1.0, ((0, 0), (100, 0), (100, 40), (0, 40)))
    >>> graze = [Contact(0, 0, 90.0, 0.0, out_dir=(-1.0, 0.0)), Contact(1, 0, 104.0, 2.0, out_dir=(1.0, 0.1))]
    >>> through = [Contact(0, 0, 0.0, 20.0, out_dir=(-1.0, 0.0)), Contact(1, 0, 30.0, 20.0, out_dir=(1.0, 0.0))]
    >>> _grazing(*graze, box, 2.0), _grazing(*through, box, 2.0)
    (True, False)
    """
    solid = {k for k, n in enumerate(targets) if n.kind not in ("text", "container", "image", "icon")}
    idx = [i for i, ct in enumerate(contacts) if ct.target in solid]
    for i in idx:
        direction(contacts[i], comps, th, head)

    def grazes(ca: Contact, cb: Contact) -> bool:
        w = max(comps[ca.comp].width, comps[cb.comp].width)
        return math.hypot(ca.x - cb.x, ca.y - cb.y) <= 4 * th and _grazing(ca, cb, targets[ca.target], w)

    drop = join_pairs(contacts, idx, grazes, lambda a, b: find(a.comp) != find(b.comp), find, parent, bridges)
    return [ct for i, ct in enumerate(contacts) if i not in drop]


def _grazing(a: Contact, b: Contact, n: GroundedNode, w: float) -> bool:
    """Whether contacts ``a`` and ``b`` on node ``n`` are one stroke passing by it: their
    pieces leave in opposite directions along the line joining them (within 30 degrees) and
    the midpoint lies no deeper inside the node's polygon than ``w + 3`` px."""
    if not continues(a, b) or len(n.polygon) < 3:
        return False
    poly = np.asarray(n.polygon, np.float32).reshape(-1, 1, 2)
    depth = cv2.pointPolygonTest(poly, ((a.x + b.x) / 2, (a.y + b.y) / 2), True)
    return depth <= w + 3
