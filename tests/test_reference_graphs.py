"""The reference set in reference_graphs/: valid, consistent with its generator, balanced."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from sciflow.bench.difficulty import difficulty, is_linear
from sciflow.bench.prompts import build_prompt
from sciflow.format.graph import DiagramGraph

ROOT = Path(__file__).resolve().parents[1]
REF_DIR = ROOT / "reference_graphs"
GENERATOR = ROOT / "benchmarks" / "build_reference_graphs.py"
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


def test_files_match_generator(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("build_reference_graphs", GENERATOR)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up here
    try:
        spec.loader.exec_module(mod)
        assert mod.main(["--out", str(tmp_path)]) == 0
    finally:
        sys.modules.pop(spec.name, None)
    built = sorted(p.name for p in tmp_path.glob("*.json"))
    assert built == [p.name for p in FILES]
    for name in built:
        assert (tmp_path / name).read_bytes() == (REF_DIR / name).read_bytes(), name
