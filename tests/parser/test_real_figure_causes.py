"""What real figures and external renderers contain that the first parser misread (issue 17),
each on a small drawn diagram with a known answer: dashed and rounded container frames that
arrows cross, edge labels in their own box interrupting the line, and thick box outlines
that looked like arrowheads."""

from __future__ import annotations

import doctest
import importlib
import math

import pytest
from PIL import ImageDraw

from .drawing import Canvas, edges_by_label, font, labels


def dashed_rounded_frame(c: Canvas, box: tuple[int, int, int, int], r: int = 20, dash: int = 10,
                         gap: int = 10, color: str = "#999999") -> None:
    """A dashed rounded rectangle like Graphviz's ``style="dashed,rounded"`` cluster."""
    x0, y0, x1, y1 = box
    d: ImageDraw.ImageDraw = c.d
    # straight sides
    for (ax, ay), (bx, by) in (((x0 + r, y0), (x1 - r, y0)), ((x0 + r, y1), (x1 - r, y1)),
                               ((x0, y0 + r), (x0, y1 - r)), ((x1, y0 + r), (x1, y1 - r))):
        n = math.hypot(bx - ax, by - ay)
        t = 0.0
        while t < n:
            t1 = min(n, t + dash)
            a = (ax + (bx - ax) * t / n, ay + (by - ay) * t / n)
            b = (ax + (bx - ax) * t1 / n, ay + (by - ay) * t1 / n)
            d.line([a, b], fill=color, width=2)
            t += dash + gap
    # one dash on each rounded corner
    for cx, cy, a0 in ((x0 + r, y0 + r, 180), (x1 - r, y0 + r, 270), (x1 - r, y1 - r, 0), (x0 + r, y1 - r, 90)):
        d.arc((cx - r, cy - r, cx + r, cy + r), a0 + 30, a0 + 60, fill=color, width=2)


def test_arrows_crossing_a_dashed_rounded_frame_reach_the_node_inside(parser):
    c = Canvas(760, 300)
    c.box("Input", 30, 125, w=130)
    dashed_rounded_frame(c, (300, 30, 720, 270))
    c.text("OUTPUT", 510, 52, size=16)
    c.box("Head A", 440, 90, w=160)
    c.box("Head B", 440, 190, w=160)
    c.arrow([(160, 140), (440, 115)])
    c.arrow([(160, 160), (440, 215)])
    g = parser(c.array()).graph
    assert labels(g) == {"input", "head a", "head b"}  # the frame is a group, not a node
    assert edges_by_label(g) == {("input", "head a"), ("input", "head b")}
    assert any(grp.label == "OUTPUT" for grp in g.groups)


def test_a_dashed_frame_ending_no_arrow_is_no_connector(parser):
    # every dash of the frame touches nothing but the frame: no edge may come out of it
    c = Canvas(620, 260)
    dashed_rounded_frame(c, (20, 20, 600, 240))
    c.text("Stage", 310, 42, size=16)
    c.box("Encoder", 60, 110, w=150)
    c.box("Decoder", 400, 110, w=150)
    c.arrow([(210, 135), (400, 135)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("encoder", "decoder")}


def label_box(c: Canvas, text: str, cx: int, cy: int, fill: str = "#e8e8e8") -> None:
    """An edge label in its own filled box that interrupts the line (Mermaid's style)."""
    f = font(16)
    x0, y0, x1, y1 = c.d.textbbox((cx, cy), text, font=f, anchor="mm")
    c.d.rectangle((x0 - 3, y0 - 3, x1 + 3, y1 + 3), fill=fill)
    c.d.text((cx, cy), text, font=f, fill="black", anchor="mm")


@pytest.mark.parametrize("route", ["straight", "elbow"])
def test_an_edge_label_in_its_own_box_is_the_arrows_label_not_a_node(parser, route):
    c = Canvas(760, 220)
    c.box("Text Backbone", 30, 40, w=170)
    c.box("KL Divergence", 560, 130, w=170)
    if route == "straight":
        c.line([(200, 65), (250, 65), (250, 155)])
        c.arrow([(250, 155), (560, 155)])
        label_box(c, "weights", 400, 155)
    else:
        # the line bends just before the label: the stroke leaves the label's side upwards
        c.line([(200, 65), (330, 65), (330, 145)])
        c.d.arc((330 - 10, 135, 330 + 20, 165), 90, 180, fill="black", width=2)
        c.arrow([(345, 155), (560, 155)])
        label_box(c, "weights", 372, 155)
    g = parser(c.array()).graph
    assert labels(g) == {"text backbone", "kl divergence"}
    assert edges_by_label(g) == {("text backbone", "kl divergence")}
    assert [e.label for e in g.edges] == ["weights"]


def test_a_small_box_an_arrow_points_into_stays_a_node(parser):
    # the same tight box, but the arrow ends on it with a head: it is a node it feeds
    c = Canvas(700, 160)
    c.box("Encoder", 30, 50, w=150)
    c.arrow([(180, 75), (400, 75)])
    label_box(c, "Loss", 430, 75)
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("encoder", "loss")}


