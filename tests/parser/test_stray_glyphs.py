"""Stray glyphs beside a label (issue 17, cause 4: short and hard text): a step number or a
lone digit the text detector dropped from a box it read is read by the recogniser alone and
joins the label; icons beside labels are not read as letters."""

from __future__ import annotations

import doctest

import numpy as np
from PIL import ImageFont

from sciflow.agents import shape_text
from sciflow.agents.diagram import Shape, TextBox
from sciflow.agents.shape_text import _beside_line, labelled_boxes, stray_glyphs

from .drawing import Canvas, edges_by_label, font, labels

BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"


def test_step_numbers_above_the_labels_join_them_and_an_icon_stays_out(parser):
    """Numbered steps as in a method overview: the bold "1" alone on its row is the glyph a
    line detector drops; an orange disc of glyph size beside the last label is an icon."""
    c = Canvas(900, 200)
    for i, (x, name) in enumerate([(30, "Sample API Calls"), (330, "Execute API Calls"), (630, "Filter API Calls")]):
        c.d.rounded_rectangle((x, 40, x + 220, 130), radius=10, fill="#cfe6f5")
        c.d.text((x + 14, 58), str(i + 1), font=ImageFont.truetype(BOLD, 17), fill="black", anchor="lm")
        c.d.text((x + 14, 90), name, font=font(18), fill="#333333", anchor="lm")
    c.d.ellipse((810, 80, 830, 100), fill="#f08a24")
    c.arrow([(250, 85), (330, 85)])
    c.arrow([(550, 85), (630, 85)])
    r = parser(c.array())
    assert labels(r.graph) == {"1 sample api calls", "2 execute api calls", "3 filter api calls"}
    assert edges_by_label(r.graph) == {("1 sample api calls", "2 execute api calls"),
                                       ("2 execute api calls", "3 filter api calls")}
    strays = [x for x in r.evidence["shape_text"]["read"] if x.get("stray")]
    assert [x["text"] for x in strays] == ["1"]


def _inside(w: int = 300, h: int = 120) -> np.ndarray:
    return np.full((h, w, 3), 255, np.uint8)


def test_a_glyph_in_the_row_of_a_line_or_on_its_own_row_above_is_stray():
    crop = _inside()
    crop[62:78, 30:40] = 0                   # a digit before the words, in their row
    crop[60:80, 60:250] = 0                  # the words the OCR read (a solid bar here)
    crop[20:36, 60:70] = 0                   # a step number on its own row, left-aligned above
    line = [(58.0, 58.0, 252.0, 82.0)]
    assert stray_glyphs(crop, line, [24.0], 24.0) == [(60.0, 20.0, 70.0, 36.0), (30.0, 62.0, 40.0, 78.0)]


def test_icons_logos_and_far_marks_are_not_stray_glyphs():
    line = [(58.0, 58.0, 252.0, 82.0)]
    crop = _inside()
    crop[60:80, 60:250] = 0
    crop[62:78, 30:42] = (240, 138, 36)      # an orange icon of glyph size before the words
    assert stray_glyphs(crop, line, [24.0], 24.0) == []
    crop = _inside()
    crop[60:80, 60:250] = 0
    crop[10:110, 265:295] = 0                # a black logo four lines tall beside them
    assert stray_glyphs(crop, line, [24.0], 24.0) == []
    crop = _inside(300, 160)
    crop[60:80, 60:250] = 0
    crop[120:136, 270:280] = 0               # a mark in the far corner below the line's end
    assert stray_glyphs(crop, line, [24.0], 24.0) == []
    crop = _inside()
    crop[60:80, 60:250] = 0                  # nothing beside the words
    assert stray_glyphs(crop, line, [24.0], 24.0) == []


def test_beside_line_rows_and_alignment():
    line = (20.0, 40.0, 200.0, 60.0)
    assert _beside_line((214.0, 42.0, 226.0, 58.0), line, 20.0)        # after the line, in its row
    assert not _beside_line((240.0, 42.0, 252.0, 58.0), line, 20.0)    # 2 heights after it
    assert _beside_line((104.0, 64.0, 116.0, 80.0), line, 20.0)        # centred below it
    assert not _beside_line((22.0, 90.0, 30.0, 108.0), line, 20.0)     # a line height and more below


def test_labelled_boxes_are_the_texted_boxes_holding_no_other_shape():
    text = [TextBox(0, "Sample", (10, 10, 70, 30), 0.9), TextBox(1, "Panel", (210, 10, 260, 30), 0.9)]
    box = Shape(0, "rounded", (0, 0, 80, 40), (), (255, 255, 255), 1.0, 3200.0)
    empty = Shape(1, "rect", (100, 0, 140, 40), (), (255, 255, 255), 1.0, 1600.0)
    panel = Shape(2, "rect", (200, 0, 400, 200), (), (240, 240, 240), 1.0, 40000.0)
    inner = Shape(3, "rect", (250, 100, 300, 150), (), (255, 255, 255), 1.0, 2500.0)
    picture = Shape(4, "image", (0, 100, 80, 140), (), (90, 90, 90), 1.0, 3200.0)
    got = labelled_boxes([box, empty, panel, inner, picture], text + [TextBox(2, "x", (20, 110, 30, 130), 0.9)],
                         20.0, 10.0)
    assert [s.id for s in got] == [0]


def test_the_worked_examples_of_the_shape_reader_hold():
    assert doctest.testmod(shape_text).failed == 0
