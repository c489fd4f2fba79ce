"""Channels between shapes (issue 17, "labels on arrows read as nodes"): the gap between two
column frames laid over a coloured row band is no box, so the edge label set in it stays an
edge label and the arrow through it joins its boxes; boxes drawn side by side, stacked with
their sides in line, or set between frames with outlines of their own stay shapes."""

from __future__ import annotations

import doctest

import numpy as np

from sciflow.agents.diagram import Shape
from sciflow.agents.shape_hunter import channels
from sciflow.agents.shape_hunter.channels import is_channel

from .drawing import Canvas, edges_by_label, labels


def _columns_over_rows() -> Canvas:
    """The layout of BYOL's overview: three column frames over two coloured row bands, one box
    per column and row, arrows along each row with their labels in the gaps between columns."""
    c = Canvas(820, 300)
    c.d.rectangle((40, 40, 780, 140), fill="#ebebff")
    c.d.rectangle((40, 160, 780, 260), fill="#ffebeb")
    for x in (140, 330, 520):
        c.d.rounded_rectangle((x, 30, x + 130, 270), radius=12, outline="#999999", width=2)
    for row, y in (("", 90), ("'", 210)):
        for x, name in ((160, "v"), (350, "y"), (540, "z")):
            c.box(name + row, x, y - 25, w=90, h=50, label=name + row)
        c.arrow([(250, y), (350, y)])
        c.arrow([(440, y), (540, y)])
        c.text("f" + ("1" if not row else "2"), 300, y - 40)
        c.text("g" + ("1" if not row else "2"), 490, y - 40)
    return c


def test_labels_in_the_gaps_between_columns_are_edge_labels_not_nodes(parser):
    r = parser(_columns_over_rows().array())
    assert labels(r.graph) == {"v", "y", "z", "v'", "y'", "z'"}
    assert edges_by_label(r.graph) == {("v", "y"), ("y", "z"), ("v'", "y'"), ("y'", "z'")}


def _shape(i: int, box: tuple[float, float, float, float], kind: str = "rect") -> Shape:
    return Shape(i, kind, box, (), (255, 255, 255), 0.9, (box[2] - box[0]) * (box[3] - box[1]))


def _outline(ink: np.ndarray, box: tuple[float, float, float, float]) -> None:
    x0, y0, x1, y1 = (int(v) for v in box)
    ink[y0, x0:x1 + 1] = ink[y1, x0:x1 + 1] = 255
    ink[y0:y1 + 1, x0] = ink[y0:y1 + 1, x1] = 255


def test_a_gap_between_frames_is_a_channel_even_with_an_arrow_through_it():
    ink = np.zeros((200, 300), np.uint8)
    a, b = (10.0, 10.0, 100.0, 190.0), (160.0, 10.0, 250.0, 190.0)
    _outline(ink, a)
    _outline(ink, b)
    ink[90, 60:200] = 255                        # an arrow from a box in one frame to the next
    gap_above = _shape(2, (101.0, 30.0, 159.0, 89.0), "rounded")
    shapes = [_shape(0, a), _shape(1, b), gap_above]
    assert is_channel(gap_above, shapes, ink, 8.0)
    # a box drawn in the gap has an outline of its own
    _outline(ink, (101.0, 30.0, 159.0, 89.0))
    assert not is_channel(gap_above, shapes, ink, 8.0)


def test_cells_in_a_row_and_squares_in_a_stack_are_no_channels():
    ink = np.zeros((200, 400), np.uint8)
    cells = [(20.0 + 60 * k, 20.0, 80.0 + 60 * k, 60.0) for k in range(4)]   # a segmented bar
    for b in cells:
        _outline(ink, b)
    shapes = [_shape(k, b) for k, b in enumerate(cells)]
    assert not any(is_channel(s, shapes, ink, 8.0) for s in shapes)
    ink = np.zeros((300, 200), np.uint8)
    stack = [(60.0, 20.0 + 50 * k, 102.0, 66.0 + 50 * k) for k in range(5)]   # squares, sides in line
    for b in stack:
        _outline(ink, b)
    ink[:, 60] = 255                             # their left sides make one straight line
    shapes = [_shape(k, b) for k, b in enumerate(stack)]
    assert not any(is_channel(s, shapes, ink, 8.0) for s in shapes)


def test_a_shape_beside_only_one_neighbour_is_no_channel():
    ink = np.zeros((200, 300), np.uint8)
    a = (10.0, 10.0, 100.0, 190.0)
    _outline(ink, a)
    beside = _shape(1, (101.0, 30.0, 159.0, 89.0), "rounded")
    assert not is_channel(beside, [_shape(0, a), beside], ink, 8.0)


def test_the_worked_examples_of_the_channel_step_hold():
    assert doctest.testmod(channels).failed == 0