def test_thick_box_outlines_do_not_read_as_a_second_head(parser):
    c = Canvas(640, 180)
    for name, x in (("Local Data", 30), ("Local SGD", 420)):
        c.d.rounded_rectangle((x, 60, x + 180, 120), radius=14, outline="#333333", width=4, fill="#f4f6f8")
        c.d.text((x + 90, 90), name, font=font(), fill="black", anchor="mm")
    c.arrow([(212, 90), (418, 90)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("local data", "local sgd")}


@pytest.mark.parametrize("name", ["sciflow.agents.topology_coder.underpass", "sciflow.agents.topology_coder.heads",
                                  "sciflow.agents.shape_hunter.opencv_frames", "sciflow.agents.text_filters",
                                  "sciflow.agents.overlay", "sciflow.agents.topology_coder.strokes",
                                  "sciflow.agents.topology_coder.attach", "sciflow.agents.topology_coder.frames",
                                  "sciflow.agents.shape_hunter.shapes", "sciflow.agents.topology_coder.masks",
                                  "sciflow.agents.topology_coder.components", "sciflow.agents.grounder",
                                  "sciflow.agents.shape_hunter.operators", "sciflow.agents.topology_coder.dashes",
                                  "sciflow.agents.shape_hunter.ink", "sciflow.agents.topology_coder.reach",
                                  "sciflow.agents.captions"])
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def _comp(mask):
    from sciflow.agents.topology_coder.components import Comp

    return Comp(0, 0, 0, mask.astype(bool), width=1.0, length=float(mask.shape[1]))


def test_compare_ends_puts_the_head_at_the_wide_end_of_a_short_connector():
    import numpy as np

    from sciflow.agents.topology_coder.attach import Contact
    from sciflow.agents.topology_coder.heads import compare_ends

    line = np.zeros((21, 41), np.uint8)
    line[10, :] = 1
    headed = line.copy()
    for k, x in enumerate(range(32, 41)):  # a filled head narrowing to its tip at x = 40
        half = 4 - k // 2
        headed[10 - half : 10 + half + 1, x] = 1
    cts = [Contact(0, 0, 2.0, 10.0), Contact(0, 1, 38.0, 10.0)]
    compare_ends(cts, {0: _comp(headed)}, [0])
    assert [c.head for c in cts] == [False, True]
    # mirrored: the head is at the first contact
    cts = [Contact(0, 0, 2.0, 10.0), Contact(0, 1, 38.0, 10.0)]
    compare_ends(cts, {0: _comp(headed[:, ::-1])}, [0])
    assert [c.head for c in cts] == [True, False]
    # a head longer than half the connector (its wide base past the middle), on a thin shaft
    short = np.zeros((21, 30), np.uint8)
    short[10, :10] = 1
    for k, x in enumerate(range(10, 28)):  # 15 px wide at its base, 1 px at its tip
        half = 7 - (7 * k) // 17
        short[10 - half : 10 + half + 1, x] = 1
    cts = [Contact(0, 0, 0.0, 10.0), Contact(0, 1, 28.0, 10.0)]
    compare_ends(cts, {0: _comp(short)}, [0])
    assert [c.head for c in cts] == [False, True]
    # a connector whose middle third is hidden (under a label's mask) keeps its wide end's head
    gapped = headed.copy()
    gapped[:, 15:26] = 0
    cts = [Contact(0, 0, 2.0, 10.0), Contact(0, 1, 38.0, 10.0)]
    compare_ends(cts, {0: _comp(gapped)}, [0])
    assert [c.head for c in cts] == [False, True]
    # a plain line, and a line with a bar across each end (a bracket), have no head
    bracket = line.copy()
    bracket[6:15, 1:3] = bracket[6:15, 38:40] = 1
    for mask in (line, bracket):
        cts = [Contact(0, 0, 2.0, 10.0), Contact(0, 1, 38.0, 10.0)]
        compare_ends(cts, {0: _comp(mask)}, [0])
        assert [c.head for c in cts] == [False, False]
    # a head narrowing to its tip at each end: a short double-headed arrow, also where the
    # window test found one of its heads
    for found in (False, True):
        cts = [Contact(0, 0, 2.0, 10.0, head=found), Contact(0, 1, 38.0, 10.0)]
        compare_ends(cts, {0: _comp(np.maximum(headed, headed[:, ::-1]))}, [0])
        assert [c.head for c in cts] == [True, True]
    # the legs of a U-shaped connector lie to one side of the line joining its contacts
    u = np.zeros((21, 41), np.uint8)
    u[2:12, 1:3] = u[2:12, 38:40] = 1
    u[10:12, 1:40] = 1
    cts = [Contact(0, 0, 2.0, 2.0), Contact(0, 1, 38.0, 2.0)]
    compare_ends(cts, {0: _comp(u)}, [0])
    assert [c.head for c in cts] == [False, False]


@pytest.mark.parametrize("gap", [26, 34])
def test_a_short_arrow_with_a_small_head_on_the_outline_keeps_its_direction(parser, gap):
    # Mermaid draws a small head whose tip lies on the next box's outline; between close
    # boxes the head window is cut short and most of the head sits under the outline mask
    c = Canvas(520, 140)
    c.d.rectangle((30, 40, 210, 100), outline="#9370db", width=1, fill="#ececff")
    c.d.text((120, 70), "Point Cloud", font=font(), fill="black", anchor="mm")
    x1 = 210 + gap
    c.d.rectangle((x1, 40, x1 + 180, 100), outline="#9370db", width=1, fill="#ececff")
    c.d.text((x1 + 90, 70), "Text Backbone", font=font(), fill="black", anchor="mm")
    c.d.line([(211, 70), (x1 - 6, 70)], fill="#333333", width=1)
    c.d.polygon([(x1, 70), (x1 - 9, 65), (x1 - 9, 75)], fill="#333333")
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("point cloud", "text backbone")}


