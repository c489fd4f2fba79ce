"""Figures drawn large, with thick outlines and connectors (issue 17, cause 1): a panel's
frame is found whatever the thickness of its sides, the connectors that cut its fill into
pieces do not make it an irregular region, its outline band is masked over its whole width,
and only a stroke that really crosses a frame is joined across it."""

from __future__ import annotations

import doctest
import math

import cv2
import numpy as np

from sciflow.agents.diagram import GroundedNode, Shape
from sciflow.agents.shape_hunter import opencv, opencv_frames
from sciflow.agents.shape_hunter.opencv import outline_band
from sciflow.agents.shape_hunter.opencv_frames import _panel_piece
from sciflow.agents.topology_coder import frames, masks
from sciflow.agents.topology_coder.attach import Contact
from sciflow.agents.topology_coder.components import Comp, union_find
from sciflow.agents.topology_coder.frames import _opposite_sides
from sciflow.agents.topology_coder.masks import band_width, outline_reach

from .drawing import Canvas, edges_by_label, font, labels

PANEL_FILL = "#eef7e8"


def _thick_arrow(c: Canvas, pts: list[tuple[int, int]], width: int = 12, head: int = 40) -> None:
    c.d.line(pts, fill="black", width=width, joint="curve")
    (tx, ty), (fx, fy) = pts[-1], pts[-2]
    ang = math.atan2(ty - fy, tx - fx)
    left = (tx - head * math.cos(ang - 0.45), ty - head * math.sin(ang - 0.45))
    right = (tx - head * math.cos(ang + 0.45), ty - head * math.sin(ang + 0.45))
    c.d.polygon([(tx, ty), left, right], fill="black")


def _large_figure() -> Canvas:
    """A text card, a panel with a 9 px outline holding a box and a circle, an output card;
    12 px arrows cross the panel's border into the circle and out of it (the layout of a
    typical method figure, drawn at 2200 px with 48 px type)."""
    c = Canvas(2200, 1100)
    c.d.rounded_rectangle((40, 60, 640, 1040), radius=30, outline="black", width=8, fill="white")
    c.d.text((340, 140), "Prompt", font=font(48), fill="black", anchor="mm")
    c.d.rounded_rectangle((820, 40, 1420, 1060), radius=36, outline="#3f7f2a", width=9, fill=PANEL_FILL)
    c.d.text((900, 100), "Panel", font=font(48), fill="black", anchor="lm")
    c.d.rounded_rectangle((880, 180, 1240, 330), radius=24, outline="#3f7f2a", width=6, fill="#c9eabc")
    c.d.text((1060, 255), "Budget", font=font(44), fill="black", anchor="mm")
    c.d.ellipse((960, 480, 1240, 760), outline="#3f7f2a", width=6, fill="#6a9a6c")
    c.d.text((1100, 620), "Model", font=font(48), fill="white", anchor="mm")
    c.d.rounded_rectangle((1600, 560, 2140, 1040), radius=30, outline="#c0562a", width=8, fill="#fdeee6")
    c.d.text((1870, 640), "Output", font=font(48), fill="black", anchor="mm")
    _thick_arrow(c, [(644, 300), (740, 300), (1000, 520)])
    _thick_arrow(c, [(1200, 730), (1330, 900), (1596, 900)])
    return c


def test_thick_arrows_crossing_a_thick_panel_border_join_the_nodes_inside_and_out(parser):
    r = parser(_large_figure().array())
    g = r.graph
    # the panel is a group (no arrow ends on it), its title no node
    assert labels(g) == {"prompt", "budget", "model", "output"}
    assert edges_by_label(g) == {("prompt", "model"), ("model", "output")}
    # the panel is one shape with its whole outline, not a piece its arrows cut off
    panels = [s for s in r.evidence["shape_hunter"]["shapes"] if 500 < s[2][2] - s[2][0] < 700 and s[2][1] < 60]
    boxes = sorted(tuple(round(v) for v in s[2]) for s in panels)
    assert any(abs(b[0] - 820) <= 6 and abs(b[1] - 40) <= 6 and abs(b[2] - 1420) <= 6 and abs(b[3] - 1060) <= 6
               for b in boxes), boxes


