"""Thick strokes (drawn in slide software): square dash ends, wide gaps, long heads."""

from __future__ import annotations

import math

import numpy as np

from .drawing import Canvas, edges_by_label, font, labels


def _thick_dashes(c: Canvas, a: tuple[float, float], b: tuple[float, float], width: int = 12,
                  dash: float = 46.0, gap: float = 26.0) -> None:
    """A dashed line of flat-ended dashes ``dash`` long, ``gap`` apart (about 2 widths, as a
    slide program spaces a thick dashed line), ending in a filled head at ``b``."""
    n = math.hypot(b[0] - a[0], b[1] - a[1])
    ux, uy = (b[0] - a[0]) / n, (b[1] - a[1]) / n
    t = 0.0
    stop = n - 30
    while t < stop:
        t1 = min(stop, t + dash)
        c.d.line([(a[0] + ux * t, a[1] + uy * t), (a[0] + ux * t1, a[1] + uy * t1)], fill="black", width=width)
        t += dash + gap
    c.head(b, (b[0] - ux, b[1] - uy), size=40)


def test_a_thick_dashed_arrow_with_wide_gaps_is_one_edge(parser):
    c = Canvas(760, 420)
    c.box("Black-box LLM", 470, 30, 240, 70)
    c.box("Small Model", 40, 310, 220, 70)
    _thick_dashes(c, (520, 104), (262, 345))
    r = parser(c.array())
    assert labels(r.graph) == {"black-box llm", "small model"}
    assert edges_by_label(r.graph) == {("black-box llm", "small model")}


def test_a_short_thick_arrow_whose_head_is_half_its_length_points_at_its_head(parser):
    c = Canvas(560, 420)
    for name, y in (("Model", 30), ("Prompt", 230)):
        c.d.rectangle((120, y, 440, y + 110), outline="black", width=3)
        c.d.text((280, y + 55), name, font=font(44), fill="black", anchor="mm")
    c.d.line([(280, 228), (280, 180)], fill="black", width=13)
    c.d.polygon([(280, 143), (262, 181), (298, 181)], fill="black")  # 38 of the arrow's 85 px
    r = parser(c.array())
    assert edges_by_label(r.graph) == {("prompt", "model")}


def test_compare_ends_finds_a_head_longer_than_a_third_of_its_arrow():
    from sciflow.agents.topology_coder.attach import Contact
    from sciflow.agents.topology_coder.components import Comp
    from sciflow.agents.topology_coder.heads import compare_ends

    m = np.zeros((40, 75), bool)
    m[14:27, 36:75] = True                       # a 13 px shaft, 39 px long ...
    for k in range(37):                          # ... and a filled head 36 px wide, 37 long
        half = int(round(18 * k / 36))
        m[20 - half : 21 + half, k] = True
    comps = {0: Comp(0, 100, 50, m, width=12.9)}
    cts = [Contact(0, 0, 100.0, 70.0), Contact(0, 1, 174.0, 70.0)]
    compare_ends(cts, comps, [0])
    assert [c.head for c in cts] == [True, False]
    # the same shaft alone, 75 px: no end stands out
    plain = np.zeros((40, 75), bool)
    plain[14:27, :] = True
    cts = [Contact(0, 0, 100.0, 70.0), Contact(0, 1, 174.0, 70.0)]
    compare_ends(cts, {0: Comp(0, 100, 50, plain, width=12.9)}, [0])
    assert [c.head for c in cts] == [False, False]


def test_square_ends_of_a_thick_slanted_dash_point_along_it():
    """A flat-ended dash 12 px wide at 20 degrees, drawn anti-aliased (4x supersampled) and
    thresholded as ink: its skeleton forks to the corners at both ends."""
    from PIL import Image, ImageDraw

    from sciflow.agents.topology_coder.components import Comp, describe

    ux, uy = math.cos(math.radians(20)), math.sin(math.radians(20))
    nx, ny = -uy * 6, ux * 6
    big = Image.new("L", (320, 320), 0)
    signs = ((-1, 1), (1, 1), (1, -1), (-1, -1))
    pts = [(40 + sx * ux * 22 + sn * nx, 40 + sx * uy * 22 + sn * ny) for sx, sn in signs]
    ImageDraw.Draw(big).polygon([(4 * x, 4 * y) for x, y in pts], fill=255)
    m = np.asarray(big.resize((80, 80), Image.BILINEAR)) > 100
    c = Comp(0, 0, 0, m)
    describe(c)
    assert len(c.ends) == 2 and all(math.isinf(s) for s in c.spurs)
    for x, _y, dx, dy in c.ends:
        along = dx * ux + dy * uy
        # each end leaves along the dash, away from the other end
        assert abs(along) >= 0.95
        assert (along > 0) == (x > 40)


# A thick Mermaid link (hand-drawn look) that turns up into its node 15 px before it: the ink
# the stroke tracer kept round the contact at (30, 20) (the head's tip lies under the node's
# mask), copied from a render (seed 1100045, "Patch Tokenizer" -> "Cross-Modal Decoder").
_HEAD_AFTER_CORNER = """
............###..
......##########.
....############.
..##############.
..#######...####.
.####.......###..
####.............
####.............
####.............
###..............
"""


def _corner_mask(art: str) -> np.ndarray:
    m = np.zeros((60, 60), bool)
    for i, row in enumerate(art.strip().splitlines()):
        for j, ch in enumerate(row):
            m[19 + i, 15 + j] = ch == "#"
    m[29:60, 15:18] = True  # the line goes on down from the corner
    return m


def test_a_head_just_after_the_lines_corner_is_read_in_half_the_window():
    from sciflow.agents.topology_coder.attach import Contact
    from sciflow.agents.topology_coder.components import Comp
    from sciflow.agents.topology_coder.heads import arrowhead

    ct = Contact(0, 0, 30.0, 20.0)
    arrowhead(ct, {0: Comp(0, 0, 0, _corner_mask(_HEAD_AFTER_CORNER), width=2.24, length=90.0)}, [0], 21.0, 0.9)
    assert ct.head
    # the same corner with the line's plain end (the wings taken off) is no head in either window
    plain = _HEAD_AFTER_CORNER.replace("............###..", ".................").replace(
        "..#######...####.", "..#######........").replace(".####.......###..", ".####............")
    ct = Contact(0, 0, 30.0, 20.0)
    arrowhead(ct, {0: Comp(0, 0, 0, _corner_mask(plain), width=2.24, length=90.0)}, [0], 21.0, 0.9)
    assert not ct.head
