"""Invariants of the graph-level metric, checked with hypothesis."""

from __future__ import annotations

import random

from conftest import STRING_ONLY
from hypothesis import given, settings
from hypothesis import strategies as st

from sciflow.graph import DiagramGraph, Edge, Node
from sciflow.metrics.graph_level import graph_level

VOCAB = [
    "Image Encoder", "Text Encoder", "Decoder", "Loss", "Tokenizer", "Retriever",
    "Policy", "Value Head", "Environment", "Replay Buffer", "Comparator", "DAC",
    "Attention", "MLP", "Sampler", "Critic",
]


@st.composite
def graphs(draw, unique_labels: bool = True, max_nodes: int = 8) -> DiagramGraph:
    n = draw(st.integers(0, max_nodes))
    if unique_labels:
        labels = draw(st.lists(st.sampled_from(VOCAB), min_size=n, max_size=n, unique=True))
    else:
        labels = draw(st.lists(st.sampled_from(VOCAB[:5]), min_size=n, max_size=n))
    ids = [f"n{i}" for i in range(n)]
    pairs = [(a, b) for a in ids for b in ids if a != b]
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=12)) if pairs else []
    return DiagramGraph(
        id="g",
        nodes=tuple(Node(i, lab) for i, lab in zip(ids, labels, strict=True)),
        edges=tuple(Edge(a, b) for a, b in edges),
    )


def shuffled_renamed(g: DiagramGraph, seed: int) -> DiagramGraph:
    rnd = random.Random(seed)
    new_ids = {n.id: f"x{rnd.randrange(10**9)}_{k}" for k, n in enumerate(g.nodes)}
    nodes = [Node(new_ids[n.id], n.label) for n in g.nodes]
    edges = [Edge(new_ids[e.source], new_ids[e.target]) for e in g.edges]
    rnd.shuffle(nodes)
    rnd.shuffle(edges)
    return DiagramGraph(id="renamed", nodes=tuple(nodes), edges=tuple(edges))


def metric_values(r) -> tuple[float, ...]:
    return (r.node_precision, r.node_recall, r.node_f1, r.edge_precision, r.edge_recall, r.edge_f1, r.score)


@settings(max_examples=150, deadline=None)
@given(graphs(unique_labels=False), graphs(unique_labels=False))
def test_scores_lie_in_unit_interval(pred, ref):
    r = graph_level(pred, ref, matching=STRING_ONLY)
    assert all(0.0 <= v <= 1.0 for v in metric_values(r))


@settings(max_examples=100, deadline=None)
@given(graphs())
def test_identical_graphs_score_one(g):
    r = graph_level(g, g, matching=STRING_ONLY)
    assert metric_values(r) == (1.0,) * 7


@settings(max_examples=150, deadline=None)
@given(graphs(), graphs(), st.integers(0, 2**32), st.integers(0, 2**32))
def test_invariant_to_ids_and_order(pred, ref, s1, s2):
    base = metric_values(graph_level(pred, ref, matching=STRING_ONLY))
    moved = metric_values(graph_level(shuffled_renamed(pred, s1), shuffled_renamed(ref, s2), matching=STRING_ONLY))
    assert moved == base


@settings(max_examples=150, deadline=None)
@given(graphs(unique_labels=False, max_nodes=6), graphs(unique_labels=False, max_nodes=6), st.integers(0, 2**32))
def test_order_invariance_with_duplicate_labels(pred, ref, seed):
    base = graph_level(pred, ref, matching=STRING_ONLY).score
    assert graph_level(shuffled_renamed(pred, seed), ref, matching=STRING_ONLY).score == base


@settings(max_examples=150, deadline=None)
@given(graphs(), graphs(), st.data())
def test_reversing_a_correct_edge_never_raises_edge_precision(pred, ref, data):
    r = graph_level(pred, ref, matching=STRING_ONLY)
    correct = [(e.source, e.target) for e in r.correct_edges]
    if not correct:
        return
    u, v = data.draw(st.sampled_from(correct))
    edges = tuple(Edge(v, u) if (e.source, e.target) == (u, v) else e for e in pred.edges)
    # parallel edges between the same two nodes are one edge
    dedup = tuple(dict.fromkeys(edges))
    flipped = DiagramGraph(id="p", nodes=pred.nodes, edges=dedup)
    assert graph_level(flipped, ref, matching=STRING_ONLY).edge_precision <= r.edge_precision


@settings(max_examples=150, deadline=None)
@given(graphs(), graphs(), st.data())
def test_reversing_an_edge_of_a_perfect_prediction_never_helps(pred, ref, data):
    if not ref.edges:
        return
    e0 = data.draw(st.sampled_from(ref.edges))
    edges = tuple(dict.fromkeys(Edge(e0.target, e0.source) if e == e0 else e for e in ref.edges))
    flipped = DiagramGraph(id="p", nodes=ref.nodes, edges=edges)
    r = graph_level(flipped, ref, matching=STRING_ONLY)
    assert r.edge_precision <= 1.0 and r.score <= 1.0
    if (e0.target, e0.source) not in {(e.source, e.target) for e in ref.edges}:
        assert r.score < 1.0


@settings(max_examples=150, deadline=None)
@given(graphs(), graphs(), st.data())
def test_adding_a_hallucinated_edge_never_raises_precision(pred, ref, data):
    if not pred.nodes:
        return
    before = graph_level(pred, ref, matching=STRING_ONLY)
    src = data.draw(st.sampled_from(pred.nodes)).id
    # an edge to a new, hallucinated component
    grown = DiagramGraph(
        id="p",
        nodes=pred.nodes + (Node("hallucinated", "Quantum Flux Capacitor"),),
        edges=pred.edges + (Edge(src, "hallucinated"),),
    )
    after = graph_level(grown, ref, matching=STRING_ONLY)
    assert after.edge_precision <= before.edge_precision
    assert after.node_precision <= before.node_precision


@settings(max_examples=150, deadline=None)
@given(graphs(), graphs(), st.data())
def test_adding_an_unsupported_edge_never_raises_precision(pred, ref, data):
    before = graph_level(pred, ref, matching=STRING_ONLY)
    existing = {(e.source, e.target) for e in pred.edges}
    cands = [(a.id, b.id) for a in pred.nodes for b in pred.nodes if a.id != b.id and (a.id, b.id) not in existing]
    if not cands:
        return
    u, v = data.draw(st.sampled_from(cands))
    grown = DiagramGraph(id="p", nodes=pred.nodes, edges=pred.edges + (Edge(u, v),))
    after = graph_level(grown, ref, matching=STRING_ONLY)
    added = next(e for e in after.edges if (e.source, e.target) == (u, v))
    if added.verdict not in ("direct", "skip_path"):
        assert after.edge_precision <= before.edge_precision
