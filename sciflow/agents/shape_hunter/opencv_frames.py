"""Steps 8-9 of the ``opencv`` backend: shapes found in the ink rather than as regions:
rectangular frames assembled from long straight runs (containers cut by connectors) and
pictures (solid blobs and photos)."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from sciflow.agents.diagram import BBox, Shape, TextBox
from sciflow.agents.shape_hunter.base import assign_parents
from sciflow.agents.shape_hunter.boxes import _box_area, _inside_frac, _iou
from sciflow.agents.shape_hunter.ink import _same_color, colour_concentration, ink_mask, without_glyphs

#: how far (max channel) a region's fill may be from the background and still be paper (noise)
PAPER_TOL = 8.0
# kinds of region whose outline is no box's: it follows whatever bounds the region (a panel's
# border and the connectors that cut the panel into pieces)
IRREGULAR = ("polygon",)
# a frame's side is at most this many text heights thick (and at most 8 px where text is small)
FRAME_SIDE_MAX = 0.25
# a piece of a panel covers less than this share of the panel's frame
PIECE_MAX_AREA = 0.9
# a blob whose 6 commonest colour cells hold less than this share of its pixels is a photograph
# (drawn regions >= 0.8, photographs 0.3-0.55 on the figures measured)
PHOTO_CONCENTRATION = 0.6


def rounded_rect(box: BBox, r: float, steps: int = 4) -> tuple[tuple[float, float], ...]:
    """The outline of ``box`` with corners rounded to radius ``r``, clockwise from the top
    left, ``steps`` segments per corner (the plain rectangle for ``r < 1``).

    >>> rounded_rect((0, 0, 10, 10), 0)
    ((0, 0), (10, 0), (10, 10), (0, 10))
    >>> len(rounded_rect((0, 0, 10, 10), 2))
    20
    """
    x0, y0, x1, y1 = box
    if r < 1:
        return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    pts: list[tuple[float, float]] = []
    corners = ((x0 + r, y0 + r, 180), (x1 - r, y0 + r, 270), (x1 - r, y1 - r, 0), (x0 + r, y1 - r, 90))
    for cx, cy, a0 in corners:
        for k in range(steps + 1):
            a = np.radians(a0 + 90.0 * k / steps)
            pts.append((round(float(cx + r * np.cos(a)), 2), round(float(cy + r * np.sin(a)), 2)))
    return tuple(pts)


def _side_error(v: tuple[float, float, float], r: float, yt: float, yb: float) -> float:
    """How far the ends of the vertical run ``v = (x, y0, y1)`` are from where a frame side
    with corner radius ``r`` between the top ``yt`` and bottom ``yb`` would end.

    >>> _side_error((10.0, 20.0, 80.0), 10.0, 10.0, 90.0)
    0.0
    """
    r = max(0.0, r)
    return abs(v[1] - (yt + r)) + abs(v[2] - (yb - r))


def _on_outline(run: tuple[float, float, float], horizontal: bool, shapes: list[Shape], eps: float = 4.0) -> bool:
    """Whether the straight run ``run`` (``(y, x0, x1)`` if ``horizontal``, else ``(x, y0,
    y1)``) lies on the outline of one of ``shapes``: on its top or bottom (left or right)
    side, within ``eps`` px, and within that side's extent.

    >>> box = Shape(0, "rect", (10, 10, 60, 40), ((10, 10), (60, 10), (60, 40), (10, 40)), (255, 255, 255), 1.0, 1500.0)
    >>> _on_outline((10.5, 12.0, 58.0), True, [box]), _on_outline((35.0, 10.0, 60.0), False, [box])
    (True, False)
    """
    at, a0, a1 = run
    for sh in shapes:
        x0, y0, x1, y1 = sh.bbox
        sides, lo, hi = ((y0, y1), x0, x1) if horizontal else ((x0, x1), y0, y1)
        if any(abs(at - v) <= eps for v in sides) and a0 >= lo - eps and a1 <= hi + eps:
            return True
    return False


def _common_span(
    top: tuple[float, float], bottom: tuple[float, float], slack: float
) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The top and bottom runs ``(x0, x1)`` of one frame, or ``None``. Either run may reach
    into its corner arcs, so their ends may differ by up to ``slack``. A run may also go on
    past the other's end, at one side or both, where a connector leaving along the side or a
    neighbouring frame's dashes continue it in line: it is then cut back to the other run's
    end, and the frame's sides must still meet those corners. What is cut off must be under
    half of what is kept: a connector continues a side for a short way, while a page-wide
    divider running under a box is no frame's bottom.

    >>> _common_span((10.0, 200.0), (12.0, 198.0), 5.0)
    ((10.0, 200.0), (12.0, 198.0))
    >>> _common_span((10.0, 200.0), (-60.0, 198.0), 5.0)
    ((10.0, 200.0), (10.0, 198.0))
    >>> _common_span((10.0, 200.0), (40.0, 198.0), 5.0)
    ((40.0, 200.0), (40.0, 198.0))
    >>> _common_span((10.0, 200.0), (-200.0, 198.0), 5.0) is None
    True
    """
    (t0, t1), (b0, b1) = top, bottom
    if abs(t0 - b0) <= slack and abs(t1 - b1) <= slack:
        return top, bottom
    t0, b0 = (b0, b0) if t0 < b0 - slack else (t0, t0) if b0 < t0 - slack else (t0, b0)
    t1, b1 = (t1, t1) if b1 > t1 + slack else (b1, b1) if t1 > b1 + slack else (t1, b1)
    for (a0, a1), (c0, c1) in ((top, (t0, t1)), (bottom, (b0, b1))):
        if (a1 - a0) - (c1 - c0) >= 0.5 * (c1 - c0):
            return None
    return (t0, t1), (b0, b1)


