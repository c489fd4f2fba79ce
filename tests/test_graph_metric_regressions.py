"""The adversarial audit's cases, as explicit regression tests with hand-computed scores.

Each case failed on metric version 1 (the value it had then is in the comment) and is the
minimal example the hypothesis properties in test_graph_metric_properties.py look for.
"""

from __future__ import annotations

import pytest
from conftest import STRING_ONLY, make_graph

from sciflow.format.graph import DiagramGraph, Edge, Node
from sciflow.metrics.graph_level import graph_level


def score(pred, ref):
    return graph_level(pred, ref, matching=STRING_ONLY)


def chain(labels: str):
    return make_graph(labels, list(zip(labels, labels[1:], strict=False)))


def test_shortcut_over_a_long_chain_scores_below_the_boxes_alone():
    ref = chain("ABCDEFGHIJ")
    shortcut = score(make_graph("AJ", [("A", "J")]), ref)  # v1: edge P = R = 1, graph 0.733
    assert (shortcut.edge_precision, shortcut.edge_recall) == (0.0, 0.0)
    assert shortcut.score == pytest.approx(0.4 * (2 * 2 / 12))  # node F1 = 1/3
    boxes = score(make_graph("ABCDEFGHIJ"), ref)
    assert boxes.score == pytest.approx(0.4)
    assert shortcut.score < boxes.score


def test_drawing_the_missing_box_never_lowers_the_score():
    ref = chain("ABCD")
    before = score(make_graph("AD", [("A", "D")]), ref)  # v1: 0.867
    after = score(make_graph("ABD", [("A", "D")]), ref)  # v1: 0.343
    assert before.score == pytest.approx(0.4 * 2 / 3)
    assert after.score == pytest.approx(0.4 * 6 / 7)
    assert after.score > before.score


def test_deleting_a_box_and_its_correct_arrows_never_helps():
    ref = chain("ABC")
    full = score(make_graph("ABC", [("A", "B"), ("B", "C"), ("A", "C")]), ref)  # v1: 0.880
    cut = score(make_graph("AC", [("A", "C")]), ref)  # v1: 0.920
    assert full.score == pytest.approx(0.6 * 0.8 + 0.4)  # P 2/3, R 1
    assert cut.score == pytest.approx(0.4 * 0.8)
    assert cut.score < full.score


def test_a_reversed_arrow_on_a_cycle_never_beats_the_correct_one():
    ref = make_graph("ABC", [("A", "B"), ("B", "C"), ("C", "A")])
    right = score(make_graph("AB", [("A", "B")]), ref)
    flipped = score(make_graph("AB", [("B", "A")]), ref)  # v1: credited as B -> C -> A
    assert right.edge_f1 == pytest.approx(2 * 1 / (1 + 3))
    assert [v.verdict for v in flipped.edges] == ["excused"]
    assert flipped.edge_f1 == 0.0 < right.edge_f1


def inception(relu_first: str) -> DiagramGraph:
    nodes = [("in", "Input"), ("c1", "Conv 3x3"), ("c2", "Conv 3x3"), ("cat", "Concat")]
    relus = [("r1", "ReLU"), ("r2", "ReLU")]
    nodes += relus if relu_first == "r1" else relus[::-1]
    edges = [("in", "c1"), ("in", "c2"), ("c1", "r1"), ("c2", "r2"), ("r1", "cat"), ("r2", "cat")]
    return make_graph(nodes, edges)


@pytest.mark.parametrize("order", ["r1", "r2"])
def test_repeated_labels_do_not_depend_on_file_order(order):
    r = score(inception(order), inception("r1"))  # v1: 1.0 or 0.8 depending on the ReLU lines' order
    assert r.score == 1.0
    assert r.matching.tie_break == "exact"


def test_a_three_cycle_of_equal_labels_matches_its_renamed_copy():
    ref = make_graph([("a", "Layer"), ("b", "Layer"), ("c", "Layer")], [("a", "b"), ("b", "c"), ("c", "a")])
    copy = make_graph([("z", "Layer"), ("x", "Layer"), ("y", "Layer")], [("y", "z"), ("x", "y"), ("z", "x")])
    r = score(copy, ref)  # v1: edge F1 0.0
    assert (r.edge_f1, r.score) == (1.0, 1.0)
    assert r.matching.tie_candidates == 6  # 3! assignments