def test_adjacent_dashed_frames_are_each_found_with_their_own_sides(parser):
    # two dashed frames side by side (a neighbour's side lies within a corner radius), each
    # with a box whose bottom outline runs close to the frame's bottom
    c = Canvas(900, 330)
    dashed_rounded_frame(c, (300, 20, 580, 300))
    dashed_rounded_frame(c, (600, 20, 880, 300))
    c.text("Client 1", 440, 42, size=16)
    c.text("Client 2", 740, 42, size=16)
    c.box("Local SGD 1", 360, 110, w=160)
    c.box("Local Model 1", 360, 236, w=160)
    c.box("Local SGD 2", 660, 110, w=160)
    c.box("Local Model 2", 660, 236, w=160)
    c.box("Sampler", 30, 135, w=140)
    c.arrow([(440, 160), (440, 236)])
    c.arrow([(740, 160), (740, 236)])
    c.arrow([(170, 150), (360, 135)])
    g = parser(c.array()).graph
    assert sorted(grp.label for grp in g.groups) == ["Client 1", "Client 2"]
    assert labels(g) == {"sampler", "local sgd 1", "local model 1", "local sgd 2", "local model 2"}
    assert edges_by_label(g) == {("sampler", "local sgd 1"), ("local sgd 1", "local model 1"),
                                 ("local sgd 2", "local model 2")}
    boxes = {grp.label: grp.bbox for grp in g.groups}
    assert abs(boxes["Client 1"][3] - 300) <= 4 and abs(boxes["Client 2"][0] - 600) <= 4


def test_a_one_letter_label_in_a_tight_box_is_kept_though_an_arrow_touches_it(parser):
    # the filter meant for arrowheads read as letters ("D", "X") must not drop a short label
    # centred in its own outline, even when the arrow's head touches the text's ring
    c = Canvas(520, 200)
    c.box("Encoder", 30, 45, w=150)
    c.d.rectangle((300, 57, 322, 83), outline="black", width=2, fill="white")
    c.d.text((311, 70), "z", font=font(20), fill="black", anchor="mm")
    c.arrow([(180, 70), (300, 70)])
    g = parser(c.array()).graph
    assert "z" in labels(g)
    assert edges_by_label(g) == {("encoder", "z")}


def test_a_short_dashed_frame_around_a_left_to_right_row_is_found(parser):
    # Graphviz's clusters in a left-to-right layout are wide and short: the frame's dashed
    # sides are shorter than three text heights, yet it is a frame the arrows cross
    c = Canvas(1000, 150)
    c.box("Original", 20, 70, w=130)
    dashed_rounded_frame(c, (200, 20, 760, 135), r=16)
    c.text("Pruning", 450, 26, size=14)
    c.box("Train", 230, 70, w=130)
    c.box("Prune", 420, 70, w=130)
    c.box("Retrain", 600, 70, w=130)
    c.box("Compressed", 820, 70, w=150)
    c.arrow([(150, 95), (230, 95)])
    c.arrow([(360, 95), (420, 95)])
    c.arrow([(550, 95), (600, 95)])
    c.arrow([(730, 95), (820, 95)])
    g = parser(c.array()).graph
    assert [grp.label for grp in g.groups] == ["Pruning"]
    assert labels(g) == {"original", "train", "prune", "retrain", "compressed"}
    assert edges_by_label(g) == {("original", "train"), ("train", "prune"), ("prune", "retrain"),
                                 ("retrain", "compressed")}


def test_two_stacked_boxes_with_sides_in_line_frame_nothing(parser):
    # the top of one box, the bottom of the box under it and their sides in line are no frame
    c = Canvas(420, 330)
    c.box("Local Data", 130, 30, w=160)
    c.box("Local SGD", 130, 140, w=160)
    c.box("Local Model", 130, 250, w=160)
    c.arrow([(210, 80), (210, 140)])
    c.arrow([(210, 190), (210, 250)])
    g = parser(c.array()).graph
    assert not g.groups
    assert edges_by_label(g) == {("local data", "local sgd"), ("local sgd", "local model")}


def test_paper_closed_in_by_crossing_arrows_across_a_frame_is_no_box(parser):
    # two arrows crossing above a container close in a patch of paper with the container's
    # top and the box they reach; the container's dashed top runs through the patch, and
    # a drawn box is never cut by a container's border: the patch (holding the title) is
    # no node, and the title names the container
    c = Canvas(760, 420)
    c.box("Sensor", 200, 30, w=150)
    c.box("Clock", 410, 30, w=150)
    dashed_rounded_frame(c, (40, 180, 720, 390))
    c.text("Bank", 380, 204, size=16)
    c.box("Comparator", 230, 290, w=300, h=60)
    c.arrow([(300, 80), (500, 290)])
    c.arrow([(460, 80), (260, 290)])
    g = parser(c.array()).graph
    assert [grp.label for grp in g.groups] == ["Bank"]
    assert {n.label for n in g.nodes if n.kind not in ("text", "container")} == {"Sensor", "Clock", "Comparator"}
    assert {("sensor", "comparator"), ("clock", "comparator")} <= edges_by_label(g)


