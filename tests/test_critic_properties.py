"""Properties of the critic over the bundled references with random perturbations."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import STRING_ONLY

from sciflow.bench.perturb import PerturbationError, perturb_graph
from sciflow.critic import apply_instructions, critique, parse_tagged, to_tagged
from sciflow.format.graph import load_graph

REFS = sorted((Path(__file__).resolve().parents[1] / "sciflow" / "data" / "sciflow-bench-60").glob("*.json"))[::6]


@pytest.mark.parametrize("path", REFS, ids=lambda p: p.stem)
def test_perturbed_references_fail_repair_and_round_trip(path):
    ref = load_graph(path)
    assert critique(ref, ref, matching=STRING_ONLY).passed
    for k in (1, 2, 3):
        for seed in range(3):
            try:
                bad, _ = perturb_graph(ref, k, 1000 * k + seed)
            except PerturbationError:
                continue
            c = critique(bad, ref, matching=STRING_ONLY)
            assert parse_tagged(to_tagged(c)) == c
            if c.passed:  # only a swap of two interchangeable nodes leaves the diagram correct
                continue
            # the edits, read back from their sentences (no node-id hints), repair the diagram
            edits = parse_tagged(to_tagged(c)).instructions
            assert critique(apply_instructions(bad, edits), ref, matching=STRING_ONLY).passed, (k, seed)
