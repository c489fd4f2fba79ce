"""The reference set sciflow-bench-60@1 (sciflow/data/sciflow-bench-60/): valid, self-consistent, balanced."""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from sciflow.bench.difficulty import difficulty, is_linear
from sciflow.bench.prompts import build_prompt
from sciflow.bench.references import check_reference
from sciflow.format.graph import DiagramGraph

ROOT = Path(__file__).resolve().parents[1]
REF_DIR = ROOT / "sciflow" / "data" / "sciflow-bench-60"
AREAS = (
    "computer vision",
    "natural language processing",
    "machine learning",
    "integrated circuits",
    "robotics",
)
FILES = sorted(REF_DIR.glob("*.json"))


@cache
def load(path: Path) -> DiagramGraph:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return DiagramGraph.load(path)


def all_graphs() -> list[DiagramGraph]:
    return [load(p) for p in FILES]


def test_enough_files() -> None:
    assert len(FILES) >= 60


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_item(path: Path) -> None:
    g = load(path)  # no GraphFormatWarning / GraphFormatError
    assert g.id == path.stem
    node_ids = [n.id for n in g.nodes]
    assert len(set(node_ids)) == len(node_ids)
    assert node_ids == [f"n{i}" for i in range(1, len(node_ids) + 1)]
    labels = [n.label for n in g.nodes]
    assert len(set(labels)) == len(labels), "labels must be unique within an item"
    assert all(1 <= len(label.split()) <= 5 for label in labels)
    assert g.edges, "every item has edges"
    touched = {e.source for e in g.edges} | {e.target for e in g.edges}
    assert touched == set(node_ids), "no isolated nodes"

    meta = g.meta
    assert meta["area"] in AREAS
    assert meta["difficulty"] == difficulty(g)
    assert meta["origin"] == "sciflow reference set v1"
    assert meta["layout"] in ("left-to-right", "top-to-bottom")
    assert isinstance(meta["title"], str) and meta["title"]
    assert isinstance(meta["year"], int) and 1950 <= meta["year"] <= 2030
    assert isinstance(meta["arxiv"], str)
    assert meta["arxiv"] or meta.get("doi") or meta.get("reference")
    assert isinstance(meta["description"], str) and len(meta["description"].split(". ")) >= 3

    expected = build_prompt(g)
    assert g.prompt is not None
    assert g.prompt.text == expected.text
    assert g.prompt.components == expected.components
    assert g.prompt.relations == expected.relations
    assert g.prompt.layout == expected.layout


def test_ids_unique_across_files() -> None:
    ids = [g.id for g in all_graphs()]
    assert len(set(ids)) == len(ids)


def test_twelve_per_area() -> None:
    counts = Counter(g.meta["area"] for g in all_graphs())
    assert counts == Counter({a: 12 for a in AREAS})


def test_mostly_non_linear() -> None:
    graphs = all_graphs()
    non_linear = sum(1 for g in graphs if not is_linear(g))
    assert non_linear / len(graphs) > 0.7


def test_all_tiers_present() -> None:
    tiers = Counter(g.meta["difficulty"] for g in all_graphs())
    assert set(tiers) == {"easy", "medium", "hard"}
    assert all(c >= len(FILES) // 6 for c in tiers.values()), tiers


def test_node_counts_long_tailed() -> None:
    sizes = sorted(len(g.nodes) for g in all_graphs())
    assert sizes[0] <= 5 and sizes[-1] >= 25
    assert sum(1 for s in sizes if 6 <= s <= 15) / len(sizes) > 0.6


def test_every_reference_passes_the_checker() -> None:
    bad = {p.name: check_reference(load(p)) for p in FILES}
    assert {k: v for k, v in bad.items() if v} == {}


def edited(**changes):
    g = load(REF_DIR / "cv_detr.json")
    return dataclasses.replace(g, **changes)


def test_checker_catches_a_label_edit_that_forgot_the_prompt() -> None:
    g = load(REF_DIR / "cv_detr.json")
    nodes = (dataclasses.replace(g.nodes[0], label="input image"),) + g.nodes[1:]
    assert check_reference(edited(nodes=nodes)) == [
        "the prompt does not match the graph (rebuild it: sciflow prompt FILE --write)"]


def test_checker_catches_tier_citation_orphans_and_duplicates() -> None:
    g = load(REF_DIR / "cv_detr.json")
    meta = {**g.meta, "difficulty": "easy", "citation": "Someone et al. 2020"}
    problems = check_reference(edited(meta=meta))
    assert "meta.difficulty is 'easy' but the graph's tier is 'medium'" in problems
    assert "meta.citation does not name the paper (it must contain meta.title)" in problems
    nodes = g.nodes + (dataclasses.replace(g.nodes[0], id="n99"),)
    problems = check_reference(edited(nodes=nodes))
    assert "node n99 ('image') has no edge" in problems
    assert "label 'image' is used by nodes n1 and n99: add a suffix" in problems
    meta = {k: v for k, v in g.meta.items() if k not in ("provenance", "arxiv")}
    problems = check_reference(edited(meta=meta))
    assert "meta.provenance is missing" in problems
    assert "the paper has no identifier: give meta.arxiv, meta.doi or meta.reference" in problems


def test_validate_checks_references_from_the_cli(tmp_path: Path) -> None:
    import subprocess

    bad = load(REF_DIR / "cv_detr.json")
    dataclasses.replace(bad, meta={**bad.meta, "difficulty": "hard"}).save(tmp_path / "cv_detr.json")
    (tmp_path / "ok.json").write_bytes((REF_DIR / "cv_clip.json").read_bytes())
    exe = Path(sys.executable).with_name("sciflow")
    r = subprocess.run([str(exe), "validate", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1
    assert "cv_detr.json: meta.difficulty is 'hard' but the graph's tier is 'medium'" in r.stdout + r.stderr
    assert "1 of 2" in r.stdout + r.stderr
    ok = subprocess.run([str(exe), "validate", str(REF_DIR)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_prompt_write_rebuilds_what_the_checker_derives(tmp_path: Path) -> None:
    from sciflow.cli import main

    g = load(REF_DIR / "cv_detr.json")
    nodes = (dataclasses.replace(g.nodes[0], label="input image"),) + g.nodes[1:]
    path = tmp_path / "cv_detr.json"
    dataclasses.replace(g, nodes=nodes).save(path)
    assert check_reference(DiagramGraph.load(path))  # the prompt is stale
    assert main(["prompt", str(path), "--write"]) == 0
    fixed = DiagramGraph.load(path)
    assert check_reference(fixed) == []
    assert "- input image" in fixed.prompt.text
