"""The pinned configuration (sciflow/configs/default.toml) computes the documented formulas.

Every value is computed by hand from the paper's weights written here as literals; the scores
are computed with ``load_config()``, so a changed weight in the shipped TOML fails a test.
A constant-similarity embedder stands in for MiniLM so that the blends are exact.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from conftest import make_graph

from sciflow.config import TextConfig, load_config
from sciflow.format.graph import DiagramGraph, Edge, Node
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.image_level import visual_flow
from sciflow.metrics.overall import overall_score
from sciflow.metrics.text_level import text_level

CONFIG = load_config()


class ConstantEmbedder:
    """Semantic similarity ``value`` for every pair of labels and of texts."""

    name = "constant"
    is_fallback = False

    def __init__(self, value: float):
        self.value = value

    def similarity(self, a, b) -> np.ndarray:
        return np.full((len(a), len(b)), self.value)

    def text_similarity(self, a: str, b: str) -> float:
        return self.value

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def use_store(self, store) -> None:
        return None


def test_graph_weights_0_6_edge_0_4_node():
    ref = make_graph("ABC", [("A", "B"), ("B", "C")])
    pred = make_graph("ABC", [("A", "B"), ("C", "B")])  # node F1 1, edge F1 0.5
    r = graph_level(pred, ref, replace(CONFIG.matching, embedder="none"), CONFIG.graph)
    assert r.score == pytest.approx(0.6 * 0.5 + 0.4 * 1.0)


def test_matching_blend_0_6_string_and_threshold_0_6():
    emb = ConstantEmbedder(0.5)
    ref = make_graph([("r", "Encoder")])
    # identical labels: 0.6 * 1.0 + 0.4 * 0.5 = 0.8
    r = graph_level(make_graph([("p", "Encoder")]), ref, CONFIG.matching, CONFIG.graph, embedder=emb)
    assert r.matching.pairs[0].similarity == pytest.approx(0.8)
    # "abcxy" / "abcde": string 0.6 (Indel 1 - 4/10), blend 0.6 * 0.6 + 0.4 * 0.5 = 0.56 < 0.6
    r = graph_level(make_graph([("p", "abcxy")]), make_graph([("r", "abcde")]), CONFIG.matching, embedder=emb)
    assert r.matching.pairs == ()
    # string alone (the fallback): 0.6, exactly the threshold, is matched
    r = graph_level(make_graph([("p", "abcxy")]), make_graph([("r", "abcde")]),
                    replace(CONFIG.matching, embedder="none"))
    assert [p.similarity for p in r.matching.pairs] == [0.6]


def test_text_weights_0_3_coverage_0_3_faithfulness_0_4_alignment():
    ref = DiagramGraph.from_dict({**make_graph([("e", "Encoder"), ("d", "Decoder")]).to_dict(),
                                  "prompt": {"text": "x", "components": ["Encoder", "Decoder"], "relations": []}})
    pred = make_graph([("a", "Encoder"), ("q", "Quantum Router")])
    judge = replace(CONFIG.text, alignment_backend="judge")
    r = text_level(pred, ref, judge, replace(CONFIG.matching, embedder="none"), extra_texts=["Decoder", "Encoder"],
                   judge_alignment=0.25)
    # coverage 1/2 (free text never covers), faithfulness 3/4 (Quantum Router), alignment 0.25
    assert (r.coverage, r.faithfulness) == (0.5, 0.75)
    assert r.score == pytest.approx(0.3 * 0.5 + 0.3 * 0.75 + 0.4 * 0.25)


def test_alignment_weights_0_6_relations_0_4_similarity():
    ref = make_graph([("e", "Encoder"), ("d", "Decoder")], [("e", "d")])
    pred = make_graph([("a", "Encoder"), ("b", "Decoder")], [("b", "a")])  # relation F1 0
    emb = ConstantEmbedder(0.5)
    r = text_level(pred, ref, CONFIG.text, CONFIG.matching, extra_texts=(), embedder=emb)
    assert r.relation_f1 == 0.0 and r.text_similarity == 0.5
    assert r.alignment == pytest.approx(0.6 * 0.0 + 0.4 * 0.5)
    good = text_level(ref, ref, CONFIG.text, CONFIG.matching, extra_texts=(), embedder=emb)
    assert good.alignment == pytest.approx(0.6 * 1.0 + 0.4 * 0.5)
    assert TextConfig() == replace(CONFIG.text, judge=TextConfig().judge)


def test_overall_weights_0_4_graph_0_3_text_0_3_image():
    assert overall_score(1.0, 0.5, 0.0, CONFIG.overall) == pytest.approx(0.4 * 1.0 + 0.3 * 0.5 + 0.3 * 0.0)
    assert overall_score(0.0, 0.0, 1.0, CONFIG.overall) == pytest.approx(0.3)


def test_image_and_flow_weights():
    img = CONFIG.image
    assert (img.semantic_weight, img.perceptual_weight, img.flow_weight) == (0.4, 0.2, 0.4)
    # Two arrows that cross, boxes apart, one with a readable head, both pointing with the
    # flow (left to right): D = 1, crossings term 1 - 1/1 = 0, overlaps term 1, arrowheads 1/2.
    nodes = (Node("a", "A", bbox=(0, 0, 10, 10)), Node("b", "B", bbox=(100, 100, 110, 110)),
             Node("c", "C", bbox=(0, 100, 10, 110)), Node("d", "D", bbox=(100, 0, 110, 10)))
    g = DiagramGraph(id="f", nodes=nodes, edges=(Edge("a", "b", style="solid", confidence=1.0),
                                                 Edge("c", "d", style="solid", confidence=0.2)))
    f, details = visual_flow(g, img)
    assert (details["direction"], details["crossing_count"], details["overlaps"], details["arrowheads"]) == (
        1.0, 1, 1.0, 0.5)
    assert f == pytest.approx(0.4 * 1.0 + 0.2 * 0.0 + 0.2 * 1.0 + 0.2 * 0.5)
