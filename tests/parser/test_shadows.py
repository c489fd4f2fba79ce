"""A box's drop shadow is part of the box (issue 17, cause 2): not a connector touching it."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from sciflow.agents.diagram import Shape
from sciflow.agents.shape_hunter import shadows
from sciflow.agents.shape_hunter.shadows import drop_shadow, with_shadows

from .drawing import Canvas, edges_by_label, font, labels


def _shadowed(c: Canvas, name: str, x: int, y: int, w: int = 150, h: int = 60, off: tuple[int, int] = (6, 6),
              fill: str = "#c8dbf3") -> None:
    c.d.rectangle((x + off[0], y + off[1], x + w + off[0], y + h + off[1]), fill="#7f7771")
    c.d.rectangle((x, y, x + w, y + h), outline="black", width=2, fill=fill)
    c.d.text((x + w / 2, y + h / 2), name, font=font(), fill="black", anchor="mm")
    c.boxes[name] = (x, y, x + w, y + h)


def _page(off: tuple[int, int] = (6, 6)) -> np.ndarray:
    c = Canvas(820, 300)
    _shadowed(c, "Encoder", 40, 60, off=off)
    _shadowed(c, "Fusion", 330, 60, off=off)
    _shadowed(c, "Decoder", 620, 60, off=off)
    c.arrow([(190, 90), (330, 90)])
    c.arrow([(480, 90), (620, 90)])
    # feedback: from under the decoder's shadow, round below, up into the encoder
    c.line([(700, 126), (700, 230), (110, 230)])
    c.arrow([(110, 230), (110, 120)])
    return c.array()


@pytest.mark.parametrize("off", [(6, 6), (-5, 5)])
def test_shadowed_boxes_keep_their_edges_and_gain_none(parser, off):
    g = parser(_page(off)).graph
    assert labels(g) == {"encoder", "fusion", "decoder"}
    assert edges_by_label(g) == {("encoder", "fusion"), ("fusion", "decoder"), ("decoder", "encoder")}


def test_the_shadow_is_read_from_the_pixels():
    img = _page()
    assert drop_shadow(img, (40, 60, 191, 121), 12) == (6, 6)
    # no shadow: a box alone, and a box with neighbours close on two sides (a grid of cells)
    c = Canvas(400, 300)
    c.box("A", 100, 100, w=100, h=60)
    assert drop_shadow(c.array(), (99, 99, 202, 162), 12) is None
    c.box("B", 208, 100, w=100, h=60)
    c.box("C", 100, 168, w=100, h=60)
    assert drop_shadow(c.array(), (99, 99, 202, 162), 12) is None
    # the outline grows over the shadow; a shape with none is returned as it is
    s = Shape(0, "rect", (40.0, 60.0, 191.0, 121.0), ((40.0, 60.0), (191.0, 60.0), (191.0, 121.0), (40.0, 121.0)),
              (200, 219, 243), 1.0, 151.0 * 61.0)
    (grown,) = with_shadows([s], img, 12)
    assert grown.bbox == (40.0, 60.0, 197.0, 127.0)
    assert with_shadows([s], np.full_like(img, 255), 12) == [s]


def test_docstring_examples():
    assert doctest.testmod(shadows).failed == 0