@pytest.mark.parametrize("out_y", [250, 215])
def test_an_arrow_leaving_a_frame_at_a_shallow_angle_keeps_its_source(parser, out_y):
    # crossing the frame's bottom at 14 (or 11) degrees, the masked stretch of the line is
    # several times the band width: the two pieces still continue each other
    c = Canvas(1000, 330)
    dashed_rounded_frame(c, (20, 20, 560, 200))
    c.text("Second Stage", 290, 42, size=16)
    c.box("Load", 60, 80, w=150)
    c.box("Output", 800, out_y, w=150)
    c.arrow([(210, 125), (800, out_y + 25)])
    g = parser(c.array()).graph
    assert [grp.label for grp in g.groups] == ["Second Stage"]
    assert labels(g) == {"load", "output"}
    assert edges_by_label(g) == {("load", "output")}


def test_a_text_or_frame_touched_where_the_stroke_reaches_a_box_is_no_second_end():
    # an arrow whose tip reaches a box just past a container's border (or just under its
    # title) touches both: one end, on the box
    from sciflow.agents.diagram import GroundedNode
    from sciflow.agents.topology_coder.attach import Contact, shapes_win

    def node(i, kind, box):
        x0, y0, x1, y1 = box
        return GroundedNode(i, i, box, kind, 1.0, ((x0, y0), (x1, y0), (x1, y1), (x0, y1)))

    targets = [node("box", "rounded", (100, 100, 200, 140)), node("title", "text", (90, 80, 210, 98)),
               node("frame", "container", (50, 60, 400, 300)), node("src", "rect", (300, 0, 380, 40))]
    tip = Contact(0, 0, 150.0, 100.0, head=True)
    on_title, on_frame = Contact(0, 1, 146.0, 98.0), Contact(0, 2, 152.0, 96.0)
    tail = Contact(0, 3, 320.0, 40.0)
    th = 20.0
    assert shapes_win([tip, on_frame], targets, th, 0.9) == [tip]
    assert shapes_win([tip, on_frame, tail], targets, th, 0.9) == [tip, tail]
    assert shapes_win([tip, on_title, tail], targets, th, 0.9) == [tip, tail]
    # on two contacts, a text that close is the tail of a short arrow into the box, unless
    # it is the container's title
    assert shapes_win([tip, on_title], targets, th, 0.9) == [tip, on_title]
    import dataclasses

    titled = [targets[0], dataclasses.replace(targets[1], text_ids=(5,)),
              dataclasses.replace(targets[2], label="Stage", text_ids=(5,)), targets[3]]
    assert shapes_win([tip, on_title], titled, th, 0.9) == [tip]
    far = Contact(0, 1, 150.0, 60.0)  # 40 px (2 th) away: another end of the stroke
    assert shapes_win([tip, far], targets, th, 0.9) == [tip, far]


