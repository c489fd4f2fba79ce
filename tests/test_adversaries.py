"""Adversarial predictions stay below honest ones (the full table is benchmarks/bench_metric_validity.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import STRING_ONLY

from sciflow.bench.adversaries import ADVERSARIES, half_the_arrows
from sciflow.bench.perturb import perturb_graph
from sciflow.format.graph import load_graph
from sciflow.metrics.graph_level import graph_level

REFS = sorted(Path(__file__).resolve().parents[1].joinpath("sciflow", "data", "sciflow-bench-60").glob("*.json"))[::6]


@pytest.mark.parametrize("path", REFS, ids=lambda p: p.stem)
def test_adversaries_score_below_two_injected_errors_and_the_copy_scores_one(path):
    ref = load_graph(path)
    two = graph_level(perturb_graph(ref, 2, seed=1)[0], ref, STRING_ONLY).score
    assert graph_level(ADVERSARIES["perfect copy"](ref, 0), ref, STRING_ONLY).score == 1.0
    for name in ("shortcut arrows only", "all arrows reversed", "every arrow both ways", "empty",
                 "component list without arrows", "labels shuffled"):
        assert graph_level(ADVERSARIES[name](ref, 0), ref, STRING_ONLY).score < two, name
    listed = graph_level(ADVERSARIES["component list without arrows"](ref, 0), ref, STRING_ONLY).score
    assert listed < graph_level(half_the_arrows(ref), ref, STRING_ONLY).score


def test_adversaries_are_deterministic():
    ref = load_graph(REFS[0])
    for build in ADVERSARIES.values():
        assert build(ref, 3) == build(ref, 3)
