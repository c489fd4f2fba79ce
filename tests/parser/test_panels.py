"""Filled panels crossed by connectors (issue 17, cause 1): the panel is one region with its
boxes as holes, and the panel's paper closed in by connectors is no shape."""

from __future__ import annotations

from .drawing import Canvas, edges_by_label, font, labels

PANEL = "#fdf0e3"


def test_a_panel_crossed_by_arrows_to_its_boxes_keeps_its_outline(parser):
    c = Canvas(760, 320)
    c.d.rounded_rectangle((20, 40, 520, 260), radius=24, fill=PANEL)
    c.box("Encoder", 60, 120, w=150, fill="#c8dbf3")
    c.box("Decoder", 320, 120, w=150, fill="#c8dbf3")
    c.box("Loss", 590, 120, w=130)
    c.arrow([(210, 145), (320, 145)])
    c.arrow([(470, 145), (590, 145)])               # leaves the panel across its border
    c.line([(655, 170), (655, 295), (135, 295)])   # feedback: round under the panel, up into it
    c.arrow([(135, 295), (135, 170)])
    r = parser(c.array())
    g = r.graph
    assert labels(g) == {"encoder", "decoder", "loss"}
    assert edges_by_label(g) == {("encoder", "decoder"), ("decoder", "loss"), ("loss", "encoder")}
    panels = [s for s in r.evidence["shape_hunter"]["shapes"] if s[2][2] - s[2][0] > 400]
    assert len(panels) == 1
    x0, y0, x1, y1 = panels[0][2]
    assert abs(x0 - 20) <= 3 and abs(y0 - 40) <= 3 and abs(x1 - 521) <= 3 and abs(y1 - 261) <= 3


def test_panel_paper_closed_in_by_connectors_is_no_shape(parser):
    c = Canvas(620, 420)
    c.d.rectangle((20, 20, 600, 400), fill="#eef6ee")
    c.box("Planner", 60, 60, w=140)
    c.box("Critic", 400, 60, w=140)
    c.box("Memory", 400, 300, w=140)
    c.arrow([(200, 85), (400, 85)])
    c.arrow([(470, 110), (470, 300)])
    c.line([(400, 325), (300, 325), (300, 365), (130, 365)])  # back round the loop, with a step
    c.arrow([(130, 365), (130, 110)])
    c.d.text((150, 353), "retry", font=font(14), fill="black", anchor="lm")  # a label along the line
    g = parser(c.array()).graph
    assert labels(g) == {"planner", "critic", "memory"}
    assert edges_by_label(g) == {("planner", "critic"), ("critic", "memory"), ("memory", "planner")}
