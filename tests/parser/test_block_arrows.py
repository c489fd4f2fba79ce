"""Block arrows (issue 17, cause 5: hollow block arrows as their own connector type): a closed
arrow shape standing between the two boxes it joins, outlined or filled."""

from __future__ import annotations

import doctest

import cv2
import numpy as np
import pytest

from sciflow.agents.topology_coder import blocks
from sciflow.agents.topology_coder.blocks import block_arrow
from sciflow.agents.topology_coder.components import ink_components

from .drawing import Canvas, edges_by_label, labels


def arrow_polygon(x0: float, y0: float, x1: float, y1: float, shaft: float = 8, head: float = 18,
                  head_len: float = 22) -> list[tuple[float, float]]:
    """The seven corners of a block arrow from (x0, y0) to its tip at (x1, y1)."""
    L = float(np.hypot(x1 - x0, y1 - y0))
    ux, uy = (x1 - x0) / L, (y1 - y0) / L
    nx, ny = -uy, ux
    bx, by = x1 - head_len * ux, y1 - head_len * uy
    return [(x0 + shaft * nx, y0 + shaft * ny), (bx + shaft * nx, by + shaft * ny), (bx + head * nx, by + head * ny),
            (x1, y1), (bx - head * nx, by - head * ny), (bx - shaft * nx, by - shaft * ny),
            (x0 - shaft * nx, y0 - shaft * ny)]


@pytest.mark.parametrize("filled", [False, True])
def test_a_block_arrow_between_two_boxes_is_one_edge(parser, filled):
    c = Canvas(560, 160)
    c.box("Encoder", 30, 55, w=150)
    c.box("Decoder", 380, 55, w=150)
    poly = arrow_polygon(200, 80, 360, 80)
    c.d.polygon(poly, outline="#444444", fill="#f4c27a" if filled else "white", width=2)
    g = parser(c.array()).graph
    assert labels(g) == {"encoder", "decoder"}
    assert edges_by_label(g) == {("encoder", "decoder")}


def test_a_block_arrow_pointing_up_joins_the_box_below_to_the_box_above(parser):
    c = Canvas(300, 360)
    c.box("Stage 1", 75, 30, w=150)
    c.box("Sharded Stage", 75, 270, w=150)
    c.d.polygon(arrow_polygon(150, 255, 150, 95), outline="#3b5b9a", fill="#c9d8f0", width=2)
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("sharded stage", "stage 1")}


def _mask(poly: list[tuple[float, float]], shape: tuple[int, int] = (120, 200), filled: bool = False) -> np.ndarray:
    m = np.zeros(shape, np.uint8)
    pts = np.round(np.array(poly)).astype(np.int32)
    if filled:
        cv2.fillPoly(m, [pts], 1)
    else:
        cv2.polylines(m, [pts], True, 1, 2)
    return m.astype(bool)


def test_the_silhouette_test_reads_direction_and_refuses_other_shapes():
    diag = block_arrow(_mask(arrow_polygon(30, 90, 150, 30), filled=True))
    assert diag is not None and diag.direction[0] > 0.85 and diag.direction[1] < -0.4  # up and to the right
    # a plain bar, a triangle (a head without a shaft) and a double-headed block arrow are no block arrows
    bar = np.zeros((40, 120), bool)
    bar[15:25, 10:110] = True
    tri = _mask([(20, 20), (100, 60), (20, 100)], filled=True)
    both = _mask(arrow_polygon(100, 60, 180, 60), filled=True) | _mask(arrow_polygon(100, 60, 20, 60), filled=True)
    assert [block_arrow(m) for m in (bar, tri, both)] == [None, None, None]


def test_a_box_with_no_arrow_between_draws_no_edge(parser):
    c = Canvas(560, 160)
    c.box("Encoder", 30, 55, w=150)
    c.box("Decoder", 380, 55, w=150)
    c.d.rectangle((230, 70, 330, 90), outline="#444444", fill="#f4c27a", width=2)  # a bar: no head
    g = parser(c.array()).graph
    assert edges_by_label(g) == set()


def test_docstring_examples():
    assert doctest.testmod(blocks).failed == 0



@pytest.mark.parametrize(("gap", "fill", "outline"), [
    (26, "#dde6f4", "#555555"), (18, "#dde6f4", "#555555"),   # outlined, pale fill
    (26, "#555555", "#555555"), (18, "#f4c27a", "#f4c27a"),   # filled, dark and light
])
def test_free_text_stages_joined_by_block_arrows_form_chains(parser, gap, fill, outline):
    # Unboxed labels stacked in columns with block arrows between them (a pipeline drawn as
    # "Stage -> Sharded Stage -> Executable"): the arrows' wide tails are no heads, the label
    # between two arrows is not a line passing under text, and the arrow behind a filled one
    # is no thick dashed line it ends. At the smaller gap the label's mask cuts an outline
    # open at its tail.
    c = Canvas(710, 350)
    for k in range(3):
        cx = 125 + 230 * k
        names = (f"Stage {k + 1}", f"Sharded Stage {k + 1}", f"Executable {k + 1}")
        for y, name in zip((40, 170, 300), names, strict=True):
            c.text(name, cx, y, size=22)
        for ya, yb in ((40, 170), (170, 300)):
            c.d.polygon(arrow_polygon(cx, ya + gap, cx, yb - gap), outline=outline, fill=fill, width=2)
    g = parser(c.array()).graph
    assert edges_by_label(g) == {
        (f"{a} {k}", f"{b} {k}")
        for k in (1, 2, 3)
        for a, b in (("stage", "sharded stage"), ("sharded stage", "executable"))
    }


def test_an_outline_with_a_line_hanging_off_it_is_no_block_arrow():
    # The silhouette of a connector tree whose lines enclose a region can read as an arrow;
    # what tells it from a drawn arrow is the line hanging off the loop (a closed outline has
    # none longer than a few px).
    outline = _mask(arrow_polygon(30, 60, 170, 60))
    img = np.zeros((120, 200), np.uint8)
    img[outline] = 1
    _, comps = ink_components(img)
    assert sorted(blocks.block_pieces(comps, th=20.0)) == [1]
    cv2.line(img, (32, 60), (80, 60), 1, 2)                    # a line inside, off the tail's side
    _, comps = ink_components(img)
    assert blocks.block_arrow(comps[1].mask) is not None      # the silhouette alone still passes
    assert blocks.block_pieces(comps, th=20.0) == {}
