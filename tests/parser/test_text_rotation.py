"""Labels drawn at 90 or 270 degrees (issue 17, cause 4: rotated labels were read upside down
or not at all): tall boxes with rotated names, multi-line rotated labels, and the frame in
which rotated lines group."""

from __future__ import annotations

import doctest
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image, ImageDraw

from sciflow.agents import text_rotation
from sciflow.agents.diagram import TextBox
from sciflow.agents.shape_hunter.ink import without_glyphs
from sciflow.agents.text_rotation import reread_tall
from sciflow.agents.text_spotter import group_lines

from .drawing import Canvas, edges_by_label, font, labels


def rotated_box(c: Canvas, lines: list[str], x: int, y: int, w: int, h: int, rotation: int) -> None:
    """A tall box whose label (one or more lines) is drawn turned ``rotation`` degrees
    counter-clockwise, the way TikZ or PowerPoint set a name in a narrow box."""
    c.d.rectangle((x, y, x + w, y + h), outline="black", width=2, fill="white")
    f = font(18)
    tw = max(int(c.d.textlength(s, font=f)) for s in lines) + 8
    lh = 24
    tile = Image.new("RGB", (tw, lh * len(lines) + 6), "white")
    td = ImageDraw.Draw(tile)
    for i, s in enumerate(lines):
        td.text((tw / 2, 3 + lh * i + lh / 2), s, font=f, fill="black", anchor="mm")
    turned = tile.rotate(rotation, expand=True, fillcolor="white")
    c.img.paste(turned, (x + (w - turned.width) // 2, y + (h - turned.height) // 2))
    c.boxes[" ".join(lines)] = (x, y, x + w, y + h)


@pytest.mark.parametrize("rotation", [90, 270])
def test_names_drawn_turned_in_tall_boxes_are_read_and_joined(parser, rotation):
    c = Canvas(620, 260)
    c.box("Input", 20, 105, w=110)
    rotated_box(c, ["Conv Block"], 200, 30, 50, 200, rotation)
    rotated_box(c, ["Downsample"], 330, 30, 50, 200, rotation)
    c.box("Output", 460, 105, w=130)
    c.arrow([(130, 130), (200, 130)])
    c.arrow([(250, 130), (330, 130)])
    c.arrow([(380, 130), (460, 130)])
    g = parser(c.array()).graph
    assert labels(g) == {"input", "conv block", "downsample", "output"}
    assert edges_by_label(g) == {("input", "conv block"), ("conv block", "downsample"), ("downsample", "output")}


@pytest.mark.parametrize("rotation", [90, 270])
def test_a_two_line_label_drawn_turned_is_one_name_in_reading_order(parser, rotation):
    c = Canvas(420, 280)
    rotated_box(c, ["Vision", "Mixer"], 60, 30, 90, 220, rotation)
    c.box("Head", 250, 115, w=120)
    c.arrow([(150, 140), (250, 140)])
    g = parser(c.array()).graph
    assert labels(g) == {"vision mixer", "head"}
    assert edges_by_label(g) == {("vision mixer", "head")}


def test_rotated_lines_group_in_their_own_frame():
    # "Vision" then "Mixer", drawn at 90 degrees: the first line lies left; at 270 it lies right
    left, right = (100, 40, 120, 140), (124, 60, 144, 120)
    up = group_lines([TextBox(0, "Vision", left, 0.9, rotation=90), TextBox(1, "Mixer", right, 0.9, rotation=90)])
    assert [(lb.text, lb.rotation, lb.bbox) for lb in up] == [("Vision Mixer", 90, (100, 40, 144, 140))]
    down = group_lines([TextBox(0, "Mixer", left, 0.9, rotation=270), TextBox(1, "Vision", right, 0.9, rotation=270)])
    assert [lb.text for lb in down] == ["Vision Mixer"]
    # lines of different rotations never share a label, however close
    mixed = group_lines([TextBox(0, "Vision", left, 0.9, rotation=90), TextBox(1, "Mixer", right, 0.9)])
    assert sorted(lb.text for lb in mixed) == ["Mixer", "Vision"]


def test_a_tall_line_keeps_the_more_confident_of_its_two_turned_readings():
    img = np.full((120, 60, 3), 255, np.uint8)
    img[10:20, 20:40] = 0  # ink at the top of the tall box: which way a crop was turned shows
    seen = []

    def recognize(crops):
        seen.extend(c.shape[:2] for c in crops)
        # turned upright for 90 degrees (clockwise), the box's top comes to the crop's right end
        return [("Encoder", 0.97) if c[:, -1].min() == 0 else ("repocuE", 0.61) for c in crops]

    wide = TextBox(1, "Head", (0, 0, 50, 20), 0.8)
    tall = TextBox(0, "repocuE", (20, 10, 40, 110), 0.61)
    out = reread_tall(img, [tall, wide], recognize)
    assert (out[0].text, out[0].confidence, out[0].rotation) == ("Encoder", 0.97, 90)
    assert out[1] == wide  # a wide line is not read again
    assert seen == [(20, 100), (20, 100)]  # both crops turned upright: wider than tall


def test_a_tall_line_read_as_nothing_either_way_is_kept_as_read():
    img = np.full((120, 60, 3), 255, np.uint8)
    line = TextBox(0, "I", (20, 10, 40, 110), 0.7)
    assert reread_tall(img, [line], lambda crops: [("", 0.0)] * len(crops)) == [line]


def test_the_height_of_a_turned_line_is_across_its_glyphs():
    assert TextBox(0, "a", (0, 0, 20, 90), 0.9, rotation=90).height == 20
    assert TextBox(0, "a", (0, 0, 20, 90), 0.9).height == 90


def test_a_line_through_the_margin_of_a_turned_title_is_no_glyph():
    m = np.zeros((60, 30), np.uint8)
    m[0:60, 5] = 255  # a vertical line through the left margin of the box
    box = TextBox(0, "Title", (4.0, 5.0, 24.0, 55.0), 0.9, rotation=90)
    assert int(without_glyphs(m, [box], inset=0.2).sum() // 255) == 60
    m[:] = 0
    m[20:40, 12:16] = 255  # a glyph in the middle
    assert int(without_glyphs(m, [box], inset=0.2).sum()) == 0


def test_docstring_examples():
    assert doctest.testmod(text_rotation).failed == 0


def test_a_narrow_box_its_turned_name_nearly_fills_is_found(parser):
    # the inside of a narrow box lies mostly in the box of its turned label: measured against
    # the label's length instead of its glyph height, it read as a letter's counter and the box
    # (and with it the node and both edges) was lost
    c = Canvas(460, 220)
    c.box("Pool In", 20, 85, w=120)
    c.d.rounded_rectangle((200, 38, 234, 181), radius=6, outline="#6c8ebf", width=2, fill="#dae8fc")
    rotated_box_text(c, "2D Avg Pool", 217, 110, 90)
    c.box("Linear", 300, 85, w=120)
    c.arrow([(140, 110), (200, 110)])
    c.arrow([(234, 110), (300, 110)])
    g = parser(c.array()).graph
    assert labels(g) == {"pool in", "2d avg pool", "linear"}
    assert edges_by_label(g) == {("pool in", "2d avg pool"), ("2d avg pool", "linear")}


def rotated_box_text(c: Canvas, s: str, cx: int, cy: int, rotation: int, size: int = 18) -> None:
    """``s`` drawn turned ``rotation`` degrees counter-clockwise, centred at (cx, cy)."""
    f = font(size)
    tile = Image.new("RGBA", (int(c.d.textlength(s, font=f)) + 4, size + 8), (0, 0, 0, 0))
    ImageDraw.Draw(tile).text((tile.width / 2, tile.height / 2), s, font=f, fill="black", anchor="mm")
    turned = tile.rotate(rotation, expand=True)
    c.img.paste(turned, (cx - turned.width // 2, cy - turned.height // 2), turned)


def test_a_backend_without_its_own_recogniser_reads_each_crop_with_its_detector():
    from sciflow.agents.text_spotter import TextBackend

    class Fake(TextBackend):
        def __init__(self):
            super().__init__({})
            self.shapes = []

        def read(self, image):
            self.shapes.append(image.shape[:2])
            if image.shape[1] < 40:
                return []
            # two words, returned right one first: the reading joins them left to right
            return [TextBox(0, "Block", (30, 5, 50, 15), 0.8), TextBox(1, "Conv", (5, 5, 25, 15), 0.9)]

    b = Fake()
    crops = [np.zeros((10, 30, 3), np.uint8), np.zeros((0, 0, 3), np.uint8), np.zeros((10, 8, 3), np.uint8)]
    assert b.recognize(crops) == [("Conv Block", 0.8), ("", 0.0), ("", 0.0)]
    assert b.shapes == [(20, 40), (20, 18)]  # a white margin of half the height (5 px) on every side


def test_words_on_either_side_of_a_drawn_line_are_two_labels():
    img = np.full((60, 200, 3), 255, np.uint8)
    a, b = TextBox(0, "Mixer", (20, 20, 80, 40), 0.9), TextBox(1, "MLP", (88, 20, 130, 40), 0.9)
    assert [lb.text for lb in group_lines([a, b], image=img)] == ["Mixer MLP"]  # 8 px apart: one label
    img[5:55, 84] = 0  # a box's edge between them
    assert sorted(lb.text for lb in group_lines([a, b], image=img)) == ["MLP", "Mixer"]
    # the same for two lines of a label drawn at 90 degrees, and for lines one above the other
    up = [replace(a, rotation=90, bbox=(20, 20, 40, 80)), replace(b, rotation=90, bbox=(43, 30, 63, 70))]
    tall = np.full((100, 100, 3), 255, np.uint8)
    assert [lb.text for lb in group_lines(up, image=tall)] == ["Mixer MLP"]
    tall[10:90, 41] = 0
    assert len(group_lines(up, image=tall)) == 2
    over = [TextBox(0, "Title", (20, 10, 80, 30), 0.9), TextBox(1, "body", (20, 36, 70, 56), 0.9)]
    ruled = np.full((70, 100, 3), 255, np.uint8)
    assert len(group_lines(over, image=ruled)) == 1
    ruled[33, 5:95] = 0
    assert len(group_lines(over, image=ruled)) == 2


def test_a_dashed_frame_between_two_lines_keeps_them_apart():
    """A figure title just above a dashed container whose own title sits under its top border
    (mm_mplug_owl): the dashed border, ink on about half of its row, runs between them."""
    over = [TextBox(0, "Training Paradigm", (20, 10, 180, 30), 0.9), TextBox(1, "Stage-1", (40, 38, 160, 58), 0.9)]
    page = np.full((70, 200, 3), 255, np.uint8)
    assert len(group_lines(over, image=page)) == 1
    dashes = [x for x in range(0, 200) if x % 12 < 7]
    page[34, dashes] = 90
    assert len(group_lines(over, image=page)) == 2
    # a row of a few marks (an arrowhead, a stray dot) is no rule
    page[34] = 255
    page[34, [60, 61, 62, 100, 101]] = 0
    assert len(group_lines(over, image=page)) == 1



def test_a_narrow_box_its_two_turned_lines_nearly_fill_is_found(parser):
    # the box of a two-line turned label counts as text for the Shape Hunter too: measured
    # unturned (its length taken for its glyph height) it swallowed the narrow box it names
    c = Canvas(460, 220)
    c.box("Pool In", 20, 85, w=120)
    c.d.rectangle((196, 34, 246, 186), outline="#666666", width=2, fill="#b2c9ab")
    rotated_box_text(c, "MambaVision", 211, 110, 90)
    rotated_box_text(c, "Mixer", 232, 110, 90)
    c.box("Linear", 300, 85, w=120)
    c.arrow([(140, 110), (196, 110)])
    c.arrow([(246, 110), (300, 110)])
    g = parser(c.array()).graph
    assert labels(g) == {"pool in", "mambavision mixer", "linear"}
    assert edges_by_label(g) == {("pool in", "mambavision mixer"), ("mambavision mixer", "linear")}
