"""The Grounder and Topology Coder use the Layout Detector's boxes (nodes and arrowheads).

A fixed-answer layout backend registered for the test stands in for the detector, so each
test states exactly what was "detected" and checks what the agents make of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from sciflow.agents import layout
from sciflow.agents.diagram import Diagram, LayoutBox, Shape, TextBox
from sciflow.agents.grounder import Grounder
from sciflow.agents.layout_evidence import arrowhead_support, enclosing_node_box
from sciflow.config import load_config
from sciflow.pipeline import Parser

from .drawing import Canvas, edges_by_label, labels

FIXED: list[LayoutBox] = []


class FixedLayout:
    """Returns the boxes in ``FIXED`` whatever the image."""

    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)

    def detect(self, image: np.ndarray, text_height: float | None = None) -> list[LayoutBox]:
        return list(FIXED)

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "fixed-test"}


@pytest.fixture()
def fixed_parser():
    layout.BACKENDS.add("fixed-test", FixedLayout)
    try:
        yield Parser(load_config(overrides={"parser": {"layout": {"backend": "fixed-test"}}}))
    finally:
        layout.BACKENDS.remove("fixed-test")
        FIXED.clear()


def test_a_detected_arrowhead_gives_a_headless_line_its_direction(fixed_parser):
    c = Canvas(620, 160)
    c.box("Alpha", 30, 50)
    c.box("Beta", 420, 50)
    c.line([(180, 75), (420, 75)])  # no arrowhead drawn: without a detector there is no edge
    FIXED[:] = [LayoutBox((404.0, 67.0, 420.0, 83.0), "arrowhead", 0.9)]
    g = fixed_parser(c.array()).graph
    assert labels(g) == {"alpha", "beta"}
    assert edges_by_label(g) == {("alpha", "beta")}


def test_a_weak_or_distant_detection_changes_nothing(fixed_parser):
    c = Canvas(620, 160)
    c.box("Alpha", 30, 50)
    c.box("Beta", 420, 50)
    c.line([(180, 75), (420, 75)])
    FIXED[:] = [
        LayoutBox((404.0, 67.0, 420.0, 83.0), "arrowhead", 0.3),  # below layout_min_conf 0.5
        LayoutBox((280.0, 120.0, 296.0, 136.0), "arrowhead", 0.95),  # far from both contacts
    ]
    assert fixed_parser(c.array()).graph.edges == ()


def test_drawn_direction_wins_without_detections(fixed_parser):
    c = Canvas(620, 160)
    c.box("Alpha", 30, 50)
    c.box("Beta", 420, 50)
    c.arrow([(420, 75), (180, 75)])
    FIXED[:] = []
    assert edges_by_label(fixed_parser(c.array()).graph) == {("beta", "alpha")}


def _free_label_diagram() -> Diagram:
    d = Diagram(image=np.full((200, 400, 3), 255, np.uint8))
    d.text_lines = [TextBox(0, "Text Encoder", (60, 90, 160, 110), 0.99)]
    return d


def test_free_text_inside_a_detected_node_box_is_a_node():
    d = _free_label_diagram()
    d.layout = [LayoutBox((40.0, 80.0, 180.0, 120.0), "node", 0.8)]
    Grounder({}).run(d)
    [n] = d.nodes
    assert (n.kind, n.label, n.candidate, n.bbox) == ("detected", "Text Encoder", False, (40.0, 80.0, 180.0, 120.0))
    assert n.id == "d0" and n.confidence == pytest.approx(0.99 * 0.8)


def test_free_text_stays_a_candidate_without_a_confident_detection():
    box = (40.0, 80.0, 180.0, 120.0)
    for boxes in ([], [LayoutBox(box, "node", 0.4)], [LayoutBox(box, "text", 0.9)]):
        d = _free_label_diagram()
        d.layout = boxes
        Grounder({}).run(d)
        assert [(n.kind, n.candidate) for n in d.nodes] == [("text", True)]
    d = _free_label_diagram()
    d.layout = [LayoutBox((40.0, 80.0, 180.0, 120.0), "node", 0.9)]
    Grounder({"layout_nodes": False}).run(d)
    assert [n.kind for n in d.nodes] == ["text"]


def test_a_detected_box_over_a_found_shape_adds_no_node():
    d = Diagram(image=np.full((200, 400, 3), 255, np.uint8))
    poly = ((40.0, 80.0), (180.0, 80.0), (180.0, 120.0), (40.0, 120.0))
    d.shapes = [Shape(0, "rect", (40, 80, 180, 120), poly, (255, 255, 255), 0.95, 140 * 40)]
    d.text_lines = [
        TextBox(0, "Encoder", (70, 90, 150, 110), 0.99),
        TextBox(1, "caption", (250, 90, 330, 110), 0.99),
    ]
    # a sloppy detection holding the node and the caption: the caption must not become a node
    d.layout = [LayoutBox((30.0, 70.0, 340.0, 130.0), "node", 0.9)]
    Grounder({}).run(d)
    assert sorted((n.kind, n.label) for n in d.nodes) == [("rect", "Encoder"), ("text", "caption")]


def test_evidence_queries():
    boxes = [
        LayoutBox((10.0, 10.0, 20.0, 20.0), "arrowhead", 0.6),
        LayoutBox((12.0, 12.0, 22.0, 22.0), "arrowhead", 0.8),
        LayoutBox((0.0, 0.0, 100.0, 50.0), "node", 0.9),
        LayoutBox((20.0, 5.0, 80.0, 45.0), "node", 0.7),
    ]
    assert arrowhead_support(boxes, 21.0, 21.0, radius=0.0) == 0.8
    assert arrowhead_support(boxes, 21.0, 21.0, radius=0.0, min_conf=0.9) == 0.0
    assert enclosing_node_box(boxes, (30.0, 10.0, 60.0, 30.0)).bbox == (20.0, 5.0, 80.0, 45.0)  # the smallest
    assert enclosing_node_box(boxes, (30.0, 10.0, 60.0, 30.0), min_conf=0.8).bbox == (0.0, 0.0, 100.0, 50.0)
    assert enclosing_node_box(boxes, (90.0, 40.0, 140.0, 60.0)) is None  # mostly outside every box