def _side_meets(
    side: tuple[float, float, float], runs: list[tuple[float, float, float]], yt: float, yb: float, slack: float
) -> bool:
    """Whether the vertical run ``side = (x, y0, y1)``, with the runs of ``runs`` in line with
    it (within 3 px; a side cut where a connector crosses it), reaches from the top ``yt`` to
    the bottom ``yb`` within ``slack`` at both ends and covers at least 70 % of that height.

    >>> _side_meets((10.0, 5.0, 40.0), [(10.0, 5.0, 40.0), (11.0, 60.0, 98.0)], 0.0, 100.0, 6.0)
    True
    >>> _side_meets((10.0, 5.0, 40.0), [(10.0, 5.0, 40.0)], 0.0, 100.0, 6.0)
    False
    """
    parts = [r for r in runs if abs(r[0] - side[0]) <= 3 and r[2] >= yt - slack and r[1] <= yb + slack]
    parts.append(side)
    lo, hi = min(r[1] for r in parts), max(r[2] for r in parts)
    cover = np.zeros(int(max(1.0, yb - yt)) + 1, bool)
    for r in parts:
        cover[int(max(0.0, r[1] - yt)) : int(max(0.0, min(yb, r[2]) - yt)) + 1] = True
    return abs(lo - yt) <= slack and abs(hi - yb) <= slack and bool(cover.mean() >= 0.7)


def _own_corner(
    side: tuple[float, float, float],
    corner: tuple[float, float],
    runs: list[tuple[float, float, float]],
    bottom: bool = False,
) -> bool:
    """Whether the top end of the vertical run ``side = (x, y0, y1)`` (its bottom end with
    ``bottom``) is at least as near the frame's corner ``corner`` (the end of its top run, or
    bottom run) as to the end of any horizontal run of ``runs`` (``(y, x0, x1)``): two frames
    side by side each have their own side, and each side turns into its own frame's top; two
    boxes stacked with their sides in line each turn their sides into their own bottom, so
    the top of one and the bottom (or top) of the next frame nothing.

    >>> tops = [(0.0, 20.0, 100.0), (0.0, 130.0, 200.0)]
    >>> _own_corner((105.0, 15.0, 300.0), (130.0, 0.0), tops), _own_corner((122.0, 15.0, 300.0), (130.0, 0.0), tops)
    (False, True)
    >>> _own_corner((105.0, 15.0, 300.0), (130.0, 0.0), tops + [(40.0, 105.0, 180.0)])
    False
    >>> _own_corner((122.0, 15.0, 300.0), (130.0, 0.0), tops + [(40.0, 122.0, 180.0)])
    True
    >>> stack = [(0.0, 10.0, 90.0), (60.0, 10.0, 90.0), (100.0, 10.0, 90.0), (160.0, 10.0, 90.0)]
    >>> _own_corner((10.0, 0.0, 60.0), (10.0, 160.0), stack, bottom=True)
    False
    >>> _own_corner((10.0, 0.0, 60.0), (10.0, 60.0), stack, bottom=True)
    True
    """
    x, end = side[0], side[2 if bottom else 1]
    own = np.hypot(x - corner[0], end - corner[1])
    # a side turns into a top above its upper end (a run lower down, a box's outline that
    # touches the side, is no top it could turn into), and into a bottom below its lower end,
    # or into a line that ends at the side (within 4 px) at most 8 px inside its end (a
    # sketched side overshoots its corners). Only ends at the side count for a bottom: a
    # box drawn inside the frame ends short of it, a connector crossing it runs on

    def turns_into(y: float, e: float) -> bool:
        at_side = abs(e - x) <= 4
        if bottom:
            return at_side and y >= end - 8
        return y <= end + 2 or (at_side and y <= end + 8)

    return all(np.hypot(x - e, end - y) >= own - 1e-9 for y, a, b in runs for e in (a, b) if turns_into(y, e))


