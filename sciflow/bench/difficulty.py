"""Structural difficulty of a canonical diagram graph.

SciFlow-Bench characterises difficulty "by graph size and relational complexity". This
module makes that concrete, deterministically and without I/O, from the graph alone
(node/edge labels, bboxes, prompt and meta are ignored).

Features (:func:`complexity_features`)
--------------------------------------
``n_nodes``, ``n_edges``
    Size of the diagram (edges after merging parallel arrows, as loaded).
``n_branching``
    Nodes with out-degree > 1 (fan-out: one component feeds several).
``n_merging``
    Nodes with in-degree > 1 (fan-in: several components feed one).
``n_cycles``
    Independent directed cycles: for every strongly connected component (SCC) that
    contains a cycle (two or more nodes, or one node with a self-loop), its cycle rank
    ``E_scc - V_scc + 1``, summed. A feedback loop A -> B -> C -> A counts 1; a self-loop
    counts 1; two loops sharing a node count 2. Unlike enumerating simple cycles this is
    linear-time and never explodes on dense graphs.
``n_cycle_edges``
    Edges with both ends in the same cyclic SCC (the arrows that take part in feedback).
``depth``
    Number of edges on the longest path of the condensation DAG (every SCC collapsed to
    one node): a chain of 3 nodes has depth 2, a pure cycle has depth 0.
``n_groups``
    Number of groups (containers), nested ones included.
``n_components``
    Weakly connected components.

Score (:func:`complexity_score`)
--------------------------------
::

    score = 0.5 * n_nodes + 0.5 * n_edges          # size: components and arrows to draw
          + 1.0 * n_branching + 1.0 * n_merging    # fan-out / fan-in points
          + 2.0 * n_cycles                         # feedback loops (arrows against the flow)
          + 0.5 * n_groups                         # nested containers

``depth``, ``n_cycle_edges`` and ``n_components`` are reported but not scored (depth is
already paid for by the size terms).

Tiers (:func:`difficulty`)
--------------------------
``easy`` when ``score < EASY_BELOW`` (14.0), ``hard`` when ``score >= HARD_FROM`` (22.5),
``medium`` otherwise (scores are multiples of 0.5, so easy means score <= 13.5). The thresholds
were set once on the 60-item reference set in ``sciflow/data/sciflow-bench-60/`` so that the tiers hold
35% / 40% / 25% of its items (21 / 24 / 15); they are constants, not refitted per dataset.
For scale: a 3-node chain scores 2.5 (easy); a charge-pump PLL (7 nodes, 7 edges, one
feedback loop) scores 11 (easy); DETR's overview (11 nodes, 4 groups) scores 15.5 (medium);
FedAvg with three client loops and four groups scores 26 (hard); a 5-stage RISC-V pipeline
with forwarding and hazard paths scores over 100 (hard).

Example
-------
>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({
...     "id": "chain",
...     "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}, {"id": "c", "label": "C"}],
...     "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}],
... })
>>> complexity_features(g)["depth"], complexity_score(complexity_features(g))
(2, 2.5)
>>> difficulty(g), is_linear(g)
('easy', True)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import networkx as nx

from sciflow.format.graph import DiagramGraph

log = logging.getLogger(__name__)

EASY_BELOW = 14.0
HARD_FROM = 22.5

WEIGHTS: Mapping[str, float] = {
    "n_nodes": 0.5,
    "n_edges": 0.5,
    "n_branching": 1.0,
    "n_merging": 1.0,
    "n_cycles": 2.0,
    "n_groups": 0.5,
}

FEATURE_NAMES: tuple[str, ...] = (
    "n_nodes",
    "n_edges",
    "n_branching",
    "n_merging",
    "n_cycles",
    "n_cycle_edges",
    "depth",
    "n_groups",
    "n_components",
)


def _digraph(graph: DiagramGraph) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(n.id for n in graph.nodes)
    g.add_edges_from((e.source, e.target) for e in graph.edges)
    return g


def complexity_features(graph: DiagramGraph) -> dict[str, int]:
    """Structural features of ``graph`` (see the module docstring for definitions).

    >>> from sciflow.format.graph import DiagramGraph
    >>> loop = DiagramGraph.from_dict({
    ...     "id": "loop",
    ...     "nodes": [{"id": i, "label": i} for i in "abc"],
    ...     "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"},
    ...               {"source": "c", "target": "a"}],
    ... })
    >>> f = complexity_features(loop)
    >>> f["n_cycles"], f["n_cycle_edges"], f["depth"]
    (1, 3, 0)
    """
    g = _digraph(graph)
    n_cycles = 0
    n_cycle_edges = 0
    for scc in nx.strongly_connected_components(g):
        sub = g.subgraph(scc)
        e = sub.number_of_edges()
        if len(scc) > 1 or e > 0:  # e > 0 on one node means a self-loop
            n_cycles += e - len(scc) + 1
            n_cycle_edges += e
    if g.number_of_nodes():
        depth = int(nx.dag_longest_path_length(nx.condensation(g)))
        n_components = nx.number_weakly_connected_components(g)
    else:
        depth = 0
        n_components = 0
    return {
        "n_nodes": g.number_of_nodes(),
        "n_edges": g.number_of_edges(),
        "n_branching": sum(1 for _, d in g.out_degree() if d > 1),
        "n_merging": sum(1 for _, d in g.in_degree() if d > 1),
        "n_cycles": n_cycles,
        "n_cycle_edges": n_cycle_edges,
        "depth": depth,
        "n_groups": len(graph.groups),
        "n_components": n_components,
    }


def complexity_score(features: Mapping[str, float]) -> float:
    """Weighted sum of the scored features (weights in :data:`WEIGHTS`).

    Missing features count as 0, so a partial mapping can be scored.

    >>> complexity_score({"n_nodes": 4, "n_edges": 4, "n_cycles": 1})
    6.0
    """
    return float(sum(w * float(features.get(k, 0)) for k, w in WEIGHTS.items()))


def difficulty(graph: DiagramGraph) -> str:
    """``"easy"``, ``"medium"`` or ``"hard"`` from :func:`complexity_score`.

    ``easy``: score < :data:`EASY_BELOW`; ``hard``: score >= :data:`HARD_FROM`;
    ``medium`` in between.
    """
    score = complexity_score(complexity_features(graph))
    if score < EASY_BELOW:
        tier = "easy"
    elif score >= HARD_FROM:
        tier = "hard"
    else:
        tier = "medium"
    log.debug("difficulty of %s: score %.2f -> %s", graph.id, score, tier)
    return tier


def is_linear(graph: DiagramGraph) -> bool:
    """True for a simple chain: weakly connected, every node with in- and out-degree <= 1,
    and no cycle. A single node is a (trivial) chain; an empty graph is not linear.

    >>> from sciflow.format.graph import DiagramGraph
    >>> two = DiagramGraph.from_dict({
    ...     "id": "pair",
    ...     "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
    ...     "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "a"}],
    ... })
    >>> is_linear(two)
    False
    """
    g = _digraph(graph)
    if g.number_of_nodes() == 0:
        return False
    if not nx.is_weakly_connected(g):
        return False
    if any(d > 1 for _, d in g.in_degree()) or any(d > 1 for _, d in g.out_degree()):
        return False
    return nx.is_directed_acyclic_graph(g)