def test_two_arrows_ending_side_by_side_on_a_frame_are_two_edges(parser):
    """A request and its answer between a box and a titled container: both end on the
    container's left side 30 px apart, on the same side of it; neither crosses it. The
    container is a node, and the boxes inside it, which no arrow touches one by one, are its
    content (the annotation protocol; they were kept as nodes before the fourteenth round)."""
    c = Canvas(900, 420)
    c.box("Fetcher", 40, 150, w=180, h=90)
    c.d.rectangle((420, 40, 860, 380), outline="black", width=3)
    c.d.text((640, 75), "Executor", font=font(22), fill="black", anchor="mm")
    c.box("Tool", 500, 140, w=120)
    c.box("Memory", 660, 260, w=120)
    c.arrow([(220, 175), (419, 175)])
    c.arrow([(419, 205), (220, 205)])
    g = parser(c.array()).graph
    assert labels(g) == {"fetcher", "executor"}
    assert edges_by_label(g) == {("fetcher", "executor"), ("executor", "fetcher")}


def test_outline_reach_is_how_far_the_drawn_outline_lies_from_the_polygon_whatever_crosses_it():
    ink = np.zeros((200, 300), np.uint8)
    ink[20:29, 20:280] = 1
    ink[171:180, 20:280] = 1
    ink[20:180, 20:29] = 1
    ink[20:180, 271:280] = 1                     # a frame 9 px thick
    ink[90:102, 0:150] = 1                       # a 12 px connector crossing its left side
    centre = ((24.0, 24.0), (275.0, 24.0), (275.0, 175.0), (24.0, 175.0))
    outer = ((20.0, 20.0), (279.0, 20.0), (279.0, 179.0), (20.0, 179.0))
    assert outline_reach(ink, centre, 12) == (9.0, 4.0)
    assert outline_reach(ink, outer, 12) == (9.0, 8.0)
    # the band covers the whole outline on either side of the polygon
    assert band_width((9.0, 4.0), 1) == 11 and band_width((9.0, 8.0), 1) == 19
    # a hairline keeps the band of the thin-line days, wherever the polygon runs beside it
    assert band_width((1.0, 3.0), 1) == 5 and band_width((2.0, 2.0), 1) == 5
    # a panel told by its fill alone has no outline to measure
    assert outline_reach(np.zeros_like(ink), centre, 12) == (0.0, 0.0)


def test_a_crossing_needs_one_piece_inside_and_one_outside():
    frame = ((100.0, 100.0), (300.0, 100.0), (300.0, 300.0), (100.0, 300.0))
    out_left = Contact(0, 0, 96.0, 150.0, out_dir=(-1.0, 0.0))
    in_right = Contact(1, 0, 104.0, 152.0, out_dir=(0.8, 0.6))
    beside = Contact(2, 0, 96.0, 180.0, out_dir=(-1.0, 0.05))
    assert _opposite_sides(out_left, in_right, frame, 20.0)
    assert not _opposite_sides(out_left, beside, frame, 20.0)
    # a shallow crossing: the inner piece runs into the frame only slowly
    shallow_in = Contact(3, 0, 102.0, 150.0, out_dir=(math.sin(math.radians(10)), -math.cos(math.radians(10))))
    shallow_out = Contact(4, 0, 98.0, 170.0, out_dir=(-math.sin(math.radians(10)), math.cos(math.radians(10))))
    assert _opposite_sides(shallow_in, shallow_out, frame, 20.0)
    # a piece whose direction is unknown does not object
    assert _opposite_sides(out_left, Contact(5, 0, 96.0, 160.0), frame, 20.0)
    # nor does a stroke grazing a corner, where the nearest side changes under it
    graze_a = Contact(6, 0, 97.0, 108.0, out_dir=(-0.56, -0.83))
    graze_b = Contact(7, 0, 105.0, 112.0, out_dir=(0.93, -0.36))
    assert _opposite_sides(graze_a, graze_b, frame, 20.0)


def test_panel_pieces_are_irregular_regions_of_the_panels_fill_along_its_sides():
    frame = (0.0, 0.0, 600.0, 1000.0)
    fill = (238, 247, 232)
    upper = Shape(0, "polygon", (3.0, 2.0, 598.0, 700.0), (), (239, 247, 233), 0.8, 300000.0)
    lower = Shape(1, "polygon", (3.0, 600.0, 400.0, 998.0), (), (238, 246, 232), 0.8, 120000.0)
    assert _panel_piece(upper, frame, fill, 14.0, 6.0) and _panel_piece(lower, frame, fill, 14.0, 6.0)
    # a box of the panel's fill is a node, a region of another fill something else
    box = Shape(2, "rounded", (3.0, 2.0, 598.0, 700.0), (), fill, 0.9, 400000.0)
    other = Shape(3, "polygon", (3.0, 2.0, 598.0, 700.0), (), (200, 230, 250), 0.8, 300000.0)
    assert not _panel_piece(box, frame, fill, 14.0, 6.0) and not _panel_piece(other, frame, fill, 14.0, 6.0)
    # a region filling its whole frame is the frame's own inside; one touching a single
    # side is something inside the panel
    whole = Shape(4, "polygon", (3.0, 2.0, 598.0, 998.0), (), fill, 0.8, 590000.0)
    inner = Shape(5, "polygon", (3.0, 300.0, 200.0, 500.0), (), fill, 0.8, 30000.0)
    assert not _panel_piece(whole, frame, fill, 14.0, 6.0) and not _panel_piece(inner, frame, fill, 14.0, 6.0)