def _joined_under_text(
    runs: list[tuple[float, float, float]], boxes: list[BBox], horizontal: bool, slack: float
) -> list[tuple[float, float, float]]:
    """``runs`` (``(at, a, b)``: ``(y, x0, x1)`` when ``horizontal``, else ``(x, y0, y1)``)
    with every two in line (``at`` within 2 px) joined where the gap between them lies under
    one text box of ``boxes`` (its ends within ``slack`` of the box's sides, the line running
    through the box): the glyphs of a label written on the line hide that part of it.

    >>> _joined_under_text([(50.0, 0.0, 100.0), (51.0, 140.0, 300.0)], [(98, 40, 142, 60)], True, 6.0)
    [(50.5, 0.0, 300.0)]
    >>> _joined_under_text([(50.0, 0.0, 100.0), (51.0, 140.0, 300.0)], [(98, 60, 142, 80)], True, 6.0)
    [(50.0, 0.0, 100.0), (51.0, 140.0, 300.0)]
    """
    out: list[tuple[float, float, float]] = []
    for r in sorted(runs, key=lambda r: (r[1], r[0])):
        for k, q in enumerate(out):
            if abs(q[0] - r[0]) > 2 or not q[2] < r[1]:
                continue
            for bx0, by0, bx1, by1 in boxes:
                lo, hi, c0, c1 = (bx0, bx1, by0, by1) if horizontal else (by0, by1, bx0, bx1)
                if c0 - 2 <= r[0] <= c1 + 2 and lo - slack <= q[2] and r[1] <= hi + slack:
                    out[k] = ((q[0] + r[0]) / 2, q[1], max(q[2], r[2]))
                    break
            else:
                continue
            break
        else:
            out.append(r)
    return out


def _cut_by(box: BBox, runs: list[tuple[float, float, float]], margin: float) -> bool:
    """Whether a frame's side runs through ``box``: a run (``(y, x0, x1)`` for the top and
    bottom, ``(x, y0, y1)`` for the sides, in that order per frame of 4) lying more than
    ``margin`` px inside the box and reaching past both its ends (a frame nested inside a
    container's region lies within it, and does not cut it).

    >>> _cut_by((0, 0, 100, 60), [(30.0, -50.0, 200.0), (40.0, 0.0, 1.0), (-5.0, 0.0, 90.0), (99.0, 0.0, 90.0)], 4)
    True
    >>> _cut_by((0, 0, 100, 60), [(30.0, 10.0, 90.0), (50.0, 10.0, 90.0), (10.0, 30.0, 50.0), (90.0, 30.0, 50.0)], 4)
    False
    """
    x0, y0, x1, y1 = box
    for k, (at, a, b) in enumerate(runs):
        lo, hi, s0, s1 = (y0, y1, x0, x1) if k % 4 < 2 else (x0, x1, y0, y1)
        if lo + margin < at < hi - margin and a <= s0 + margin and b >= s1 - margin:
            return True
    return False