@pytest.mark.parametrize("dy", [-2, 2])
def test_an_arrow_grazing_a_boxs_corner_passes_it_by(parser, dy):
    # the arrow from Router to FFN 1 runs over FFN 2's top-left corner: the node mask cuts it
    # in two, and both pieces touch FFN 2, yet it is one stroke passing by
    c = Canvas(560, 300)
    c.box("Router", 380, 20, w=150)
    c.box("FFN 1", 20, 200, w=150)
    c.box("FFN 2", 230, 166 + dy, w=110)
    c.arrow([(400, 70), (170, 200)])
    c.arrow([(470, 70), (300, 166 + dy)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("router", "ffn 1"), ("router", "ffn 2")}


def test_a_line_through_a_small_operator_in_line_is_no_graze(parser):
    # two arrows in one line through an adder: the stroke passes through the node's middle,
    # so it ends there and starts again
    c = Canvas(620, 160)
    c.box("Left", 20, 55, w=140)
    c.box("Right", 460, 55, w=140)
    c.d.ellipse((290, 60, 330, 100), outline="black", width=2)
    c.d.line((310, 64, 310, 96), fill="black", width=2)
    c.d.line((294, 80, 326, 80), fill="black", width=2)
    c.arrow([(160, 80), (290, 80)])
    c.arrow([(330, 80), (460, 80)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("left", "⊕"), ("⊕", "right")}


def test_a_head_seen_on_the_stroke_beats_one_inferred_under_an_outline():
    from sciflow.agents.topology_coder.attach import Contact
    from sciflow.agents.topology_coder.strokes import visible_over_hidden

    seen, inferred = Contact(0, 0, 0.0, 0.0, head=True), Contact(0, 1, 90.0, 0.0, head=True)
    visible_over_hidden([seen, inferred], [inferred])
    assert (seen.head, inferred.head) == (True, False)
    both_seen = [Contact(0, 0, 0.0, 0.0, head=True), Contact(0, 1, 90.0, 0.0, head=True)]
    visible_over_hidden(both_seen, [])
    assert [c.head for c in both_seen] == [True, True]  # a double-headed arrow stays


@pytest.mark.parametrize("dy", [4, 8])
def test_a_label_written_beside_a_dashed_arrow_is_its_label_not_an_end(parser, dy):
    # the dash under the label lies within the contact radius of its text: the dashed line
    # runs on past it on both sides, so the label is no second end of the connector
    c = Canvas(700, 200)
    c.box("Policy", 30, 110, w=150)
    c.box("Old Policy", 500, 110, w=170)
    c.arrow([(180, 135), (500, 135)], dashed=True)
    f = font(16)
    x0, y0, x1, y1 = c.d.textbbox((340, 0), "copy", font=f, anchor="mt")
    c.d.text((340, 135 - dy - (y1 - y0)), "copy", font=f, fill="black", anchor="mt")
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("policy", "old policy")}


def test_a_head_landing_beside_another_arrows_tail_is_no_evidence_for_that_tail():
    # a box's left side at x = 100 receives a filled head at y = 60 and, 20 px lower, sends
    # a plain line out to the left: the solid ink under the outline near the line's end is
    # the other arrow's head, a blob of its own (nas_rl drawn by Graphviz with its labels)
    import cv2
    import numpy as np

    from sciflow.agents.topology_coder.heads import _solid_area

    raw = np.zeros((160, 220), np.uint8)
    cv2.rectangle(raw, (100, 20), (200, 140), 1, 2)  # the box outline
    cv2.fillPoly(raw, [np.array([[102, 60], [84, 52], [84, 68]], np.int32)], 1)  # the other head
    cv2.line(raw, (20, 80), (99, 80), 1, 2)  # this end: a plain tail
    box = ((100.0, 20.0), (200.0, 20.0), (200.0, 140.0), (100.0, 140.0))
    assert _solid_area(raw, box, 99.0, 80.0, 28.0, 2.0, 4) > 0  # the window holds the other head
    assert _solid_area(raw, box, 99.0, 80.0, 28.0, 2.0, 4, own=True) == 0
    cv2.fillPoly(raw, [np.array([[102, 80], [84, 72], [84, 88]], np.int32)], 1)  # now a head here too
    assert _solid_area(raw, box, 99.0, 80.0, 28.0, 2.0, 4, own=True) > 0


@pytest.mark.parametrize("dy", [0, 2, 4])
def test_a_label_set_on_a_short_line_is_its_label(parser, dy):
    # the label's box covers the line under it (Graphviz sets a short edge's label right on
    # it): the line crossing the whole box stays connector ink, and the label is no end
    c = Canvas(560, 200)
    c.box("Encoder", 30, 110, w=150)
    c.box("Decoder", 330, 110, w=150)
    c.arrow([(180, 135), (330, 135)])
    c.d.text((255, 135 + dy), "max pool", font=font(16), fill="black", anchor="ms")
    g = parser(c.array()).graph
    assert labels(g) == {"encoder", "decoder"}
    assert edges_by_label(g) == {("encoder", "decoder")}


@pytest.mark.parametrize("label", ["results", "feedback"])
def test_paper_closed_in_by_a_loop_of_arrows_is_no_box(parser, label):
    # an arc back from "Executor" to "Planner" and the straight arrow under it close in a patch
    # of paper whose only text is the straight arrow's label, set against its rim
    c = Canvas(760, 320)
    c.box("Planner", 30, 200, w=170)
    c.box("Executor", 560, 200, w=170)
    c.arrow([(200, 225), (560, 225)])
    arc = [(645 - 530 * t, 200 - 160 * math.sin(math.pi * t)) for t in (i / 40 for i in range(1, 40))]
    c.arrow([(645, 200), *arc, (115, 200)])
    c.d.text((380, 221), label, font=font(16), fill="black", anchor="ms")
    g = parser(c.array()).graph
    assert labels(g) == {"planner", "executor"}
    assert edges_by_label(g) == {("planner", "executor"), ("executor", "planner")}


def parse_reference_drawing(parser, tmp_path, name: str):
    """The packaged reference ``name`` drawn as `sciflow generate graphviz` draws it, parsed."""
    from pathlib import Path

    from sciflow.bench.drawing import render_graph
    from sciflow.format.graph import load_graph

    refs = Path(__file__).resolve().parents[2] / "sciflow" / "data" / "sciflow-bench-60"
    return parser(str(render_graph(load_graph(refs / f"{name}.json"), tmp_path / f"{name}.png", dpi=144))).graph


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_a_frame_whose_bottom_a_shallow_arrow_continues_is_still_a_frame(parser, tmp_path):
    # the EKF reference as `sciflow generate graphviz` draws it: an almost level arrow from
    # "Predicted Belief" enters the "Correction" cluster at its lower-left corner, so the
    # cluster's bottom run reaches past the corner where its top run ends. The frame must
    # still be found; read as a connector, its dashes joined every box it touches
    g = parse_reference_drawing(parser, tmp_path, "rob_ekf_localization")
    assert "Correction" in [grp.label for grp in g.groups]
    got = {(a[:8], b[:8]) for a, b in edges_by_label(g)}
    assert ("sensor m", "measurem") in got and ("kalman g", "measurem") in got
    assert not any(a == "landmark" and b != "measurem" for a, b in got)


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_a_frame_side_touched_low_down_by_a_box_outline_keeps_its_own_top(parser, tmp_path):
    # the latent-diffusion reference as `sciflow generate graphviz` draws it: inside the
    # "Latent Space" cluster the top outline of "Latent z", continued by an arrow, runs into
    # the cluster's left side below the side's upper end. A run lower down than a side's
    # upper end is no top that side turns into, so the cluster keeps its side and is found
    g = parse_reference_drawing(parser, tmp_path, "cv_latent_diffusion")
    assert "Latent Space" in [grp.label for grp in g.groups]
    got = {(a[:8], b[:8]) for a, b in edges_by_label(g)}
    assert ("conditio", "cross-at") in got and not any(a == "encoder " and b == "conditio" for a, b in got)


@pytest.mark.parametrize("dx", [0, 30])
def test_an_arrow_crossing_a_frame_through_its_title_reaches_the_node_inside(parser, dx):
    # the arrow crosses the dashed outline just where the title sits, so its pieces end on
    # the outline and on the title's text: one stroke passing under both, no edge from the title
    c = Canvas(700, 420)
    dashed_rounded_frame(c, (100, 120, 620, 390))
    c.text("Real World", 350, 152, size=18)
    c.box("CNN", 150 + dx, 20, w=150)
    c.box("Position", 420, 280, w=170)
    c.arrow([(290 + dx, 70), (480, 280)])
    g = parser(c.array()).graph
    assert labels(g) == {"cnn", "position"}
    assert edges_by_label(g) == {("cnn", "position")}
    assert len(g.groups) == 1  # (the arrow's ink through the letters may cost the OCR a letter)


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_an_arrow_crossing_a_cluster_beside_a_text_is_one_edge_in_a_graphviz_drawing(parser, tmp_path):
    # the domain-randomization reference as `sciflow generate graphviz` draws it: the arrow
    # into "Object Position" crosses the "Real World (test)" cluster's outline and then the
    # end of its title; its pieces end on the outline and on the title's text
    g = parse_reference_drawing(parser, tmp_path, "rob_domain_randomization")
    got = {(a[:8], b[:8]) for a, b in edges_by_label(g)}
    assert ("object l", "object p") in got
    assert not any(a.startswith("real wor") for a, _ in got)
    # and the arrow into "Object Localization CNN" crosses the other cluster's outline right
    # beside its edge label "training": the label is the edge's, not its source
    assert ("synthet", "object l") in {(a[:7], b) for a, b in got}
    assert "training" not in labels(g)


@pytest.mark.parametrize("spur", [0.0, 12.0])
def test_an_arrowheads_wing_is_no_dangling_end_to_follow(spur):
    # a line into "Sum" whose head leaves a wing (a skeleton spur) pointing back at "Other",
    # and whose tail stops short of "Input". Followed along its tangent, the wing reaches
    # "Other"; only the tail is a line end. With spur = 0 (the old rule) every end was followed
    import numpy as np

    from sciflow.agents.diagram import GroundedNode
    from sciflow.agents.topology_coder.attach import Contact, extend_dangling, nearest_targets
    from sciflow.agents.topology_coder.components import Comp, describe

    tmap = np.zeros((70, 120), np.int32)
    tmap[0:40, 100:120] = 1      # Sum
    tmap[30:50, 40:60] = 2       # Other
    tmap[0:20, 0:8] = 3          # Input
    mask = np.zeros((70, 120), bool)
    mask[10, 20:98] = True       # the line, its tail at x = 20
    for k in range(1, 9):        # the wing: from (92, 10) down-left to (84, 18)
        mask[10 + k, 92 - k] = True
    c = Comp(1, 0, 0, mask)
    describe(c)
    wing = [s for (x, y, _, _), s in zip(c.ends, c.spurs, strict=True) if (x, y) == (84, 18)]
    assert wing and wing[0] <= 9                      # the wing is a short branch to a junction
    dist, nearest = nearest_targets(tmap)
    targets = [GroundedNode(f"n{i}", lab, (0, 0, 1, 1), "rect", 1.0, ())
               for i, lab in enumerate(["Sum", "Other", "Input"])]
    by_group = {1: [Contact(1, 0, 97.0, 10.0)]}
    extend_dangling({1: [1]}, by_group, {1: c}, dist, nearest, targets, 4.0, 40.0, spur)
    reached = {targets[ct.target].label for ct in by_group[1]}
    assert reached == ({"Sum", "Input"} if spur else {"Sum", "Input", "Other"})


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_a_head_whose_wing_points_at_a_box_beside_the_arrow_adds_no_edge(parser, tmp_path):
    # the bandgap reference drawn by Graphviz without its arrow "ΔV_BE (PTAT)" -> "Gain K":
    # the head of "V_BE (CTAT)" -> "Σ" has a wing pointing back at the corner of "ΔV_BE
    # (PTAT)"; followed as a dangling end, it drew an arrow ΔV_BE -> Σ that is not there
    import dataclasses
    from pathlib import Path

    from sciflow.bench.drawing import render_graph
    from sciflow.format.graph import load_graph

    ref = load_graph(Path(__file__).resolve().parents[2] / "sciflow/data/sciflow-bench-60/ic_bandgap_reference.json")
    lab = {n.id: n.label for n in ref.nodes}
    edges = tuple(e for e in ref.edges if (lab[e.source], lab[e.target]) != ("ΔV_BE (PTAT)", "Gain K"))
    assert len(edges) == len(ref.edges) - 1
    g = parser(str(render_graph(dataclasses.replace(ref, edges=edges), tmp_path / "bandgap.png", dpi=144))).graph
    got = edges_by_label(g)
    assert ("v_be (ctat)", "σ") in got or ("v_be (ctat)", "∑") in got
    assert not any(a.startswith("δv_be") and b in ("σ", "∑") for a, b in got)


@pytest.mark.parametrize("dy", [10, 12])
def test_an_arrowheads_wing_pointing_at_another_arrows_tail_joins_no_dashes(parser, dy):
    # "Accuracy" -> "Controller" arrives on Controller's right side just below where
    # "Controller" -> "Architecture" leaves it: the upper wing of the head points at that
    # tail. A wing is a short skeleton spur, no dash end: the two arrows stay apart
    c = Canvas(900, 200)
    c.box("Controller", 20, 80, w=200, h=60)
    c.box("Architecture", 360, 10, w=200)
    c.box("Accuracy", 680, 110, w=180)
    c.line([(680, 120), (220, 120)])
    c.head((220, 120), (680, 120), size=16)
    c.line([(221, 112 - dy), (360, 45)])
    c.head((360, 45), (221, 112 - dy), size=16)
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("accuracy", "controller"), ("controller", "architecture")}


