"""Agents on hand-made Diagrams (no OCR): Shape Hunter kinds, Grounder rules, Architect."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from sciflow.agents.diagram import Diagram, EdgeEvidence, GroundedNode, Operator, Shape, TextBox
from sciflow.agents.graph_architect import GraphArchitect
from sciflow.agents.grounder import Grounder
from sciflow.agents.shape_hunter import OpenCVShapes, find_operators


def _img(draw_fn, w=700, h=300):
    im = Image.new("RGB", (w, h), "white")
    draw_fn(ImageDraw.Draw(im))
    return np.asarray(im)


def test_shape_kinds():
    def draw(d):
        d.rectangle((20, 20, 160, 90), outline="black", width=2)
        d.ellipse((200, 20, 360, 100), outline="black", width=2, fill=(220, 230, 250))
        d.polygon([(470, 20), (560, 70), (470, 120), (380, 70)], outline="black", fill=(250, 240, 200))
        d.rounded_rectangle((20, 150, 200, 230), radius=18, outline="black", width=2)
        d.polygon([(260, 230), (300, 150), (460, 150), (420, 230)], outline="black", fill=(240, 220, 220))

    shapes = OpenCVShapes({}).find(_img(draw), [])
    kinds = sorted(s.kind for s in shapes)
    assert kinds == sorted(["rect", "ellipse", "diamond", "rounded", "parallelogram"])


def test_container_parent_and_operator():
    def draw(d):
        d.rectangle((10, 10, 400, 280), outline="gray", width=2, fill=(235, 240, 250))
        d.rectangle((40, 100, 180, 160), outline="black", width=2, fill="white")
        d.ellipse((520, 120, 560, 160), outline="black", width=2)
        d.line((540, 122, 540, 158), fill="black", width=2)
        d.line((522, 140, 558, 140), fill="black", width=2)

    img = _img(draw)
    shapes = OpenCVShapes({}).find(img, [])
    outer = max(shapes, key=lambda s: s.area)
    inner = [s for s in shapes if s.parent == outer.id]
    assert len(inner) == 1 and inner[0].bbox[0] < 45
    ops = find_operators(img, 20.0, {})
    assert [o.symbol for o in ops] == ["⊕"]
    assert abs(ops[0].center[0] - 540) < 3


def test_grounder_rules_on_hand_made_evidence():
    img = np.full((300, 700, 3), 255, np.uint8)
    box = ((40.0, 100.0), (180.0, 100.0), (180.0, 160.0), (40.0, 160.0))
    frame = ((10.0, 10.0), (400.0, 10.0), (400.0, 280.0), (10.0, 280.0))
    d = Diagram(image=img)
    d.shapes = [
        Shape(0, "rect", (10, 10, 400, 280), frame, (235, 240, 250), 0.9, 390 * 270),
        Shape(1, "rect", (40, 100, 180, 160), box, (255, 255, 255), 0.99, 140 * 60, parent=0),
    ]
    d.text_lines = [
        TextBox(0, "Encoder Stage", (150, 20, 260, 40), 0.99),
        TextBox(1, "Image", (80, 105, 140, 128), 0.98),
        TextBox(2, "Encoder", (70, 130, 150, 155), 0.97),
        TextBox(3, "points", (500, 200, 560, 222), 0.99),
    ]
    d.operators = [Operator("⊕", (540.0, 140.0), 20.0, 0.95)]
    Grounder({}).run(d)
    by_kind = {}
    for n in d.nodes:
        by_kind.setdefault(n.kind, []).append(n)
    assert [n.label for n in by_kind["rect"]] == ["Image Encoder"]
    assert by_kind["rect"][0].group == "g0"
    assert [n.label for n in by_kind["container"]] == ["Encoder Stage"] and by_kind["container"][0].candidate
    assert [n.label for n in by_kind["operator"]] == ["⊕"]
    assert sorted(n.label for n in by_kind["text"]) == ["Encoder Stage", "points"]
    assert d.groups[0].label == "Encoder Stage"


def test_architect_keeps_attached_candidates_and_merges_duplicates():
    img = np.full((200, 400, 3), 255, np.uint8)
    sq = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0))
    d = Diagram(image=img, item_id="x", scale=2.0)
    d.nodes = [
        GroundedNode("s0", "Encoder", (10, 10, 100, 50), "rect", 0.9, sq),
        GroundedNode("s1", "Decoder", (200, 10, 300, 50), "rect", 0.9, sq),
        GroundedNode("s2", "decoder", (205, 12, 300, 50), "rect", 0.8, sq),
        GroundedNode("t0", "points", (10, 120, 60, 140), "text", 0.9, sq, candidate=True),
        GroundedNode("t1", "Figure 1: overview", (10, 170, 200, 190), "text", 0.9, sq, candidate=True),
    ]
    d.edges = [
        EdgeEvidence("s0", "s1", 0.9),
        EdgeEvidence("s0", "s2", 0.7, label="features"),
        EdgeEvidence("t0", "s0", 0.8),
        EdgeEvidence("s1", "s1", 0.8),
    ]
    GraphArchitect({}).run(d)
    g = d.graph
    assert [n.label for n in g.nodes] == ["Encoder", "Decoder", "points"]
    assert g.nodes[0].bbox == (5.0, 5.0, 50.0, 25.0)
    assert [(e.source, e.target, e.label) for e in g.edges] == [("n1", "n2", "features"), ("n3", "n1", None)]


def test_a_title_whose_text_box_reaches_above_the_frame_names_the_container():
    # OCR boxes are padded: a title set just under a frame's top line has a box reaching
    # above the line (Graphviz cluster labels); its centre is inside, so it names the frame.
    # A text mostly above the frame (a caption over it) does not.
    img = np.full((300, 700, 3), 255, np.uint8)
    frame = ((100.0, 40.0), (600.0, 40.0), (600.0, 280.0), (100.0, 280.0))
    box = ((150.0, 120.0), (300.0, 120.0), (300.0, 180.0), (150.0, 180.0))
    for title_box, expected in (((300.0, 34.0, 420.0, 76.0), "TRACKING"), ((300.0, 8.0, 420.0, 48.0), None)):
        d = Diagram(image=img)
        d.shapes = [
            Shape(0, "rect", (100, 40, 600, 280), frame, (255, 255, 255), 0.9, 500 * 240),
            Shape(1, "rect", (150, 120, 300, 180), box, (255, 255, 255), 0.99, 150 * 60, parent=0),
        ]
        d.text_lines = [TextBox(0, "TRACKING", title_box, 0.99), TextBox(1, "Extract ORB", (170, 135, 280, 160), 0.99)]
        Grounder({}).run(d)
        assert [g.label for g in d.groups] == [expected]
