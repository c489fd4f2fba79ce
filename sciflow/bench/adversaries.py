"""Adversarial predictions: graphs built to game a metric, for checking that it cannot be gamed.

Each builder takes a reference graph (and a seed where it draws) and returns a prediction
graph with fresh ids, deterministic for the same inputs. ``benchmarks/bench_metric_validity.py``
scores them on the 60 references against the two-injected-errors perturbation; every one of
them must score below it on the graph and the text level.

==========================  ===============================================================
``perfect_copy``            the reference, ids renamed and nodes and edges reordered
``shortcut_arrows_only``    a seeded 62% of the boxes, and an arrow between two drawn boxes
                            wherever the reference joins them only through left-out boxes
                            (no arrow is a reference edge)
``chain_in_prompt_order``   every component, joined in a chain in the prompt's order
``every_arrow_both_ways``   the reference with each arrow also drawn reversed
``drawn_twice``             two disjoint copies of the reference
``complete_digraph``        every component, an arrow between every ordered pair
``best_two_nodes``          the two boxes and one arrow of one reference edge (the best one
                            is chosen by the benchmark)
``labels_shuffled``         the reference structure with its labels permuted (seeded)
``all_arrows_reversed``     the reference with every arrow reversed
``components_only``         every component, no arrow
``empty``                   nothing
``half_the_arrows``         every component and the first half (rounded up) of the
                            reference edges in canonical order: the yardstick that
                            ``components_only`` must stay below
==========================  ===============================================================
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from sciflow.format.graph import DiagramGraph, Edge, Node

SHORTCUT_KEEP = 0.62


def _rebuild(ref: DiagramGraph, labels: dict[str, str], edges: list[tuple[str, str]], tag: str) -> DiagramGraph:
    ids = {nid: f"{tag}{k}" for k, nid in enumerate(sorted(labels))}
    nodes = tuple(Node(ids[nid], labels[nid]) for nid in sorted(labels))
    out = tuple(dict.fromkeys(Edge(ids[a], ids[b]) for a, b in edges if a in ids and b in ids))
    return DiagramGraph(id=ref.id, nodes=nodes, edges=out)


def _labels(ref: DiagramGraph) -> dict[str, str]:
    return {n.id: n.label for n in ref.nodes}


def _edges(ref: DiagramGraph) -> list[tuple[str, str]]:
    return [(e.source, e.target) for e in ref.edges]


def perfect_copy(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    rnd = random.Random(seed)
    edges = _edges(ref)
    rnd.shuffle(edges)
    return _rebuild(ref, _labels(ref), edges, "p")


def shortcut_arrows_only(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    rnd = random.Random(seed)
    ids = sorted(_labels(ref))
    keep = set(rnd.sample(ids, max(2, math.ceil(SHORTCUT_KEEP * len(ids))))) if len(ids) >= 2 else set(ids)
    succ: dict[str, list[str]] = {i: [] for i in ids}
    for a, b in _edges(ref):
        succ[a].append(b)
    ref_edges = set(_edges(ref))
    shortcuts = []
    for a in sorted(keep):
        # boxes reachable from a through left-out boxes only, two or more steps away
        frontier, seen = [x for x in succ[a] if x not in keep], set()
        while frontier:
            x = frontier.pop()
            if x in seen:
                continue
            seen.add(x)
            for y in succ[x]:
                if y in keep and y != a and (a, y) not in ref_edges:
                    shortcuts.append((a, y))
                elif y not in keep:
                    frontier.append(y)
    labels = {i: lab for i, lab in _labels(ref).items() if i in keep}
    return _rebuild(ref, labels, sorted(set(shortcuts)), "s")


def _components(ref: DiagramGraph) -> list[str]:
    if ref.prompt is not None and ref.prompt.components:
        return list(ref.prompt.components)
    return [n.label for n in ref.nodes]


def chain_in_prompt_order(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    comps = _components(ref)
    labels = {f"c{k:03d}": lab for k, lab in enumerate(comps)}
    keys = sorted(labels)
    return _rebuild(ref, labels, list(zip(keys, keys[1:], strict=False)), "c")


def every_arrow_both_ways(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    return _rebuild(ref, _labels(ref), [*_edges(ref), *((b, a) for a, b in _edges(ref))], "b")


def drawn_twice(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    labels = {f"{copy}:{i}": lab for copy in "12" for i, lab in _labels(ref).items()}
    edges = [(f"{c}:{a}", f"{c}:{b}") for c in "12" for a, b in _edges(ref)]
    return _rebuild(ref, labels, edges, "t")


def complete_digraph(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    ids = sorted(_labels(ref))
    return _rebuild(ref, _labels(ref), [(a, b) for a in ids for b in ids if a != b], "k")


def two_nodes_of_edge(ref: DiagramGraph, edge: tuple[str, str]) -> DiagramGraph:
    """The boxes and arrow of one reference edge (``best_two_nodes`` takes the best of these)."""
    labels = {i: lab for i, lab in _labels(ref).items() if i in edge}
    return _rebuild(ref, labels, [edge], "e")


def labels_shuffled(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    rnd = random.Random(seed)
    ids = sorted(_labels(ref))
    perm = ids[:]
    if len(set(_labels(ref).values())) > 1:
        while all(_labels(ref)[a] == _labels(ref)[b] for a, b in zip(ids, perm, strict=True)):
            rnd.shuffle(perm)
    labels = {a: _labels(ref)[b] for a, b in zip(ids, perm, strict=True)}
    return _rebuild(ref, labels, _edges(ref), "l")


def all_arrows_reversed(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    return _rebuild(ref, _labels(ref), [(b, a) for a, b in _edges(ref)], "r")


def components_only(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    return _rebuild(ref, _labels(ref), [], "o")


def empty(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    return DiagramGraph(id=ref.id)


def half_the_arrows(ref: DiagramGraph, seed: int = 0) -> DiagramGraph:
    lab = _labels(ref)
    edges = sorted(_edges(ref), key=lambda e: (lab[e[0]], lab[e[1]], e))
    return _rebuild(ref, lab, edges[: math.ceil(len(edges) / 2)], "h")


ADVERSARIES: dict[str, Callable[[DiagramGraph, int], DiagramGraph]] = {
    "perfect copy": perfect_copy,
    "shortcut arrows only": shortcut_arrows_only,
    "chain in prompt order": chain_in_prompt_order,
    "every arrow both ways": every_arrow_both_ways,
    "diagram drawn twice": drawn_twice,
    "complete digraph": complete_digraph,
    "labels shuffled": labels_shuffled,
    "all arrows reversed": all_arrows_reversed,
    "component list without arrows": components_only,
    "empty": empty,
}
