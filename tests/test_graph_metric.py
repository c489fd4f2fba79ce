"""Graph-level metric: hand-computed exact scores and invariants."""

from __future__ import annotations

import itertools

import pytest
from conftest import STRING_ONLY, make_graph

from sciflow.config import GraphWeights, MatchingConfig
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.matching import fold, match_nodes, string_similarity


def score(pred, ref, cfg=STRING_ONLY):
    return graph_level(pred, ref, matching=cfg)


CHAIN3 = make_graph("ABCD", [("A", "B"), ("B", "C"), ("C", "D")])


def test_identical_graphs_score_one():
    r = score(CHAIN3, CHAIN3)
    assert (r.node_precision, r.node_recall, r.node_f1) == (1.0, 1.0, 1.0)
    assert (r.edge_precision, r.edge_recall, r.edge_f1) == (1.0, 1.0, 1.0)
    assert r.score == 1.0


def test_complete_digraph_against_chain_scores_low():
    complete = make_graph("ABCD", [(a, b) for a, b in itertools.permutations("ABCD", 2)])
    r = score(complete, CHAIN3)
    # 12 arrows = 6 pairs drawn both ways; the chain has no 2-cycle, so every pair is one
    # counted two-way edge and none is right.
    assert len(r.edges_with("two_way")) == 12
    assert (r.edge_precision, r.edge_recall, r.edge_f1) == (0.0, 0.0, 0.0)
    assert r.node_f1 == 1.0
    assert r.score == pytest.approx(0.4)
    # the complete digraph without back arrows: 6 arrows, 3 right
    forward = make_graph("ABCD", [(a, b) for a, b in itertools.combinations("ABCD", 2)])
    r = score(forward, CHAIN3)
    assert (r.edge_precision, r.edge_recall) == (0.5, 1.0)
    assert len(r.edges_with("unsupported")) == 3


def test_an_arrow_drawn_both_ways_is_right_only_for_a_two_cycle():
    pair = make_graph("AB", [("A", "B"), ("B", "A")])
    r = score(pair, make_graph("AB", [("A", "B")]))
    assert [v.verdict for v in r.edges] == ["two_way", "two_way"]
    assert (r.edge_precision, r.edge_recall) == (0.0, 0.0)  # one counted edge, not right
    assert score(pair, pair).score == 1.0


def test_duplicated_predicted_nodes_cannot_all_count():
    ref = make_graph("AB", [("A", "B")])
    pred = make_graph(
        [("a1", "A"), ("a2", "A"), ("a3", "A"), ("b", "B")], [("a1", "b"), ("a2", "b"), ("a3", "b")]
    )
    r = score(pred, ref)
    assert len(r.matching.pairs) == 2
    assert r.node_precision == pytest.approx(2 / 4)
    assert r.node_recall == 1.0
    assert r.node_f1 == pytest.approx(2 / 3)
    assert r.edge_precision == pytest.approx(1 / 3)
    assert r.edge_recall == 1.0
    assert r.edge_f1 == pytest.approx(0.5)
    assert r.score == pytest.approx(0.6 * 0.5 + 0.4 * (2 / 3))
    assert len(r.edges_with("unmatched_endpoint")) == 2


def test_reversed_edge_is_wrong():
    ref = make_graph("ABC", [("A", "B"), ("B", "C")])
    pred = make_graph("ABC", [("A", "B"), ("C", "B")])
    r = score(pred, ref)
    assert (r.edge_precision, r.edge_recall, r.edge_f1) == (0.5, 0.5, 0.5)
    assert r.score == pytest.approx(0.6 * 0.5 + 0.4)
    d = r.diagnostics()
    assert [(e["source_label"], e["target_label"]) for e in d["reversed_edges"]] == [("C", "B")]
    assert [(e["source_label"], e["target_label"]) for e in d["missing_edges"]] == [("B", "C")]


def test_skip_arrow_through_a_left_out_box_is_excused_not_credited():
    ref = make_graph("ABC", [("A", "B"), ("B", "C")])
    pred = make_graph("AC", [("A", "C")])
    r = score(pred, ref)
    # A->C is not counted (0 counted edges) and recovers nothing: edge P = R = F1 = 0.
    assert (r.edge_precision, r.edge_recall, r.edge_f1) == (0.0, 0.0, 0.0)
    assert r.node_f1 == pytest.approx(0.8)  # 2 of 3 boxes, precision 1
    assert r.score == pytest.approx(0.4 * 0.8)
    assert [e.verdict for e in r.edges] == ["excused"]
    assert r.diagnostics()["excused_edges"] == [
        {"source": "A", "target": "C", "source_label": "A", "target_label": "C",
         "skipped_ref_edges": [["A", "B"], ["B", "C"]]}
    ]
    assert {(e["source"], e["target"]) for e in r.diagnostics()["missing_edges"]} == {("A", "B"), ("B", "C")}


