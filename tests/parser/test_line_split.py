"""An OCR line spanning two labels is split (issue 17, "labels merged across a box edge"; the
Text Spotter): two captions side by side with a gap far wider than a word space (sys_slora_tp's
"matmul" and "all-gather" under two boxes), or two labels with a long arrow between them."""

from __future__ import annotations

import numpy as np
import pytest

from sciflow.agents.diagram import Diagram
from sciflow.agents.line_split import line_pieces

from .drawing import Canvas, edges_by_label, font, labels


def _read(parser, image: np.ndarray) -> list[str]:
    d = Diagram(image=image)
    parser.agents["text_spotter"].run(d)
    return [t.text for t in d.text_lines]


@pytest.mark.parametrize("gap", [16, 26])
def test_two_words_a_wide_gap_apart_are_two_lines(parser, gap):
    c = Canvas(520, 120)
    c.d.text((40, 60), "matmul", font=font(22), fill="black", anchor="lm")
    c.d.text((40 + c.d.textlength("matmul", font=font(22)) + gap, 60), "all-gather", font=font(22),
             fill="black", anchor="lm")
    assert _read(parser, c.array()) == ["matmul", "all-gather"]


def test_words_a_space_apart_stay_one_line(parser):
    c = Canvas(520, 120)
    c.d.text((40, 60), "Image Encoder Head", font=font(22), fill="black", anchor="lm")
    assert _read(parser, c.array()) == ["Image Encoder Head"]


def test_two_labels_a_short_arrow_apart_are_two_lines(parser):
    """The detector reads "Encoder", a 40 px arrow and "Decoder" as one line ("EncoderDecoder")."""
    c = Canvas(520, 120)
    c.d.text((40, 60), "Encoder", font=font(22), fill="black", anchor="lm")
    x = 46 + c.d.textlength("Encoder", font=font(22))
    c.d.line([(x, 60), (x + 40, 60)], fill="black", width=2)
    c.d.polygon([(x + 50, 60), (x + 40, 55), (x + 40, 65)], fill="black")
    c.d.text((x + 56, 60), "Decoder", font=font(22), fill="black", anchor="lm")
    assert _read(parser, c.array()) == ["Encoder", "Decoder"]


def test_captions_side_by_side_name_their_pictures(parser):
    """Two narrow unlabelled boxes (pictures of a matrix) with their captions under them, wider
    than the boxes, and an arrow between the boxes: the captions, read as one line before,
    named neither box."""
    c = Canvas(360, 220)
    for x in (60, 200):
        c.d.rectangle((x, 40, x + 60, 130), outline="#1f3b73", width=2, fill="#e6e6e6")
    c.arrow([(120, 85), (200, 85)])
    c.d.text((90, 160), "matmul", font=font(26), fill="black", anchor="mm")
    c.d.text((230, 160), "all-gather", font=font(26), fill="black", anchor="mm")
    g = parser(c.array()).graph
    assert labels(g) == {"matmul", "all-gather"}
    assert edges_by_label(g) == {("matmul", "all-gather")}


def test_a_hyphen_an_underscore_or_a_box_edge_split_nothing():
    img = np.full((30, 300, 3), 255, np.uint8)
    for x in (10, 20, 30):
        img[8:22, x:x + 6] = 0
    img[14:16, 40:52] = 0                       # a hyphen, 0.85 capital heights
    for x in (56, 66, 76):
        img[8:22, x:x + 6] = 0
    img[20:22, 84:104] = 0                      # an underscore
    img[8:22, 106:112] = 0
    assert line_pieces(img, (0.0, 4.0, 120.0, 26.0)) == [(10.0, 112.0)]
