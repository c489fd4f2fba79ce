"""Topology Coder and Grounder on small drawn diagrams with known answers (full pipeline)."""

from __future__ import annotations

import numpy as np
import pytest

from sciflow.agents.diagram import Diagram, Shape, TextBox
from sciflow.agents.grounder import Grounder

from .drawing import Canvas, edges_by_label, labels


def test_arrow_direction(parser):
    c = Canvas(620, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 420, 50)
    c.arrow([(180, 75), (420, 75)])
    g = parser(c.array()).graph
    assert labels(g) == {"encoder", "decoder"}
    assert edges_by_label(g) == {("encoder", "decoder")}


def test_reverse_direction_and_chevron(parser):
    c = Canvas(620, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 420, 50)
    c.arrow([(420, 75), (180, 75)], style="chevron")
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("decoder", "encoder")}


def test_fan_out_is_one_edge_per_head(parser):
    c = Canvas(640, 420)
    c.box("Backbone", 30, 185)
    c.box("Head A", 440, 40)
    c.box("Head B", 440, 185)
    c.box("Head C", 440, 330)
    c.line([(180, 210), (300, 210)])
    c.line([(300, 65), (300, 355)])
    for y in (65, 210, 355):
        c.arrow([(300, y), (440, y)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("backbone", "head a"), ("backbone", "head b"), ("backbone", "head c")}


def test_crossing_edges(parser):
    c = Canvas(700, 400)
    c.box("Source One", 30, 40, w=170)
    c.box("Source Two", 30, 300, w=170)
    c.box("Target One", 490, 40, w=170)
    c.box("Target Two", 490, 300, w=170)
    c.arrow([(200, 65), (490, 325)])
    c.arrow([(200, 325), (490, 65)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("source one", "target two"), ("source two", "target one")}


@pytest.mark.parametrize("rise", [90, 70])
def test_arrows_crossing_at_a_shallow_angle_go_straight_on(parser, rise):
    # at 19 and 15 degrees the two lines share a stretch of ink: their skeletons meet at one
    # junction and part at another, which read as a merge and a split (every turn allowed)
    c = Canvas(900, 260)
    c.box("Alpha", 20, 60, 150, 50)
    c.box("Beta", 20, 150, 150, 50)
    c.box("Gamma", 720, 60, 150, 50)
    c.box("Delta", 720, 150, 150, 50)
    top, bottom = 130 - rise // 2, 130 + rise // 2
    c.arrow([(172, top), (718, bottom)])
    c.arrow([(172, bottom), (718, top)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("alpha", "delta"), ("beta", "gamma")}


def test_dashed_and_double_headed(parser):
    c = Canvas(640, 330)
    c.box("Teacher", 30, 40)
    c.box("Student", 440, 40)
    c.box("Memory", 30, 230)
    c.box("Critic", 440, 230)
    c.arrow([(180, 65), (440, 65)], dashed=True)
    c.arrow([(180, 255), (440, 255)], both=True)
    res = parser(c.array())
    g = res.graph
    assert edges_by_label(g) == {("teacher", "student"), ("memory", "critic"), ("critic", "memory")}
    styles = {e.style for e in g.edges if g.node(e.source).label == "Teacher"}
    assert styles == {"dashed"}


def test_edge_label_is_not_a_node_and_free_text_input_is(parser):
    c = Canvas(700, 170)
    c.text("points", 60, 80)
    c.arrow([(100, 80), (260, 80)])
    c.box("Encoder", 260, 55)
    c.arrow([(410, 80), (640, 80)])
    c.text("features", 525, 60, size=15)
    c.d.rectangle((640, 55, 690, 105), outline="black", width=2)
    g = parser(c.array()).graph
    assert "features" not in labels(g)
    assert ("points", "encoder") in edges_by_label(g)
    kinds = {n.label: n.kind for n in g.nodes}
    assert kinds["points"] == "text"


def test_container_is_a_group_not_a_node(parser):
    c = Canvas(760, 300)
    c.d.rectangle((20, 20, 520, 280), outline="gray", width=2, fill=(238, 244, 255))
    c.text("Encoder Stage", 270, 45)
    c.box("Patch Embed", 50, 130, fill=(255, 255, 255))
    c.box("Transformer", 330, 130, fill=(255, 255, 255))
    c.arrow([(200, 155), (330, 155)])
    c.box("Decoder", 590, 130)
    c.arrow([(480, 155), (590, 155)])
    g = parser(c.array()).graph
    assert "encoder stage" not in labels(g)
    assert edges_by_label(g) == {("patch embed", "transformer"), ("transformer", "decoder")}
    assert len(g.groups) == 1 and g.groups[0].label == "Encoder Stage"
    inside = {n.label for n in g.nodes if n.group == g.groups[0].id}
    assert inside == {"Patch Embed", "Transformer"}


def test_line_without_head_gives_no_edge(parser):
    c = Canvas(620, 160)
    c.box("Alpha", 30, 50)
    c.box("Beta", 420, 50)
    c.line([(180, 75), (420, 75)])
    g = parser(c.array()).graph
    assert labels(g) == {"alpha", "beta"}
    assert g.edges == ()


def test_crossing_orthogonal_routes_follow_their_own_path(parser):
    # two L-shaped routes cross; the tails are not aligned with the heads they feed, so
    # only tracing through the crossing (straight on) pairs them right
    c = Canvas(760, 460)
    c.box("Alpha", 30, 40)
    c.box("Beta", 30, 360)
    c.box("Gamma", 560, 40)
    c.box("Delta", 560, 360)
    c.line([(180, 65), (400, 65), (400, 300)])
    c.arrow([(400, 300), (400, 385), (560, 385)])  # Alpha -> Delta
    c.line([(180, 385), (300, 385), (300, 180)])
    c.arrow([(300, 180), (480, 180), (480, 65), (560, 65)])  # Beta -> Gamma, crosses the first
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("alpha", "delta"), ("beta", "gamma")}


def test_two_edges_merging_into_one_node_stay_two_edges(parser):
    c = Canvas(640, 420)
    c.box("Image", 30, 40)
    c.box("Text", 30, 330)
    c.box("Fusion", 440, 185)
    c.line([(180, 65), (300, 65), (300, 210)])
    c.line([(180, 355), (300, 355), (300, 210)])
    c.arrow([(300, 210), (440, 210)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("image", "fusion"), ("text", "fusion")}


def test_blunt_head_on_an_ellipse_side_gets_its_direction(parser):
    # a filled head meeting an ellipse's side at a shallow angle lies mostly in the outline
    # band that is masked with the node
    c = Canvas(700, 320)
    c.box("Source", 30, 30)
    c.d.ellipse((330, 170, 670, 290), outline="black", width=2, fill="white")
    c.text("Target Node", 500, 230)
    tip = (420, 185)
    c.arrow([(180, 55), tip])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("source", "target node")}


def test_line_from_a_diamond_tip_is_not_an_arrowhead(parser):
    # a contour simplification cuts the diamond's acute tips; the cut-off outline must not
    # read as a head where a line leaves the tip
    c = Canvas(760, 320)
    c.d.polygon([(40, 80), (200, 40), (360, 80), (200, 120)], outline="black", width=2, fill="white")
    c.text("Router", 200, 80)
    c.box("Expert", 560, 230)
    c.line([(40, 80), (20, 80), (20, 255)])
    c.line([(20, 255), (300, 255)])
    c.arrow([(300, 255), (560, 255)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("router", "expert")}


def test_container_title_never_captions_an_icon():
    # a bare region right above a container's title (here: enclosed by another container's
    # border and two connectors) is not an icon named by that title
    img = np.full((300, 500, 3), 255, np.uint8)
    frame = ((10.0, 120.0), (490.0, 120.0), (490.0, 290.0), (10.0, 290.0))
    box = ((40.0, 200.0), (180.0, 200.0), (180.0, 260.0), (40.0, 260.0))
    region = ((180.0, 80.0), (320.0, 80.0), (320.0, 118.0), (180.0, 118.0))
    d = Diagram(image=img)
    d.shapes = [
        Shape(0, "rect", (10, 120, 490, 290), frame, (235, 240, 250), 0.9, 480 * 170),
        Shape(1, "rect", (40, 200, 180, 260), box, (255, 255, 255), 0.99, 140 * 60, parent=0),
        Shape(2, "rect", (180, 80, 320, 118), region, (255, 255, 255), 0.9, 140 * 38),
    ]
    d.text_lines = [
        TextBox(0, "Decoder Stage", (200, 126, 300, 146), 0.99),
        TextBox(1, "Upsample", (60, 220, 160, 240), 0.98),
    ]
    Grounder({}).run(d)
    assert not [n for n in d.nodes if n.kind == "icon"]
    assert [n.label for n in d.nodes if n.kind == "container"] == ["Decoder Stage"]


def test_a_stroke_through_a_crossing_with_a_head_at_each_end_has_its_tail_at_the_weaker():
    """Two strokes crossing in an X, one contact at each of the four ends: A -> B (B's head
    reads barely, margin 0.05, a tail leaving a rounded corner) and C -> D. Going straight on
    pairs A with B; with both read as heads every turn was allowed and all four contacts
    reached each other. The barely read head is the tail, and the crossing holds."""
    import cv2

    from sciflow.agents.topology_coder.attach import Contact
    from sciflow.agents.topology_coder.components import Comp
    from sciflow.agents.topology_coder.reach import reachability

    m = np.zeros((121, 121), np.uint8)
    cv2.line(m, (0, 0), (120, 120), 1, 3)
    cv2.line(m, (0, 120), (120, 0), 1, 3)
    a = Contact(0, 0, 0.0, 0.0, head=True, margin=1.0)
    b = Contact(0, 1, 120.0, 120.0, head=True, margin=0.05)
    c = Contact(0, 2, 0.0, 120.0, head=False, margin=0.6)
    d = Contact(0, 3, 120.0, 0.0, head=True, margin=0.9)
    got = reachability([a, b, c, d], [Comp(0, 0, 0, m.astype(bool))], [], 3.0, 16.0)
    assert got == [{1}, {0}, {3}, {2}]
    assert [ct.head for ct in (a, b, c, d)] == [True, False, False, True]