def test_outline_band_is_thin_nearly_everywhere_even_with_a_thick_arrow_drawn_on():
    ring = np.zeros((120, 160), np.uint8)
    ring[10:116, 10:150] = 1
    ring[14:112, 14:146] = 0                     # the band inside an outline, 4 px wide
    spur = ring.copy()
    spur[50:62, 146:160] = 1                     # a thick arrow's core drawn on from it
    assert outline_band(ring) and outline_band(spur)
    panel = np.zeros((120, 160), np.uint8)
    panel[10:116, 10:150] = 1
    panel[40:80, 40:120] = 0                     # a panel's fill around a box
    assert not outline_band(panel)


def test_the_worked_examples_of_the_touched_steps_hold():
    for mod in (opencv, opencv_frames, frames, masks):
        assert doctest.testmod(mod).failed == 0, mod.__name__


def test_pieces_running_along_the_outline_do_not_object_to_a_crossing():
    frame = ((100.0, 100.0), (300.0, 100.0), (300.0, 300.0), (100.0, 300.0))
    # a stroke crossing the top at 12 degrees: both pieces nearly parallel to the outline,
    # their measured directions no evidence of a side
    a = Contact(0, 0, 150.0, 98.0, out_dir=(-0.98, -0.2))
    b = Contact(1, 0, 170.0, 102.0, out_dir=(-0.98, -0.2))
    assert _opposite_sides(a, b, frame, 20.0)


def _piece(idx: int, x0: int, y0: int, x1: int, y1: int) -> Comp:
    """A straight 3 px stroke from ``(x0, y0)`` to ``(x1, y1)`` as an ink component."""
    bx, by = min(x0, x1) - 2, min(y0, y1) - 2
    mask = np.zeros((abs(y1 - y0) + 5, abs(x1 - x0) + 5), np.uint8)
    cv2.line(mask, (x0 - bx, y0 - by), (x1 - bx, y1 - by), 1, 3)
    return Comp(idx, bx, by, mask.astype(bool))


def _frame_node(nid: str, box: tuple[float, float, float, float]) -> GroundedNode:
    x0, y0, x1, y1 = box
    return GroundedNode(nid, nid, box, "container", 0.8, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))


def test_a_stroke_crossing_two_frames_side_by_side_is_one_connector():
    """Two clusters stacked 8 px apart: the line from a box in the upper one to a box in the
    lower one loses one stretch to both outline bands; its two pieces continue each other."""
    upper, lower = _frame_node("g0", (60, 30, 560, 220)), _frame_node("g1", (60, 228, 560, 420))
    comps = {0: _piece(0, 200, 160, 274, 217), 1: _piece(1, 295, 233, 400, 314)}
    contacts = [Contact(0, 0, 274.0, 217.0), Contact(1, 1, 295.0, 233.0)]
    parent, find = union_find(comps)
    bridges: list[tuple[float, float, float, float]] = []
    left = frames.bridge_containers(contacts, [upper, lower], {0: 9, 1: 9}, 8.0, find, parent, bridges, comps,
                                   18.0, 0.9)
    assert left == [] and find(0) == find(1) and len(bridges) == 1
    # two arrows ending on facing outlines, side by side, are no such stroke
    comps = {0: _piece(0, 200, 160, 200, 214), 1: _piece(1, 230, 240, 300, 300)}
    contacts = [Contact(0, 0, 200.0, 214.0), Contact(1, 1, 230.0, 240.0)]
    parent, find = union_find(comps)
    left = frames.bridge_containers(contacts, [upper, lower], {0: 9, 1: 9}, 8.0, find, parent, [], comps, 18.0, 0.9)
    assert len(left) == 2 and find(0) != find(1)
