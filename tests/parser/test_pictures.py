"""Pictures in figures: photographs, icons and the captions that name them."""

from __future__ import annotations

import numpy as np
from PIL import Image

from .drawing import Canvas, edges_by_label, font, labels


def _photo(w: int = 120, h: int = 120, seed: int = 3) -> np.ndarray:
    """A sky shaded in two directions over a noisy street: no edge inside the sky, many
    colours in it."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    img = np.zeros((h, w, 3), np.uint8)
    img[..., 0] = 90 + 100 * xx / w
    img[..., 1] = 120 + 100 * yy / h
    img[..., 2] = 200
    img[h - h // 3 :] = rng.integers(40, 200, size=(h // 3, w, 3), dtype=np.uint8)
    return img


def test_a_photograph_with_a_smooth_sky_is_one_picture_not_a_box(parser):
    c = Canvas(520, 220)
    c.img.paste(Image.fromarray(_photo()), (30, 60))
    c.text("RGB Image", 90, 35)
    c.box("Encoder", 300, 95, 150, 50)
    c.arrow([(152, 120), (298, 120)])
    r = parser(c.array())
    shapes = r.evidence["shape_hunter"]["shapes"]
    pictures = [s for s in shapes if s[1] == "image"]
    assert len(pictures) == 1
    x0, y0, x1, y1 = pictures[0][2]
    assert abs(x0 - 30) <= 3 and abs(y0 - 60) <= 3 and abs(x1 - 150) <= 3 and abs(y1 - 180) <= 3
    # the sky is shading of the photograph, no box of its own
    assert [s[1] for s in shapes if s[2][0] < 150 and s[2][1] < 180] == ["image"]
    assert labels(r.graph) == {"rgb image", "encoder"}
    assert edges_by_label(r.graph) == {("rgb image", "encoder")}


def test_a_logo_in_a_box_is_no_part_of_its_label(parser):
    """A company mark (two big letters on a coloured tile) below a box's title: the OCR
    reads it as text three and a half times the page's line height; it is a logo."""
    c = Canvas(640, 330)
    c.d.rectangle((300, 20, 600, 230), outline="black", width=3)
    c.d.text((450, 50), "Black-box LLMs", font=font(22), fill="black", anchor="mm")
    c.d.rectangle((400, 85, 500, 185), fill="#d4956f")
    c.d.text((450, 135), "AI", font=font(72), fill="#1a1a1a", anchor="mm")
    c.box("Prompt", 40, 250, 150, 50)
    c.text("Compressed", 115, 40)
    c.arrow([(192, 275), (360, 275), (360, 232)])
    r = parser(c.array())
    assert "black-box llms" in labels(r.graph)
    assert not any("ai" in lab.split() for lab in labels(r.graph))
    assert ("prompt", "black-box llms") in edges_by_label(r.graph)


def test_an_arrow_into_a_picture_beside_its_wide_caption_reaches_the_picture(parser):
    """A stack of small squares captioned by two words wider than the stack: the paper
    beside the stack, above the caption, is no part of the picture, so the arrow arriving
    there from the encoder is not swallowed."""
    c = Canvas(640, 300)
    c.box("Encoder", 30, 60, 220, 110)
    for k in range(3):
        c.d.rectangle((372, 52 + 46 * k, 412, 92 + 46 * k), outline="#aaaaaa", width=2, fill="#e6e6e6")
    c.text("image", 392, 206)
    c.text("embedding", 392, 228)
    c.arrow([(252, 118), (368, 118)])
    c.box("Decoder", 470, 93, 150, 50)
    c.arrow([(416, 118), (468, 118)])
    r = parser(c.array())
    assert edges_by_label(r.graph) == {("encoder", "image embedding"), ("image embedding", "decoder")}


def test_a_fan_out_onto_one_picture_points_away_from_its_branching_end(parser):
    """One line leaves the decoder, splits on a vertical bus, and its three arrows end on
    three pictures that one caption names: the end where it branches is its tail, though
    the branching spreads wider there than the small heads at the pictures."""
    c = Canvas(620, 420)
    c.box("Mask Decoder", 30, 150, 200, 60)
    c.line([(232, 180), (280, 180)])
    c.line([(280, 70), (280, 330)])
    for y in (70, 200, 330):
        c.arrow([(280, y), (346, y)])
        c.img.paste(Image.fromarray(_photo(100, 90, seed=y)), (348, y - 45))
    c.text("valid masks", 398, 395)
    r = parser(c.array())
    assert edges_by_label(r.graph) == {("mask decoder", "valid masks")}
