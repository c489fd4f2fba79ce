"""Parse reliability (sciflow/agents/reliability.py): deterministic, in [0, 1], and lower when the
evidence is worse: a clean render scores higher than the same render with an arrowhead erased or
a box's outline removed (both drawn by hand here)."""

from __future__ import annotations

import json

import pytest

from sciflow.agents.reliability import SIGNALS, estimate, load_coefficients
from tests.parser.drawing import Canvas


def chain(erase_head: bool = False, no_outline: bool = False) -> Canvas:
    """Encoder -> Fusion -> Decoder in a row, Memory -> Fusion from below."""
    c = Canvas(900, 360)
    c.box("Encoder", 40, 60)
    if no_outline:  # the label alone, where the box was
        c.text("Fusion", 415, 85)
        c.boxes["Fusion"] = (340, 60, 490, 110)
    else:
        c.box("Fusion", 340, 60)
    c.box("Decoder", 640, 60)
    c.box("Memory", 340, 250)
    c.arrow([(190, 85), (336, 85)])
    if erase_head:
        c.line([(490, 85), (636, 85)])
    else:
        c.arrow([(490, 85), (636, 85)])
    c.arrow([(415, 250), (415, 114)])
    return c


@pytest.fixture(scope="module")
def parsed(parser):
    return {
        name: parser(chain(**kw).array(), item_id=name).graph
        for name, kw in {"clean": {}, "head": {"erase_head": True}, "outline": {"no_outline": True}}.items()
    }


def test_every_parse_carries_reliability_and_signals(parsed):
    for g in parsed.values():
        r = g.meta["parse_reliability"]
        assert isinstance(r, float) and 0.0 <= r <= 1.0
        sig = g.meta["reliability_signals"]
        assert set(SIGNALS) <= set(sig)
        assert all(0.0 <= float(sig[k]) <= 1.0 for k in SIGNALS)
        assert sig["layout"] is False and sig["layout_disagreement"] == 0.0


def test_reliability_is_deterministic(parser, parsed):
    again = parser(chain().array(), item_id="clean").graph
    assert again.meta["parse_reliability"] == parsed["clean"].meta["parse_reliability"]
    assert json.dumps(again.meta["reliability_signals"], sort_keys=True) == json.dumps(
        parsed["clean"].meta["reliability_signals"], sort_keys=True)


def test_clean_render_scores_higher_than_an_erased_arrowhead(parsed):
    clean, bad = parsed["clean"].meta, parsed["head"].meta
    assert bad["reliability_signals"]["headless"] > clean["reliability_signals"]["headless"]
    assert clean["parse_reliability"] > bad["parse_reliability"]


def test_clean_render_scores_higher_than_a_box_without_outline(parsed):
    clean, bad = parsed["clean"].meta, parsed["outline"].meta
    # the label without its box is a node found by the OCR alone (or text nobody used), and the
    # arrows to it attach to nothing: which of these the parser shows depends on how it reads it
    rose = [k for k in ("single_agent", "text_unassigned", "dangling_ends", "isolated")
            if bad["reliability_signals"][k] > clean["reliability_signals"][k]]
    assert rose, (clean["reliability_signals"], bad["reliability_signals"])
    assert clean["parse_reliability"] > bad["parse_reliability"]


def test_estimate_formula_by_hand():
    coef = {"intercept": 1.0, "weights": {"headless": 2.0, "isolated": 0.5}}
    # sigmoid(1 - 2 * 0.5 - 0.5 * 1) = sigmoid(-0.5) = 0.377541
    assert estimate({"headless": 0.5, "isolated": 1.0}, coef) == 0.3775
    assert estimate({}, coef) == 0.7311  # sigmoid(1)
    assert estimate({"headless": 1e9}, coef) == 0.0  # clamped, never an overflow


def test_shipped_coefficients_are_monotone_and_complete():
    coef = load_coefficients()
    assert set(coef["weights"]) == set(SIGNALS)
    assert all(w >= 0.0 for w in coef["weights"].values())
    assert set(coef["fit"]["items"]) == {"graphviz", "pillow", "mermaid", "paper"}
    layout = coef["with_layout"]  # the model for parses where the layout detector found boxes
    assert set(layout["weights"]) == set(SIGNALS) and all(w >= 0.0 for w in layout["weights"].values())
    assert layout["fit"]["args"]["config"] == "benchmarks/configs/detector.toml"


def test_the_layout_model_is_used_when_the_detector_found_boxes(parsed):
    assert parsed["clean"].meta["reliability_signals"]["model"] == "default"


def test_layout_disagreement_by_hand():
    import numpy as np

    from sciflow.agents.diagram import Diagram, GroundedNode, LayoutBox, Stroke
    from sciflow.agents.reliability import layout_disagreement

    box = (10.0, 10.0, 50.0, 40.0)
    node = GroundedNode("s1", "A", box, "rect", 0.9, ((10, 10), (50, 10), (50, 40), (10, 40)))
    d = Diagram(image=np.full((100, 200, 3), 255, np.uint8), nodes=[node])
    assert layout_disagreement(d, [node]) == 0.0  # no detector: no disagreement
    d.layout = [LayoutBox(box, "node", 0.9), LayoutBox((100.0, 10.0, 150.0, 40.0), "node", 0.9),
                LayoutBox((60.0, 20.0, 70.0, 30.0), "arrowhead", 0.9)]
    d.strokes = [Stroke(0, ((65.0, 25.0),), (("s1", 65.0, 25.0, True),), "solid", 2.0, (55.0, 20.0, 75.0, 30.0))]
    # nodes: 1 of 2 detected boxes has no parsed node (0.5); heads: the one head sits in the one
    # detected arrowhead (0.0); mean 0.25
    assert layout_disagreement(d, [node]) == 0.25
    d.strokes = [Stroke(0, ((120.0, 90.0),), (("s1", 120.0, 90.0, True),), "solid", 2.0, (110.0, 80.0, 130.0, 95.0))]
    # now the head is unsupported and the arrowhead missed: (1 + 1) / (1 + 1) = 1.0; mean 0.75
    assert layout_disagreement(d, [node]) == 0.75