def test_excused_arrow_costs_no_precision():
    # A -> B -> C -> D, the diagram leaves out C: B -> D is excused, A -> B is right.
    ref = make_graph("ABCD", [("A", "B"), ("B", "C"), ("C", "D")])
    pred = make_graph("ABD", [("A", "B"), ("B", "D")])
    r = score(pred, ref)
    assert (r.edge_precision, r.edge_recall) == (1.0, pytest.approx(1 / 3))
    assert r.edge_f1 == pytest.approx(0.5)  # 2*1/(1 + 3)
    assert r.node_f1 == pytest.approx(6 / 7)
    assert r.score == pytest.approx(0.6 * 0.5 + 0.4 * 6 / 7)


def test_skip_over_a_drawn_but_unconnected_box_is_excused():
    ref = make_graph("ABC", [("A", "B"), ("B", "C")])
    pred = make_graph("ABC", [("A", "C")])  # B drawn, no arrow at B
    r = score(pred, ref)
    assert [e.verdict for e in r.edges] == ["excused"]
    assert r.score == pytest.approx(0.4)  # node F1 1, edge F1 0


def test_no_skip_through_a_connected_box():
    ref = make_graph("ABC", [("A", "B"), ("B", "C")])
    pred = make_graph("ABC", [("A", "B"), ("A", "C")])
    r = score(pred, ref)
    assert [e.verdict for e in r.edges] == ["direct", "unsupported"]
    assert (r.edge_precision, r.edge_recall, r.edge_f1) == (0.5, 0.5, 0.5)
    assert r.score == pytest.approx(0.6 * 0.5 + 0.4)


def test_reversed_skip_path_is_reversed():
    ref = make_graph("AXC", [("A", "X"), ("X", "C")])
    pred = make_graph("AC", [("C", "A")])
    r = score(pred, ref)
    assert [e.verdict for e in r.edges] == ["reversed"]
    assert (r.edge_precision, r.edge_f1) == (0.0, 0.0)


def test_fan_out_through_a_left_out_box_recovers_nothing():
    # The diagram skipped X and drew both of its outputs from A.
    ref = make_graph("AXBC", [("A", "X"), ("X", "B"), ("X", "C")])
    pred = make_graph("ABC", [("A", "B"), ("A", "C")])
    r = score(pred, ref)
    assert [e.verdict for e in r.edges] == ["excused", "excused"]
    assert r.edge_recall == 0.0
    # A direct edge recovers only itself, even when a skip path exists too.
    ref2 = make_graph("AXB", [("A", "X"), ("X", "B"), ("A", "B")])
    r2 = score(make_graph("AB", [("A", "B")]), ref2)
    assert r2.edge_precision == 1.0
    assert r2.edge_recall == pytest.approx(1 / 3)


def test_unmatched_endpoint_and_hallucinated_node():
    ref = make_graph("AB", [("A", "B")])
    pred = make_graph([("A", "A"), ("z", "Zebra Module")], [("A", "z")])
    r = score(pred, ref)
    assert (r.node_precision, r.node_recall, r.node_f1) == (0.5, 0.5, 0.5)
    assert r.edge_f1 == 0.0
    assert r.score == pytest.approx(0.2)
    d = r.diagnostics()
    assert d["hallucinated_nodes"] == ["z"]
    assert d["missing_nodes"] == [{"id": "B", "label": "B"}]
    assert [e["target"] for e in d["unmatched_endpoint_edges"]] == ["z"]


def test_empty_cases():
    empty = make_graph([], [])
    assert score(empty, empty).score == 1.0
    assert score(empty, CHAIN3).score == 0.0
    assert score(CHAIN3, empty).score == 0.0
    isolated = make_graph("AB")
    r = score(isolated, isolated)
    assert (r.edge_f1, r.score) == (1.0, 1.0)
    # no relation on either side: the edge scores are the node scores
    assert score(empty, isolated).score == 0.0  # was 0.6 (both edge sets empty)
    r = score(make_graph("A"), isolated)
    assert (r.edge_precision, r.edge_recall) == (1.0, 0.5)
    assert r.edge_f1 == pytest.approx(2 / 3) and r.score == pytest.approx(2 / 3)
    r = score(make_graph("AB", [("A", "B")]), isolated)
    assert (r.edge_precision, r.edge_recall, r.edge_f1) == (0.0, 0.0, 0.0)
    assert r.score == pytest.approx(0.4)


def test_misspelling_matches_and_unrelated_label_does_not():
    ref = make_graph([("e", "Encoder"), ("l", "Loss")], [("e", "l")])
    pred = make_graph([("x", "Encodr"), ("y", "Image Sampler")], [("x", "y")])
    r = score(pred, ref)
    pairs = [(p.pred_label, p.ref_label) for p in r.matching.pairs]
    assert pairs == [("Encodr", "Encoder")]
    # normalized Indel similarity: 1 - 1/13
    assert r.matching.pairs[0].similarity == pytest.approx(12 / 13)
    assert r.matching.unmatched_ref == ("l",)


