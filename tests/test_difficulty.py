"""Hand-computed cases for sciflow.bench.difficulty."""

from __future__ import annotations

from itertools import pairwise

import pytest

from sciflow.bench.difficulty import (
    EASY_BELOW,
    FEATURE_NAMES,
    HARD_FROM,
    complexity_features,
    complexity_score,
    difficulty,
    is_linear,
)
from sciflow.format.graph import DiagramGraph


def make(
    nodes: list[str],
    edges: list[tuple[str, str]],
    groups: list[str] | None = None,
    gid: str = "t",
) -> DiagramGraph:
    data: dict = {
        "id": gid,
        "nodes": [{"id": n, "label": n.upper()} for n in nodes],
        "edges": [{"source": a, "target": b} for a, b in edges],
    }
    if groups:
        data["groups"] = [{"id": g, "label": g} for g in groups]
    return DiagramGraph.from_dict(data)


def chain(k: int) -> DiagramGraph:
    names = [f"v{i}" for i in range(k)]
    return make(names, list(pairwise(names)))


def test_three_node_chain_is_easy_and_linear() -> None:
    g = chain(3)
    assert is_linear(g)
    assert difficulty(g) == "easy"
    assert complexity_features(g) == {
        "n_nodes": 3,
        "n_edges": 2,
        "n_branching": 0,
        "n_merging": 0,
        "n_cycles": 0,
        "n_cycle_edges": 0,
        "depth": 2,
        "n_groups": 0,
        "n_components": 1,
    }
    assert complexity_score(complexity_features(g)) == 2.5


def test_features_exact_on_small_hand_made_graph() -> None:
    # a -> b, a -> c, b -> d, c -> d, d -> b (loop b <-> d), d -> e; one group
    g = make(
        ["a", "b", "c", "d", "e"],
        [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "b"), ("d", "e")],
        groups=["g1"],
    )
    f = complexity_features(g)
    assert f == {
        "n_nodes": 5,
        "n_edges": 6,
        "n_branching": 2,  # a, d
        "n_merging": 2,  # b (from a, d), d (from b, c)
        "n_cycles": 1,  # SCC {b, d}: 2 edges - 2 nodes + 1
        "n_cycle_edges": 2,
        "depth": 3,  # a -> c -> {b, d} -> e in the condensation
        "n_groups": 1,
        "n_components": 1,
    }
    assert tuple(f) == FEATURE_NAMES
    # 0.5*5 + 0.5*6 + 2 + 2 + 2*1 + 0.5*1
    assert complexity_score(f) == 12.0
    assert not is_linear(g)


def test_cycle_is_not_linear() -> None:
    g = make(["a", "b", "c"], [("a", "b"), ("b", "c"), ("c", "a")])
    assert not is_linear(g)
    f = complexity_features(g)
    assert (f["n_cycles"], f["n_cycle_edges"], f["depth"]) == (1, 3, 0)


def test_self_loop_and_shared_loops_count_as_cycles() -> None:
    loop = make(["a"], [("a", "a")])
    assert complexity_features(loop)["n_cycles"] == 1
    assert not is_linear(loop)
    two = make(["a", "b", "c"], [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a")])
    f = complexity_features(two)
    assert (f["n_cycles"], f["n_cycle_edges"]) == (2, 4)


def test_linearity_edge_cases() -> None:
    assert is_linear(make(["a"], []))  # a single node is a trivial chain
    assert not is_linear(DiagramGraph(id="empty"))
    assert not is_linear(make(["a", "b", "c", "d"], [("a", "b"), ("c", "d")]))  # two chains
    assert not is_linear(make(["a", "b", "c"], [("a", "b"), ("a", "c")]))  # fan-out
    assert not is_linear(make(["a", "b", "c"], [("a", "c"), ("b", "c")]))  # fan-in
    assert is_linear(make(["c", "a", "b"], [("b", "c"), ("a", "b")]))  # order does not matter


def test_empty_graph_features() -> None:
    f = complexity_features(DiagramGraph(id="empty"))
    assert all(v == 0 for v in f.values())
    assert difficulty(DiagramGraph(id="empty")) == "easy"


@pytest.mark.parametrize(
    ("k", "tier"),
    [(14, "easy"), (15, "medium"), (22, "medium"), (23, "hard")],
)
def test_tier_boundaries_on_chains(k: int, tier: str) -> None:
    # a k-chain scores 0.5*k + 0.5*(k-1) = k - 0.5
    score = complexity_score(complexity_features(chain(k)))
    assert score == k - 0.5
    assert difficulty(chain(k)) == tier
    assert (score < EASY_BELOW) == (tier == "easy")
    assert (score >= HARD_FROM) == (tier == "hard")


def test_score_ignores_unscored_and_missing_features() -> None:
    assert complexity_score({}) == 0.0
    assert complexity_score({"depth": 100, "n_cycle_edges": 7, "n_components": 3}) == 0.0
    assert complexity_score({"n_nodes": 4, "n_edges": 4, "n_cycles": 1}) == 6.0


def test_deterministic_and_order_independent() -> None:
    nodes = ["a", "b", "c", "d", "e"]
    edges = [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("d", "b"), ("d", "e")]
    g1 = make(nodes, edges)
    g2 = make(list(reversed(nodes)), list(reversed(edges)))
    assert complexity_features(g1) == complexity_features(g2) == complexity_features(g1)
    assert difficulty(g1) == difficulty(g2)


def test_labels_and_meta_do_not_matter() -> None:
    g = chain(5)
    d = g.to_dict()
    for n in d["nodes"]:
        n["label"] = "x" * 40
    d["meta"] = {"difficulty": "hard", "area": "robotics"}
    g2 = DiagramGraph.from_dict(d)
    assert complexity_features(g2) == complexity_features(g)
    assert difficulty(g2) == difficulty(g) == "easy"