def test_a_frame_side_hidden_under_a_label_is_still_a_frame(parser):
    # the label of the arrow leaving the frame sits on the frame's bottom, on a white
    # background that hides the dashes under it: the bottom is read as one run across it
    c = Canvas(760, 380)
    dashed_rounded_frame(c, (20, 20, 740, 200))
    c.text("Training", 380, 40, size=16)
    c.box("Policy", 60, 90, w=150)
    c.box("Targets", 520, 90, w=150)
    c.arrow([(210, 115), (520, 115)])
    c.box("Robot", 400, 290, w=150)
    c.arrow([(150, 140), (440, 290)])
    c.d.rectangle((300, 190, 380, 210), fill="white")
    c.text("deploy", 340, 200, size=15)
    g = parser(c.array()).graph
    assert [grp.label for grp in g.groups] == ["Training"]
    assert labels(g) == {"policy", "targets", "robot"}
    assert edges_by_label(g) == {("policy", "targets"), ("policy", "robot")}


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_a_cluster_whose_bottom_carries_an_edge_label_is_found_in_a_graphviz_drawing(parser, tmp_path):
    # ANYmal: the label "deploy" is drawn on the bottom of the cluster "3. Training the
    # control policy". Missed, the cluster's dashes joined every arrow crossing it into one
    g = parse_reference_drawing(parser, tmp_path, "rob_anymal_actuator_net")
    assert "3. Training the control policy" in [grp.label for grp in g.groups]
    got = edges_by_label(g)
    assert {("actuator network", "joint torques"), ("control policy", "real anymal robot"),
            ("joint torques", "rigid-body simulator")} <= got


