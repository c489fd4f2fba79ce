"""Topology Coder and Grounder on small drawn diagrams with known answers (full pipeline)."""

from __future__ import annotations

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