def test_label_folding():
    assert fold("Image-Encoder (ViT)") == "image encoder vit"
    assert fold("  Add  &  Norm ") == "add norm"
    assert string_similarity(["IMAGE encoder"], ["image-encoder"])[0, 0] == 1.0
    assert string_similarity([""], [""])[0, 0] == 1.0


def test_symbols_drawn_like_letters_match_the_letters():
    # an adder drawn "∑" (N-ary summation) is the reference's "Σ" (capital sigma): one
    # character apart, they would otherwise share no character and never match
    ref = make_graph([("a", "Σ"), ("b", "ΔV_BE (PTAT)"), ("c", "3×3 conv, t−1")], [("a", "b"), ("b", "c")])
    pred = make_graph([("x", "∑"), ("y", "∆V_BE (PTAT)"), ("z", "3x3 Conv, t-1")], [("x", "y"), ("y", "z")])
    r = score(pred, ref)
    assert (r.node_f1, r.edge_f1, r.score) == (1.0, 1.0, 1.0)
    assert string_similarity(["∑"], ["Σ"])[0, 0] == 1.0
    assert string_similarity(["∑"], ["E"])[0, 0] == 0.0


def test_self_loop():
    ref = make_graph("AB", [("A", "B"), ("B", "B")])
    r = score(make_graph("AB", [("A", "B"), ("B", "B")]), ref)
    assert r.score == 1.0
    r = score(make_graph("AB", [("A", "B"), ("A", "A")]), ref)
    assert r.edge_precision == 0.5


def test_weights_are_configurable_and_recorded():
    ref = make_graph("ABC", [("A", "B"), ("B", "C")])
    pred = make_graph("ABC", [("A", "B")])
    r = graph_level(pred, ref, matching=STRING_ONLY, weights=GraphWeights(0.5, 0.5))
    assert r.score == pytest.approx(0.5 * (2 * 1 * 0.5 / 1.5) + 0.5)
    d = r.to_dict()
    assert d["weights"] == {"edge_weight": 0.5, "node_weight": 0.5}
    assert d["matching"]["threshold"] == STRING_ONLY.threshold
    assert d["matching"]["embedder"] == "none" and d["matching"]["fallback"] is True


def test_duplicate_labels_matched_by_structure():
    # Two "Encoder" boxes; only the one feeding "Decoder" corresponds to the reference's.
    ref = make_graph([("e", "Encoder"), ("d", "Decoder"), ("x", "Input")], [("x", "e"), ("e", "d")])
    pred = make_graph(
        [("e1", "Encoder"), ("e2", "Encoder"), ("d", "Decoder"), ("x", "Input")],
        [("x", "e2"), ("e2", "d")],
    )
    r = score(pred, ref)
    assert r.matching.pred_to_ref["e2"] == "e"
    assert r.edge_f1 == 1.0
    assert r.matching.unmatched_pred == ("e1",)


def test_threshold_respected():
    ref = make_graph([("a", "Encoder")])
    pred = make_graph([("b", "Encodr")])
    strict = MatchingConfig(embedder="none", threshold=0.95)
    assert match_nodes(pred, ref, strict).pairs == ()


@pytest.mark.slow
def test_semantic_matching_with_minilm():
    cfg = MatchingConfig()  # minilm, the pinned default
    ref = make_graph([("a", "Image Encoder"), ("b", "Cross-Entropy Loss")], [("a", "b")])
    pred = make_graph([("x", "image encoding module"), ("y", "Tokenizer")], [("x", "y")])
    m = match_nodes(pred, ref, cfg)
    assert [(p.pred_label, p.ref_label) for p in m.pairs] == [("image encoding module", "Image Encoder")]
    p = m.pairs[0]
    assert p.semantic_similarity is not None and 0.6 < p.semantic_similarity < 0.8
    assert p.similarity == pytest.approx(0.6 * p.string_similarity + 0.4 * p.semantic_similarity)
    assert m.embedder == "sentence-transformers/all-MiniLM-L6-v2" and not m.fallback
    # Same inputs, bit-identical result.
    assert match_nodes(pred, ref, cfg) == m


def test_a_pair_exactly_at_the_threshold_is_matched():
    # Indel similarity of "abcde" / "abcxy": common subsequence "abc", distance 4 of 10 -> 0.6,
    # the pinned threshold (matching.threshold = 0.6): "at or above" matches.
    assert MatchingConfig().threshold == 0.6
    ref = make_graph([("r", "abcde")])
    pred = make_graph([("p", "abcxy")])
    r = score(pred, ref)
    assert [(p.pred_id, p.ref_id, p.similarity) for p in r.matching.pairs] == [("p", "r", 0.6)]
    assert score(make_graph([("p", "abxyz")]), ref).matching.pairs == ()  # 0.4: below
