"""Shape Hunter (opencv) and Text Spotter fixes on small drawn images with known answers:
diamond tips, cylinder caps vs arrowheads, light-filled ellipses, regions closed in by
connectors, and Latin diacritic folding."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from sciflow.agents.diagram import TextBox
from sciflow.agents.shape_hunter import OpenCVShapes
from sciflow.agents.text_spotter import clean_text, fold_latin_diacritics


def _img(draw_fn, w=600, h=400):
    im = Image.new("RGB", (w, h), "white")
    draw_fn(ImageDraw.Draw(im))
    return np.asarray(im).copy()


def _tb(i, text, box):
    return TextBox(i, text, tuple(float(v) for v in box), 0.9)


def _holding(shapes, x, y):
    return [s for s in shapes if s.bbox[0] <= x <= s.bbox[2] and s.bbox[1] <= y <= s.bbox[3]]


def test_diamond_polygon_reaches_its_sharp_tips():
    # a wide diamond: its left/right tips are acute, the interior stops well short of them
    tips = [(300, 100), (560, 150), (300, 200), (40, 150)]

    def draw(d):
        d.polygon(tips, outline="black", fill=(230, 240, 230), width=2)

    shapes = OpenCVShapes({}).find(_img(draw), [_tb(0, "Gate", (275, 142, 325, 158))])
    dia = [s for s in shapes if s.kind == "diamond"]
    assert len(dia) == 1
    xs = [p[0] for p in dia[0].polygon]
    ys = [p[1] for p in dia[0].polygon]
    assert min(xs) <= 42 and max(xs) >= 558  # the tips, not the interior's blunt ends
    assert min(ys) <= 101 and max(ys) >= 199


def test_arrowhead_on_a_rounded_box_is_not_a_cylinder_cap():
    # the "cap" read above the box is the flat anti-aliased row under the arrowhead: a cap's
    # upper arc rises in the middle
    fill = (255, 242, 204)

    def draw(d):
        d.rounded_rectangle((200, 150, 360, 220), radius=12, outline="black", width=1, fill=fill)
        d.line((280, 60, 280, 140), fill="black", width=1)
        d.polygon([(280, 149), (273, 136), (287, 136)], fill="black")

    img = _img(draw)
    # anti-aliasing: a 1-px row just above the outline close to the fill colour
    img[149, 206:355] = (238, 226, 190)
    shapes = OpenCVShapes({}).find(img, [_tb(0, "Graph Module", (228, 158, 332, 180))])
    box = _holding(shapes, 280, 185)
    assert len(box) == 1
    assert box[0].kind != "cylinder"
    assert box[0].bbox[1] >= 145  # the polygon does not swallow the arrowhead (tip at y=149, base 136)


def test_real_cylinder_cap_still_found():
    def draw(d):
        fill = (245, 245, 245)
        d.rectangle((200, 130, 380, 230), fill=fill)
        d.ellipse((200, 215, 380, 245), outline="black", fill=fill, width=2)
        d.rectangle((202, 130, 378, 230), fill=fill)
        d.line((200, 130, 200, 230), fill="black", width=2)
        d.line((379, 130, 379, 230), fill="black", width=2)
        d.ellipse((200, 115, 380, 145), outline="black", fill=fill, width=2)

    shapes = OpenCVShapes({}).find(_img(draw), [_tb(0, "Memory", (255, 175, 325, 195))])
    body = _holding(shapes, 290, 185)
    assert body and min(body, key=lambda s: s.area).kind == "cylinder"
    assert min(body, key=lambda s: s.area).bbox[1] <= 118


def test_light_filled_ellipse_next_to_a_connector_loop():
    # #f5f5f5 ellipse on white: a white patch closed in by connectors touches its outline
    def draw(d):
        d.ellipse((150, 150, 350, 210), outline="black", fill=(245, 245, 245), width=1)
        d.line((250, 150, 250, 60), fill="black", width=1)
        d.line((250, 60, 500, 60), fill="black", width=1)
        d.line((500, 60, 500, 180), fill="black", width=1)
        d.line((500, 180, 349, 180), fill="black", width=1)

    shapes = OpenCVShapes({}).find(_img(draw), [_tb(0, "Semantic Loss", (200, 172, 300, 188))])
    found = _holding(shapes, 250, 180)
    assert [s.kind for s in found] == ["ellipse"]
    assert found[0].bbox[2] <= 360  # not merged with the white patch on its right


def test_patch_closed_in_by_connectors_is_not_a_shape():
    def draw(d):
        d.rectangle((100, 40, 260, 90), outline="black", width=2, fill=(220, 235, 250))
        d.rectangle((100, 290, 260, 340), outline="black", width=2, fill=(220, 235, 250))
        # two connectors and a container border close in an empty white patch
        d.line((140, 90, 140, 290), fill="black", width=1)
        d.line((220, 90, 220, 290), fill="black", width=1)

    shapes = OpenCVShapes({}).find(
        _img(draw), [_tb(0, "Encoder", (150, 55, 210, 75)), _tb(1, "Decoder", (150, 305, 210, 325))]
    )
    assert _holding(shapes, 180, 190) == []
    assert len(shapes) == 2


def test_textless_filled_box_is_kept():
    def draw(d):
        d.rectangle((100, 100, 200, 160), outline="black", width=2, fill=(250, 220, 200))
        d.rectangle((300, 100, 400, 160), outline="black", width=2, fill=(220, 235, 250))

    shapes = OpenCVShapes({}).find(_img(draw), [_tb(0, "Label", (320, 120, 380, 140))])
    assert len(shapes) == 2


def test_fold_latin_diacritics():
    assert fold_latin_diacritics("aggreğator") == "aggregator"
    assert fold_latin_diacritics("décoder") == "decoder"
    assert fold_latin_diacritics("Zu\u0308rich") == "Zurich"  # decomposed input
    assert fold_latin_diacritics("ﬁlter") == "filter"
    # Greek, math and operator symbols, superscripts: kept as read
    for s in ("α-Net", "β", "x ⊕ y", "2×", "x²", "Ω", "ά", "∑ loss"):
        assert fold_latin_diacritics(s) == s
    assert clean_text(fold_latin_diacritics("→ Décoder")) == "Decoder"


def test_cap_text_band_is_not_a_cylinder_cap():
    # a label packed against the top of a box splits off a thin band of fill above it: that
    # band holds the label's top, so it is not a cap (the box must not be read as a cylinder)
    fill = (255, 242, 204)

    def draw(d):
        d.rectangle((200, 150, 360, 230), outline="black", width=2, fill=fill)
        d.rectangle((230, 156, 330, 175), fill="black")  # the label's ink, touching no outline

    img = _img(draw)
    img[149, 202:358] = (238, 226, 190)
    shapes = OpenCVShapes({}).find(img, [_tb(0, "Graph Module", (228, 154, 332, 180))])
    assert all(s.kind != "cylinder" for s in shapes)