@pytest.mark.parametrize("size", [19, 20])
def test_an_operator_typed_as_a_boxs_label_is_that_box(parser, size):
    # "⊕" written as the label of a box: at 20 px the OCR reads nothing there, at 19 px it
    # reads "④" (its dictionary has no ⊕). The operator is found by its drawing, names the
    # box, and the arrows ending on the box are its edges
    c = Canvas(700, 260)
    c.box("Features", 20, 30, w=170)
    c.box("Encoding", 20, 170, w=170)
    c.box("plus", 300, 100, w=110, h=56, label=" ")
    c.d.text((355, 128), "⊕", font=font(size), fill="black", anchor="mm")
    c.box("Encoder", 500, 100, w=170)
    c.arrow([(190, 55), (300, 118)])
    c.arrow([(190, 195), (300, 140)])
    c.arrow([(410, 128), (500, 128)])
    g = parser(c.array()).graph
    assert labels(g) == {"features", "encoding", "⊕", "encoder"}
    assert edges_by_label(g) == {("features", "⊕"), ("encoding", "⊕"), ("⊕", "encoder")}


def test_a_dash_pointing_into_a_label_the_line_passes_under_is_no_end(parser):
    # a dashed arrow passes under its label "update C": the line is bridged through the
    # label, and the end of the dash beside it, pointing into the label, is no dangling end
    c = Canvas(760, 200)
    c.box("Loss", 580, 120, w=150)
    c.box("Critic", 30, 20, w=150)
    c.line([(640, 120), (560, 60), (180, 45)], dashed=True)
    c.head((180, 45), (560, 60))
    c.text("update C", 400, 47, size=15)
    g = parser(c.array()).graph
    assert labels(g) == {"loss", "critic"}
    assert edges_by_label(g) == {("loss", "critic")}


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_a_dashed_edge_under_its_label_is_one_edge_in_a_graphviz_drawing(parser, tmp_path):
    # GAN: the dashed "update D" arrow from "Adversarial Loss" passes under its label
    g = parse_reference_drawing(parser, tmp_path, "ml_gan")
    assert "update d" not in labels(g)
    assert ("adversarial loss", "discriminator d") in edges_by_label(g)


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_paper_between_two_arrows_leaving_one_box_is_no_cylinder_in_a_graphviz_drawing(parser, tmp_path):
    # Switch Transformer: the arrows from "Token Embedding x" to "Add + Normalize 1" and to
    # "Self-Attention", with the arrow between those two, close in a patch of paper holding the
    # label "residual" against its rim; its top sags between the two arrows, which read as a
    # cylinder's cap. Paper with only a connector's label at its rim is no shape
    g = parse_reference_drawing(parser, tmp_path, "nlp_switch_transformer")
    assert "residual" not in labels(g)
    got = edges_by_label(g)
    assert {("token embedding x", "add + normalize 1"), ("token embedding x", "self-attention"),
            ("self-attention", "add + normalize 1")} <= got