def _panel_piece(sh: Shape, frame: BBox, fill: tuple[int, ...], tol: float, m: float) -> bool:
    """Whether ``sh`` is a piece of the panel ``frame`` (filled ``fill``) that connectors cut
    apart: an irregular region (:data:`IRREGULAR`) of the frame's fill (within ``tol``) lying
    inside the frame (``m`` px slack), along at least two of its sides, and covering less than
    :data:`PIECE_MAX_AREA` of it (a region filling its frame is the frame's own inside).

    >>> frame = (0.0, 0.0, 400.0, 300.0)
    >>> piece = Shape(0, "polygon", (2.0, 2.0, 398.0, 200.0), (), (240, 250, 235), 0.8, 60000.0)
    >>> _panel_piece(piece, frame, (241, 249, 236), 14.0, 6.0)
    True
    >>> box = Shape(1, "rect", (2.0, 2.0, 398.0, 200.0), (), (240, 250, 235), 0.9, 79000.0)
    >>> inner = Shape(2, "polygon", (50.0, 50.0, 150.0, 150.0), (), (240, 250, 235), 0.8, 9000.0)
    >>> _panel_piece(box, frame, (241, 249, 236), 14.0, 6.0), _panel_piece(inner, frame, (241, 249, 236), 14.0, 6.0)
    (False, False)
    """
    if sh.kind not in IRREGULAR or not _same_color(sh.fill, fill, tol):
        return False
    x0, y0, x1, y1 = sh.bbox
    fx0, fy0, fx1, fy1 = frame
    if x0 < fx0 - m or y0 < fy0 - m or x1 > fx1 + m or y1 > fy1 + m:
        return False
    along = sum(abs(a - b) <= m for a, b in ((x0, fx0), (y0, fy0), (x1, fx1), (y1, fy1)))
    return along >= 2 and sh.area < PIECE_MAX_AREA * _box_area(frame)


