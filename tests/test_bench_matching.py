"""The parser benchmark's strict matching (benchmarks/bench_parse.py, the dev-data protocol):
one-to-one on folded labels, partners among repeated labels chosen for the most correct
directed edges, so a score never depends on the order nodes are listed in."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import make_graph
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_parse  # noqa: E402
from bench_parse import match_counts, strict_matching  # noqa: E402

# Truth: input -> embed#1 -> rep#1 -> head ; input -> embed#2 -> rep#2 (two repeated classes)
TRUTH = make_graph(
    [("i", "Input"), ("e1", "embed"), ("e2", "embed"), ("r1", "pair rep."), ("r2", "pair rep."), ("h", "Head")],
    [("i", "e1"), ("e1", "r1"), ("r1", "h"), ("i", "e2"), ("e2", "r2")],
)


def test_repeated_labels_pair_by_structure_not_by_file_order():
    # the prediction lists the second branch first: in file order e1 would pair with x2
    pred = make_graph(
        [("x", "input"), ("x2", "Embed"), ("x1", "embed"), ("y2", "Pair Rep"), ("y1", "pair rep"), ("z", "head")],
        [("x", "x1"), ("x1", "y1"), ("y1", "z"), ("x", "x2"), ("x2", "y2")],
    )
    assert match_counts(pred, TRUTH) == (6, 6, 6, 5, 5, 5)
    m = strict_matching(pred, TRUTH)
    assert m["y1"] == "r1" and m["y2"] == "r2"


def test_a_wrong_edge_stays_wrong_whatever_the_pairing():
    # six drawn edges; the best pairing (a, c as the second branch) makes five right, and the
    # invented Head -> Input stays wrong under every pairing
    pred = make_graph(
        [("x", "Input"), ("a", "embed"), ("b", "embed"), ("c", "pair rep"), ("d", "pair rep"), ("z", "Head")],
        [("x", "a"), ("a", "c"), ("x", "b"), ("b", "d"), ("d", "z"), ("z", "x")],
    )
    assert match_counts(pred, TRUTH) == (6, 6, 6, 5, 6, 5)


def test_more_predictions_than_truth_in_a_class_pair_the_best_one():
    truth = make_graph([("a", "A"), ("b", "B")], [("a", "b")])
    pred = make_graph([("p", "A"), ("q", "A"), ("r", "B")], [("q", "r")])
    assert match_counts(pred, truth) == (2, 3, 2, 1, 1, 1)
    assert strict_matching(pred, truth) == {"q": "a", "r": "b"}


def test_the_swap_search_beyond_the_exact_limit_still_finds_the_structure(monkeypatch):
    monkeypatch.setattr(bench_parse, "TIE_EXACT_LIMIT", 1)
    pred = make_graph(
        [("x", "input"), ("x2", "Embed"), ("x1", "embed"), ("y2", "Pair Rep"), ("y1", "pair rep"), ("z", "head")],
        [("x", "x1"), ("x1", "y1"), ("y1", "z"), ("x", "x2"), ("x2", "y2")],
    )
    assert match_counts(pred, TRUTH)[3] == 5


@settings(max_examples=60, deadline=None)
@given(
    labels=st.lists(st.sampled_from("AAB"), min_size=2, max_size=6),
    edges=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=8),
    order=st.randoms(use_true_random=False),
)
def test_counts_do_not_depend_on_node_or_edge_order(labels, edges, order):
    n = len(labels)
    nodes = [(f"n{i}", lab) for i, lab in enumerate(labels)]
    es = [(f"n{a % n}", f"n{b % n}") for a, b in edges]  # cycles and self-loops included
    truth = make_graph(nodes, es[: len(es) // 2 + 1])
    pred = make_graph(nodes, es)
    shuffled_nodes, shuffled_edges = list(nodes), list(es)
    order.shuffle(shuffled_nodes)
    order.shuffle(shuffled_edges)
    assert match_counts(make_graph(shuffled_nodes, shuffled_edges), truth) == match_counts(pred, truth)