def test_documented_exception_wiring_a_box_skipped_by_two_arrows():
    """The one case where adding a correct arrow lowers the score (graph_level docstring)."""
    ref = make_graph("ABCDPQRST", [("A", "B"), ("B", "C"), ("B", "D"),
                                   ("P", "Q"), ("Q", "R"), ("R", "S"), ("S", "T")])
    chain_edges = [("P", "Q"), ("Q", "R"), ("R", "S"), ("S", "T")]
    before = score(make_graph("ABCDPQRST", chain_edges + [("A", "C"), ("A", "D")]), ref)
    after = score(make_graph("ABCDPQRST", chain_edges + [("A", "C"), ("A", "D"), ("A", "B")]), ref)
    assert [v.verdict for v in before.edges if v.source == "A"] == ["excused", "excused"]
    assert before.edge_f1 == pytest.approx(8 / 11)
    assert after.edge_f1 == pytest.approx(10 / 14)
    assert after.score < before.score


def test_documented_exception_competing_arrows_of_a_repeated_label():
    """With repeated labels, which of two arrows at one "X" box is correct is decided by the
    tie break, so removing the one judged correct lets the other become correct."""
    ref = make_graph([("x1", "X"), ("x2", "X"), ("y", "Y"), ("z", "Z")], [("x1", "y"), ("z", "x2")])
    pred = make_graph([("a", "X"), ("b", "X"), ("y", "Y"), ("z", "Z")], [("a", "y"), ("z", "a")])
    r = score(pred, ref)
    assert (len(r.correct_edges), r.edge_f1) == (1, 0.5)
    removed = next(v for v in r.correct_edges)
    rest = [e for e in pred.edges if (e.source, e.target) != (removed.source, removed.target)]
    after = score(DiagramGraph(id="p", nodes=pred.nodes, edges=tuple(rest)), ref)
    assert after.edge_f1 == pytest.approx(2 / 3)


def test_an_empty_prediction_scores_zero_on_an_edgeless_reference():
    ref = make_graph("ABC")
    assert score(make_graph([]), ref).score == 0.0  # v1: 0.6 (both edge sets empty)
    assert score(make_graph("ABC"), ref).score == 1.0


def test_parallel_arrows_built_in_code_are_one_edge():
    ref = make_graph("AB", [("A", "B")])
    pred = DiagramGraph(id="p", nodes=(Node("A", "A"), Node("B", "B"), Node("C", "Zebra Module")),
                        edges=(Edge("A", "B"), Edge("A", "B"), Edge("B", "C")))
    r = score(pred, ref)
    assert (r.edge_precision, r.edge_recall) == (0.5, 1.0)


def test_every_arrow_both_ways_gains_nothing():
    ref = chain("ABCD")
    both = make_graph("ABCD", [*zip("ABC", "BCD", strict=True), *zip("BCD", "ABC", strict=True)])
    r = score(both, ref)  # v1: edge P 0.5, R 1, graph 0.8
    assert (r.edge_f1, r.score) == (0.0, 0.4)


def test_documented_exception_reversing_one_arrow_of_a_fan_out_of_equal_labels():
    """Reference L0 -> L1 -> L2 (all "Layer"); the diagram fans out a -> b, a -> c. Either arrow
    can be the right one; reversing the one judged right turns the fan-out into the chain."""
    layers = [("a", "Layer"), ("b", "Layer"), ("c", "Layer")]
    ref = make_graph(layers, [("a", "b"), ("b", "c")])
    fan = score(make_graph(layers, [("a", "b"), ("a", "c")]), ref)
    assert (len(fan.correct_edges), fan.edge_f1) == (1, 0.5)
    right = fan.correct_edges[0]
    other = next(e for e in [("a", "b"), ("a", "c")] if e != (right.source, right.target))
    flipped = score(make_graph(layers, [(right.target, right.source), other]), ref)
    assert flipped.edge_f1 == 1.0