class FrameSteps:
    """Mixin of :class:`~sciflow.agents.shape_hunter.opencv.OpenCVShapes` (its parameters)."""

    frame_len: float
    frame_dash_gap: float

    def _add_blobs(
        self, shapes: list[Shape], image: np.ndarray, bg: np.ndarray, text_lines: list[TextBox]
    ) -> list[Shape]:
        """Pictures and solid blobs (step 9): ink (difference from the background > 40)
        closed with a ``0.3 th`` kernel and opened with a ``0.8 th`` kernel (strokes and text
        vanish, photos and icons stay); components of at least ``(2 th)^2`` px that overlap
        no shape already found (IoU <= 0.5, not inside one) and are less than 30 % covered by
        OCR line boxes (else highlighted text) become ``image`` shapes. A photograph
        (:func:`~sciflow.agents.shape_hunter.ink.colour_concentration` under
        ``PHOTO_CONCENTRATION``) replaces the shapes overlapping it that lie inside it: regions
        of its shading read as boxes."""
        th = float(np.median([t.height for t in text_lines])) if text_lines else 16.0
        ink = ink_mask(image, bg, 40)
        kc = max(3, int(0.3 * th) | 1)
        ko = max(5, int(0.8 * th) | 1)
        m = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((kc, kc), np.uint8))
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((ko, ko), np.uint8))
        n, lab, st, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
        out = list(shapes)
        for i in range(1, n):
            x, y, w, h, area = (int(v) for v in st[i])
            if area < (2 * th) ** 2:
                continue
            box = (float(x), float(y), float(x + w), float(y + h))
            clash = [sh for sh in out if _iou(box, sh.bbox) > 0.5 or _inside_frac(box, sh.bbox) > 0.8]
            if clash:
                if not all(_inside_frac(sh.bbox, box) > 0.8 for sh in clash):
                    continue
                pix = image[y : y + h, x : x + w][lab[y : y + h, x : x + w] == i]
                if colour_concentration(pix) >= PHOTO_CONCENTRATION:
                    continue
            covered = np.zeros((h, w), bool)
            for t in text_lines:
                tx0, ty0 = max(int(t.bbox[0]) - x, 0), max(int(t.bbox[1]) - y, 0)
                tx1, ty1 = min(int(np.ceil(t.bbox[2])) - x, w), min(int(np.ceil(t.bbox[3])) - y, h)
                if tx1 > tx0 and ty1 > ty0:
                    covered[ty0:ty1, tx0:tx1] = True
            if covered.mean() >= 0.3:  # highlighted or dense text, not a picture
                continue
            fill = tuple(int(v) for v in np.median(image[y : y + h, x : x + w].reshape(-1, 3), axis=0))
            poly = ((box[0], box[1]), (box[2], box[1]), (box[2], box[3]), (box[0], box[3]))
            out = [sh for sh in out if all(sh is not c for c in clash)]
            out.append(Shape(-1, "image", box, poly, fill, 0.7, float(w * h)))  # type: ignore[arg-type]
        return [sh if sh.id == k else replace(sh, id=k) for k, sh in enumerate(out)]

    # -- rectangular frames (containers) -----------------------------------------
    def _add_frames(
        self, shapes: list[Shape], image: np.ndarray, bg: np.ndarray, text_lines: list[TextBox]
    ) -> list[Shape]:
        """Rectangles assembled from long straight ink segments (step 8): containers whose
        interior is cut by connectors are not one region, but their outline is intact."""
        th = float(np.median([t.height for t in text_lines])) if text_lines else 16.0
        L = int(max(40, self.frame_len * th))
        ink = ink_mask(image, bg, 40)
        # glyphs in a row are no frame side; the dashes of a side running through a title
        # box's margin are kept
        ink = without_glyphs(ink, text_lines, inset=0.2)
        # a dashed or dotted frame side is a straight run once the gaps between its dashes
        # (under a text height) are closed along the run's own direction; the solid straight
        # runs take no part in the closing, so solid lines side by side stay apart
        g = max(3, int(round(self.frame_dash_gap * th)) | 1)
        solid_h = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, L), np.uint8))
        solid_v = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((L, 1), np.uint8))
        rest = np.where((solid_h | solid_v) > 0, 0, ink).astype(np.uint8)
        closed_h = solid_h | cv2.morphologyEx(rest, cv2.MORPH_CLOSE, np.ones((1, g), np.uint8))
        closed_v = solid_v | cv2.morphologyEx(rest, cv2.MORPH_CLOSE, np.ones((g, 1), np.uint8))
        hor = cv2.morphologyEx(closed_h, cv2.MORPH_OPEN, np.ones((1, L), np.uint8))
        ver = cv2.morphologyEx(closed_v, cv2.MORPH_OPEN, np.ones((L, 1), np.uint8))

        # a side is a line, not a bar: at most ``FRAME_SIDE_MAX`` text heights (8 px at least)
        # thick, so a figure drawn large keeps its frames
        thick = max(8.0, FRAME_SIDE_MAX * th)

        def segs(m: np.ndarray, horizontal: bool) -> list[tuple[float, float, float]]:
            n, _, st, _ = cv2.connectedComponentsWithStats(m, connectivity=8)
            out = []
            for i in range(1, n):
                x, y, w, h, _a = (int(v) for v in st[i])
                if horizontal and h <= thick:
                    out.append((y + h / 2, float(x), float(x + w)))
                elif not horizontal and w <= thick:
                    out.append((x + w / 2, float(y), float(y + h)))
            return out

        # a found box's own outline is never a frame side: two boxes stacked with their sides
        # in line would otherwise frame the gap between them. An irregular region is no box: its
        # outline runs along a panel's border where connectors cut the panel into pieces
        boxes_found = [s for s in shapes if s.kind not in IRREGULAR]
        H = [r for r in segs(hor, True) if not _on_outline(r, True, boxes_found)]
        V = [r for r in segs(ver, False) if not _on_outline(r, False, boxes_found)]
        # a label set on a frame's side (an edge label where its arrow crosses) hides the side
        boxes = [t.bbox for t in text_lines]
        H = _joined_under_text(H, boxes, True, g)
        V = _joined_under_text(V, boxes, False, g)
        tol = max(6.0, 0.8 * th)
        # a rounded corner starts the top and bottom runs up to its radius inside the sides
        corner = th
        frames: list[tuple[float, float, float, float, int, float]] = []
        for yt, tx0_, tx1_ in H:
            for yb, bx0_, bx1_ in H:
                if yb <= yt + L / 2:
                    continue
                span = _common_span((tx0_, tx1_), (bx0_, bx1_), tol + corner)
                if span is None:
                    continue
                (tx0, tx1), (bx0, bx1) = span
                x0, x1 = min(tx0, bx0), max(tx1, bx1)
                left = [
                    v
                    for v in V
                    if x0 - tol - corner <= v[0] <= x0 + tol
                    and v[1] >= yt - g
                    and v[2] <= yb + g
                    and v[2] - v[1] >= 0.6 * (yb - yt) - 2 * tol
                ]
                right = [
                    v
                    for v in V
                    if x1 - tol <= v[0] <= x1 + tol + corner
                    and v[1] >= yt - g
                    and v[2] <= yb + g
                    and v[2] - v[1] >= 0.6 * (yb - yt) - 2 * tol
                ]
                # a side whose top end lies nearer another top run's end than this frame's
                # corner is the side of the frame next door
                # and one ending more than a corner's radius above the bottom, nearer another
                # line's end than the bottom corner, is a box's stacked above another
                left = [v for v in left if _own_corner(v, (tx0, yt), H)
                        and (yb - v[2] <= corner or _own_corner(v, (bx0, yb), H, True))]
                right = [v for v in right if _own_corner(v, (tx1, yt), H)
                         and (yb - v[2] <= corner or _own_corner(v, (bx1, yb), H, True))]
                if left and right:
                    # each side is the run whose ends best meet the corners: a rounded frame's
                    # side runs from yt + r to yb - r, r being how far inside the sides the top
                    # and bottom start (a neighbouring frame's side or a box's outline nearby
                    # ends elsewhere)
                    lv = min(left, key=lambda v: (_side_error(v, x0 - v[0], yt, yb), v))
                    rv = min(right, key=lambda v: (_side_error(v, v[0] - x1, yt, yb), v))
                    lx, rx = lv[0], rv[0]
                    if span != ((tx0_, tx1_), (bx0_, bx1_)) and not all(
                        _side_meets(v, V, yt, yb, tol + corner) for v in (lv, rv)
                    ):
                        continue  # a run cut back must be met by both sides at both its corners
                    err = _side_error(lv, x0 - lx, yt, yb) + _side_error(rv, rx - x1, yt, yb)
                    r = max(0.0, min(x0 - lx, rx - x1, 0.5 * (yb - yt)))
                    runs = ((yt, tx0, tx1), (yb, bx0, bx1), lv, rv)
                    frames.append((lx - 1, yt - 1, rx + 2, yb + 2, round(r), err, runs))
        out = list(shapes)
        m = max(6.0, 0.4 * th)
        # each box once, with the (side error, corner radius) of its reading whose sides best
        # meet its corners
        best: dict[BBox, tuple[float, int]] = {}
        sides: dict[BBox, tuple[tuple[float, float, float], ...]] = {}
        for f in sorted(frames, key=lambda f: (f[5], f[:6])):
            best.setdefault(f[:4], (f[5], f[4]))
            sides.setdefault(f[:4], f[6])
        kept: list[BBox] = []
        pieces: set[int] = set()
        for fb in sorted(best):
            x0, y0, x1, y1 = (int(round(v)) for v in fb)
            inner = image[y0 + 4 : y1 - 4, x0 + 4 : x1 - 4]
            if inner.size == 0:
                continue
            fill = tuple(int(v) for v in np.median(inner.reshape(-1, 3), axis=0))
            r = best[fb][1]
            poly = rounded_rect(fb, r)
            # irregular regions of the frame's fill that share its outline are the pieces
            # connectors cut the panel into: the frame replaces them
            cut = [i for i, s in enumerate(out) if _panel_piece(s, fb, fill, self.color_tol, m)]
            if any(
                i not in cut
                and (
                _iou(fb, s.bbox) > 0.8
                or (
                    s.bbox[0] - fb[0] <= m
                    and s.bbox[1] - fb[1] <= m
                    and fb[2] - s.bbox[2] <= m
                    and fb[3] - s.bbox[3] <= m
                    and _inside_frac(s.bbox, fb) > 0.95
                )
                )
                for i, s in enumerate(out)
            ):
                continue  # the outline of a shape already found (thick borders)
            # near-duplicates (IoU > 0.8): the one whose sides best meet its corners is kept (a
            # frame closed by the outline of a box inside it, or reaching a neighbour's side,
            # does not); ties go to the larger
            if any(
                _iou(fb, f) > 0.8 and (best[f][0], -_box_area(f), f) < (best[fb][0], -_box_area(fb), fb)
                for f in best
                if f != fb
            ):
                continue
            pieces.update(id(out[i]) for i in cut)
            kind = "rect" if r < 3 else "rounded"
            out.append(Shape(len(out), kind, fb, poly, fill, 0.8, _box_area(fb), None, 1.0))  # type: ignore[arg-type]
            kept.append(fb)
        # a container's border never runs through a drawn shape: a region of the paper's
        # colour that it cuts is paper closed in by connectors around the container's title
        # (its text inside the region); a filled region it seems to cut has merged with
        # something beyond its outline, and stays
        out = [s for s in out if id(s) not in pieces]
        runs = [r for fb in kept for r in sides[fb]]
        paper = {id(s) for s in shapes if s.kind != "image" and _same_color(s.fill, bg, PAPER_TOL)}
        out = [s for s in out if id(s) not in paper or not _cut_by(s.bbox, runs, max(4.0, 0.2 * th))]
        out.sort(key=lambda sh: (sh.bbox[1], sh.bbox[0], sh.bbox[3], sh.bbox[2]))
        out = [
            Shape(i, sh.kind, sh.bbox, sh.polygon, sh.fill, sh.confidence, sh.area, None, sh.stroke)
            for i, sh in enumerate(out)
        ]
        return assign_parents(out)