def test_a_small_circled_plus_loose_on_the_page_is_no_operator(parser):
    # a circle under 0.35 text heights is an operator only inside a shape holding no other
    # text; loose on the page one that small is a letter the OCR did not read
    c = Canvas(700, 200)
    c.box("Encoder", 20, 70, w=170)
    c.box("Decoder", 500, 70, w=170)
    c.arrow([(190, 95), (500, 95)])
    c.d.text((345, 160), "⊕", font=font(20), fill="black", anchor="mm")
    g = parser(c.array()).graph
    assert labels(g) == {"encoder", "decoder"}
    assert edges_by_label(g) == {("encoder", "decoder")}


def dotted_line(c: Canvas, a: tuple[int, int], b: tuple[int, int], dot: int = 2, step: int = 5,
                color: str = "#555555") -> None:
    """Square dots of ``dot`` px every ``step`` px from ``a`` to ``b`` (Mermaid's ``-.->``)."""
    n = max(1, int(math.hypot(b[0] - a[0], b[1] - a[1]) // step))
    for k in range(n + 1):
        x = a[0] + (b[0] - a[0]) * k / n
        y = a[1] + (b[1] - a[1]) * k / n
        c.d.rectangle((round(x), round(y), round(x) + dot - 1, round(y) + dot - 1), fill=color)


@pytest.mark.parametrize("rankdir", ["LR", "TB"])
def test_a_dotted_arrow_whose_head_no_dot_points_at_is_one_edge(parser, rankdir):
    # the head's skeleton ends are its tip and its wings: no line end faces the dots, and a
    # dot has no tangent; the run of dots is followed in its own direction onto the head
    if rankdir == "LR":
        c = Canvas(640, 160)
        c.box("Token Backbone", 30, 55, w=170)
        c.box("Patch Loss", 430, 55, w=170)
        dotted_line(c, (202, 80), (416, 80))
        c.d.polygon([(429, 80), (418, 74), (418, 86)], fill="#111111")
    else:
        c = Canvas(300, 420)
        c.box("Token Backbone", 60, 30, w=170)
        c.box("Patch Loss", 60, 330, w=170)
        dotted_line(c, (145, 82), (145, 316))
        c.d.polygon([(145, 329), (139, 318), (151, 318)], fill="#111111")
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("token backbone", "patch loss")}


@pytest.mark.parametrize("with_head", [True, False])
def test_a_thick_line_with_a_marker_drawn_small_for_it_keeps_its_head(parser, with_head):
    # Mermaid's ``==>``: a 4 px line whose head is only twice as wide; the 2nd-98th percentile
    # spread of the head window misses the base, the slices across the head's axis do not.
    # The same thick line without a head is no edge.
    c = Canvas(320, 420)
    c.box("Policy Memory", 70, 30, w=180)
    c.box("Value Head", 70, 330, w=180)
    c.d.line([(160, 82), (160, 322 if with_head else 328)], fill="#333333", width=4)
    if with_head:
        c.d.polygon([(156, 321), (164, 321), (160, 328)], fill="#333333")
    g = parser(c.array()).graph
    assert edges_by_label(g) == ({("policy memory", "value head")} if with_head else set())


def test_lines_fanning_out_of_one_point_of_a_box_are_each_an_edge(parser):
    # three arrows leave the source at one point of its right side and part at once: where
    # they leave, their spread looked like a head, so every contact read as a head, none as the
    # tail, and no edge was drawn
    c = Canvas(640, 360)
    c.box("Audio Memory", 30, 155, w=160)
    c.box("Encoder", 430, 30, w=160)
    c.box("Tokenizer", 430, 155, w=160)
    c.box("Decoder", 430, 280, w=160)
    c.arrow([(190, 180), (430, 60)])
    c.arrow([(190, 180), (430, 180)])
    c.arrow([(190, 180), (430, 300)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("audio memory", t) for t in ("encoder", "tokenizer", "decoder")}


def test_short_double_headed_arrows_between_stacked_boxes_are_two_edges(parser):
    # a tool and its memory, stacked close, joined by a short arrow with a small head at
    # each end (the heads too small for the head window, which is cut short between them)
    c = Canvas(900, 260)
    for k, x in enumerate((40, 330, 620)):
        for name, y in (("Tool", 30), ("Memory", 130)):
            c.d.rectangle((x, y, x + 240, y + 50), outline="black", width=2, fill="white")
            c.d.text((x + 120, y + 25), f"{name} {k + 1}", font=font(34), fill="black", anchor="mm")
        mx = x + 120
        c.d.line([(mx, 86), (mx, 124)], fill="#7f7f7f", width=4)
        c.d.polygon([(mx, 81), (mx - 7, 93), (mx + 7, 93)], fill="#7f7f7f")
        c.d.polygon([(mx, 129), (mx - 7, 117), (mx + 7, 117)], fill="#7f7f7f")
    g = parser(c.array()).graph
    want = set()
    for k in (1, 2, 3):
        want |= {(f"tool {k}", f"memory {k}"), (f"memory {k}", f"tool {k}")}
    assert edges_by_label(g) == want
