"""perturb_graph's record is what the damaged graph shows: K errors, all realised, none cancelled.

The differences are counted here by an independent diff of the reference and the damaged graph
(node ids, labels and directed edges), not with sciflow.bench.perturb's own verification.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import make_graph

from sciflow.bench.generators import PerturbedGenerator
from sciflow.bench.perturb import ERROR_TYPES, PerturbationError, differences, perturb_graph, realised
from sciflow.format.graph import DiagramGraph, load_graph

REF_DIR = Path(__file__).resolve().parents[1] / "sciflow" / "data" / "sciflow-bench-60"
REFS = sorted(REF_DIR.glob("*.json"))
SEEDS = range(6)


def diff_units(ref: DiagramGraph, bad: DiagramGraph) -> Counter[str]:
    """The differences between ``ref`` and ``bad``, one unit per elementary error:

    - a removed node whose label reappears in a kept node's label as ``"<kept> / <removed>"``
      is one merge (the kept node's new label and the removed node's redirected arrows are part
      of it), any other removed node a drop (its arrows go with it);
    - an added node (and the arrows touching it) is one addition;
    - two nodes that exchanged their labels are one swap, any other changed label a misspelling;
    - over the arrows between surviving reference nodes (a merged node standing for both):
      an arrow drawn the other way round is one reversal, a missing one a drop, an extra one an
      addition.
    """
    rl = {n.id: n.label for n in ref.nodes}
    bl = {n.id: n.label for n in bad.nodes}
    removed = set(rl) - set(bl)
    added = set(bl) - set(rl)
    changed = {i for i in set(rl) & set(bl) if rl[i] != bl[i]}
    units: Counter[str] = Counter()
    alias: dict[str, str] = {}
    for a in sorted(changed):
        for b in sorted(removed - set(alias)):
            if bl[a] == f"{rl[a]} / {rl[b]}":
                alias[b] = a
                changed.discard(a)
                units["merge_nodes"] += 1
                break
    dropped = removed - set(alias)
    units["drop_node"] += len(dropped)
    units["add_node"] += len(added)
    for a in sorted(changed):
        for b in sorted(changed):
            if a < b and a in changed and b in changed and bl[a] == rl[b] and bl[b] == rl[a]:
                changed -= {a, b}
                units["swap_labels"] += 1
    units["misspell_label"] += len(changed)

    def m(x: str) -> str:
        return alias.get(x, x)

    before = {(m(e.source), m(e.target)) for e in ref.edges
              if e.source not in dropped and e.target not in dropped and m(e.source) != m(e.target)}
    after = {(e.source, e.target) for e in bad.edges if e.source in rl and e.target in rl}
    gone, new = before - after, after - before
    flipped = {(u, v) for u, v in gone if (v, u) in new}
    units["reverse_edge"] += len(flipped)
    units["drop_edge"] += len(gone - flipped)
    units["add_edge"] += len(new - {(v, u) for u, v in flipped})
    return +units


def assert_consistent(ref: DiagramGraph, bad: DiagramGraph, errors: list[dict], k: int) -> None:
    units = diff_units(ref, bad)
    assert len(errors) == k
    assert sum(units.values()) == k, (units, [e["type"] for e in errors])
    assert units == Counter(e["type"] for e in errors), (units, errors)


@pytest.mark.parametrize("path", REFS, ids=lambda p: p.stem)
def test_every_returned_graph_has_exactly_k_realised_differences(path):
    ref = load_graph(path)
    for k in range(1, 5):
        for seed in SEEDS:
            try:
                bad, errors = perturb_graph(ref, k, seed)
            except PerturbationError:
                continue
            assert_consistent(ref, bad, errors, k)


@pytest.mark.parametrize("kind", ERROR_TYPES)
def test_single_type_sequences_are_realised(kind):
    ref = load_graph(REF_DIR / "cv_unet.json")
    for k in range(1, 4):
        for seed in range(10):
            try:
                bad, errors = perturb_graph(ref, k, seed, types=[kind])
            except PerturbationError:
                continue
            assert_consistent(ref, bad, errors, k)
            assert {e["type"] for e in errors} == {kind}


def test_cancelling_pairs_are_never_drawn():
    # Two add_edge on a graph with a single unsupported pair: the second would duplicate the first.
    g = make_graph([("a", "Stage Alpha"), ("b", "Stage Beta"), ("c", "Stage Gamma")], [("a", "b"), ("b", "c")])
    bad, errors = perturb_graph(g, 1, seed=0, types=["add_edge"])
    assert_consistent(g, bad, errors, 1)
    assert (errors[0]["source"], errors[0]["target"]) == ("c", "a")
    with pytest.raises(PerturbationError):
        perturb_graph(g, 2, seed=0, types=["add_edge"])
    # Swapping two equal labels, or two interchangeable nodes, changes nothing: never drawn.
    for nodes, edges in (([("a", "Encoder"), ("b", "Encoder")], [("a", "b")]),
                         ([("a", "Encoder"), ("b", "Decoder"), ("c", "Loss")], [("a", "c"), ("b", "c")])):
        g = make_graph(nodes, edges)
        if len(nodes) == 3:
            for seed in range(10):
                bad, errors = perturb_graph(g, 1, seed, types=["swap_labels"])
                assert "c" in errors[0]["nodes"]  # a <-> b would leave the labelled graph as it is
        else:
            with pytest.raises(PerturbationError):
                perturb_graph(g, 1, seed=0, types=["swap_labels"])


def test_retries_are_deterministic():
    for path in REFS[:10]:
        ref = load_graph(path)
        assert perturb_graph(ref, 4, seed=7) == perturb_graph(ref, 4, seed=7)


def test_differences_counts_the_realised_errors():
    # the library's own count agrees with the independent diff on every returned graph
    for path in REFS[::5]:
        ref = load_graph(path)
        for seed in range(4):
            bad, errors = perturb_graph(ref, 3, seed)
            assert differences(ref, bad) == diff_units(ref, bad)
            assert all(realised(ref, bad, e) for e in errors)
    # a cancelled pair is seen as such: an edge added, then removed again
    g = make_graph([("a", "Stage Alpha"), ("b", "Stage Beta"), ("c", "Stage Gamma")], [("a", "b")])
    back = DiagramGraph(id="g", nodes=g.nodes, edges=g.edges)
    rec = {"type": "add_edge", "source": "a", "target": "c"}
    assert not differences(g, back) and not realised(g, back, rec)


def test_generator_record_names_the_realised_count(tmp_path):
    ref = load_graph(REF_DIR / "cv_detr.json")
    gen = PerturbedGenerator(severity=3, seed=1)
    out = gen.generate(ref, "prompt", tmp_path / "cv_detr.png")
    rec = json.loads((out.parent / "injected" / "cv_detr.json").read_text())
    assert rec["realised"] == rec["severity"] == len(rec["errors"]) == 3
    bad = DiagramGraph.from_dict(rec["graph"])
    assert sum(diff_units(ref, bad).values()) == 3
