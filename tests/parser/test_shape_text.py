"""Short labels alone in a box that the line detector misses (issue 17, cause 4): the Shape
Reader reads the inside of every closed shape the Text Spotter left empty."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from sciflow.agents import shape_text
from sciflow.agents.diagram import Shape, TextBox
from sciflow.agents.shape_text import ShapeText, cleaned_inside, empty_boxes
from sciflow.agents.text_filters import clean_text

from .drawing import Canvas, edges_by_label, font, labels


def letter_box(c: Canvas, s: str, x: int, y: int, size: int = 15, w: int = 62, fill: str = "white") -> None:
    """A square box holding one short label in a small font, as in a paper's model figure."""
    c.d.rectangle((x, y, x + w, y + w), outline="black", width=2, fill=fill)
    c.d.text((x + w / 2, y + w / 2), s, font=font(size), fill="black", anchor="mm")
    c.boxes[s] = (x, y, x + w, y + w)


def test_single_letters_alone_in_their_boxes_are_nodes(parser):
    c = Canvas(620, 200)
    letter_box(c, "x", 30, 70)
    letter_box(c, "v", 200, 70)
    letter_box(c, "y", 370, 70)
    c.box("Loss", 470, 76, w=120)
    c.arrow([(92, 101), (200, 101)])
    c.arrow([(262, 101), (370, 101)])
    c.arrow([(432, 101), (470, 101)])
    g = parser(c.array()).graph
    assert labels(g) == {"x", "v", "y", "loss"}
    assert edges_by_label(g) == {("x", "v"), ("v", "y"), ("y", "loss")}


def _shape(i: int, box: tuple[float, float, float, float], kind: str = "rect") -> Shape:
    return Shape(i, kind, box, (), (255, 255, 255), 1.0, (box[2] - box[0]) * (box[3] - box[1]))


def test_only_empty_boxes_of_a_box_kind_are_read_smallest_first():
    big = _shape(0, (0, 0, 400, 200))            # holds another shape: a container
    small = _shape(1, (20, 20, 60, 60))
    texted = _shape(2, (100, 20, 160, 80))       # holds an OCR line's centre
    picture = _shape(3, (200, 20, 260, 80), "image")
    card_a, card_b = _shape(4, (300, 20, 360, 80)), _shape(5, (320, 40, 380, 100))  # a stack
    tiny = _shape(6, (20, 100, 30, 110))         # under 0.8 text heights
    mid = _shape(7, (100, 100, 180, 180))
    line = TextBox(0, "Encoder", (110, 40, 150, 60), 0.9)
    got = empty_boxes([big, small, texted, picture, card_a, card_b, tiny, mid], [line], 20.0, 0.8, 10.0)
    assert [s.id for s in got] == [1, 7]
    # boxes sharing a side cross by a sliver only: both stay candidates
    left, right = _shape(0, (0, 0, 60, 60)), _shape(1, (58, 0, 118, 60))
    assert [s.id for s in empty_boxes([left, right], [], 20.0, 0.8, 10.0)] == [0, 1]


def _boxed(fill_left=(255, 255, 255), fill_right=(255, 255, 255)) -> np.ndarray:
    img = np.zeros((80, 120, 3), np.uint8)
    for x in range(120):  # a left-to-right gradient between the two fills
        img[:, x] = np.round(np.array(fill_left) + (np.array(fill_right) - np.array(fill_left)) * x / 119)
    img[10:12, 10:110] = img[68:70, 10:110] = 0   # the outline
    img[10:70, 10:12] = img[10:70, 108:110] = 0
    img[39:41, 0:40] = 0                           # an arrow entering from the left
    img[30:50, 60:64] = 0                          # the glyph
    return img


def test_the_outline_and_arrows_are_painted_out_and_the_glyph_kept():
    s = _shape(0, (10, 10, 110, 70))
    crop, (x0, y0), ink = cleaned_inside(_boxed(), s, 0.06, 60, 20.0, 0.3)
    assert (x0, y0) == (14, 14)  # inset 0.06 x 60 = 3.6 -> 4 px
    assert ink == (46.0, 16.0, 50.0, 36.0)  # the glyph alone, in crop coordinates
    dark = (crop < 128).any(axis=2)
    assert int(dark.sum()) == 80 and dark[16:36, 46:50].all()


def test_a_gradient_fill_is_no_ink_and_a_picture_is_not_read():
    s = _shape(0, (10, 10, 110, 70))
    got = cleaned_inside(_boxed((250, 220, 120), (160, 190, 230)), s, 0.06, 60, 20.0, 0.3)
    assert got is not None and got[2] == (46.0, 16.0, 50.0, 36.0)
    noisy = _boxed()
    noisy[14:66, 14:106] = np.random.default_rng(0).integers(150, 256, (52, 92, 3), dtype=np.uint8)
    noisy[30:50, 60:64] = 0
    assert cleaned_inside(noisy, s, 0.06, 60, 20.0, 0.3) is None
    empty = _boxed()
    empty[30:50, 60:64] = 255  # nothing but the outline and the arrow
    assert cleaned_inside(empty, s, 0.06, 60, 20.0, 0.3) is None


class _FakeOCR:
    """A backend whose detector finds nothing and whose recogniser reads one letter."""

    def __init__(self, detected=()):
        self.detected = list(detected)
        self.recognised = []

    def read(self, image):
        return list(self.detected)

    def recognize(self, crops):
        self.recognised += [c.shape[:2] for c in crops]
        return [("v", 0.93) for _ in crops]

    def fingerprint(self):
        return {"backend": "fake"}


def test_a_glyph_the_detector_misses_is_read_by_the_recogniser_alone():
    agent = ShapeText({})
    agent.backend = _FakeOCR()
    s = _shape(0, (10, 10, 110, 70))
    (text, conf, box), = agent.read_shape(_boxed(), s, 20.0)
    assert (text, conf) == ("v", 0.93)
    # the ink's box (60..64 x 30..50) framed by 5 px (a quarter text height), in the image
    assert box == pytest.approx((55.0, 25.0, 69.0, 55.0))
    assert agent.backend.recognised == [(90, 42)]  # that crop enlarged 3 times


def test_readings_of_unknown_glyphs_or_from_the_margin_are_dropped():
    agent = ShapeText({})
    s = _shape(0, (10, 10, 110, 70))
    f, pad = 3.0, 30  # the agent's enlargement and margin (half a text height, enlarged)
    on_glyph = (pad + 46 * f, pad + 16 * f, pad + 50 * f, pad + 36 * f)
    in_margin = (2.0, 2.0, 20.0, 20.0)
    agent.backend = _FakeOCR([TextBox(0, "W1", on_glyph, 0.95), TextBox(1, "□", on_glyph, 0.9),
                              TextBox(2, "z", in_margin, 0.99), TextBox(3, "q", on_glyph, 0.4)])
    assert [t for t, _, _ in agent.read_shape(_boxed(), s, 20.0)] == ["W1"]


def test_one_arrowhead_like_letter_is_kept_only_where_asked():
    assert (clean_text("v"), clean_text("v", keep_letters=True), clean_text("->", keep_letters=True)) == ("", "v", "")


def test_docstring_examples():
    assert doctest.testmod(shape_text).failed == 0
