"""Perturbations, generators, stats, prompts and the SciFlow-Bench import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import STRING_ONLY, make_graph
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from sciflow.bench.generators import GeneratorError, get_generator, run_generator
from sciflow.bench.perturb import DEGRADATIONS, ERROR_TYPES, PerturbationError, degrade_image, perturb_graph
from sciflow.bench.stats import reference_stats
from sciflow.cli import main
from sciflow.format.convert import import_sciflow_bench
from sciflow.format.graph import DiagramGraph, load_graph
from sciflow.metrics.graph_level import graph_level

REFS = Path(__file__).resolve().parents[1] / "sciflow" / "data" / "sciflow-bench-60"
CHAIN = make_graph(
    [(c, f"Stage {c.upper()}lpha") for c in "abcdef"],
    [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f"), ("b", "e")],
)


@pytest.mark.parametrize("kind", ERROR_TYPES)
def test_each_error_type_is_recorded_and_visible(kind):
    bad, errors = perturb_graph(CHAIN, 1, seed=3, types=[kind])
    assert [e["type"] for e in errors] == [kind]
    DiagramGraph.from_dict(bad.to_dict())  # still a valid graph
    r = graph_level(bad, CHAIN, matching=STRING_ONLY)
    if kind == "misspell_label":
        # a misspelt label still matches its component; the match is no longer exact
        assert r.score == 1.0 and min(p.string_similarity for p in r.matching.pairs) < 1.0
    else:
        assert r.score < 1.0


def test_specific_records():
    bad, (rec,) = perturb_graph(CHAIN, 1, seed=1, types=["reverse_edge"])
    assert (rec["target"], rec["source"]) in {(e.source, e.target) for e in bad.edges}
    assert (rec["source"], rec["target"]) not in {(e.source, e.target) for e in bad.edges}
    bad, (rec,) = perturb_graph(CHAIN, 1, seed=1, types=["add_edge"])
    # a hallucinated relation: no path either way in the reference
    r = graph_level(bad, CHAIN, matching=STRING_ONLY)
    added = [e for e in r.edges if (e.source, e.target) == (rec["source"], rec["target"])]
    assert added[0].verdict == "unsupported"
    bad, (rec,) = perturb_graph(CHAIN, 1, seed=1, types=["misspell_label"])
    assert rec["misspelled"] != rec["label"] and bad.node(rec["node"]).label == rec["misspelled"]


def test_perturbation_is_deterministic_and_too_many_errors_fail():
    assert perturb_graph(CHAIN, 3, seed=9) == perturb_graph(CHAIN, 3, seed=9)
    with pytest.raises(PerturbationError):
        perturb_graph(make_graph("AB", [("A", "B")]), 1, seed=0, types=["drop_node"])


def _edits(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions)."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(0, 10**6))
def test_structural_errors_always_cost_score(k, seed):
    bad, errors = perturb_graph(CHAIN, k, seed=seed)
    assert len(errors) == k
    score = graph_level(bad, CHAIN, matching=STRING_ONLY).score
    if all(e["type"] == "misspell_label" for e in errors):
        # misspellings alone cost nothing while every misspelled label stays nearer its own
        # original than any other reference label; two of them can make labels confusable
        # ("Stage lpha" is one edit from both "Stage Alpha" and "Stage Flpha"), and then the
        # matching has no way to tell which box is which
        originals = [n.label for n in CHAIN.nodes]
        if all(_edits(e["misspelled"], e["label"]) < min(_edits(e["misspelled"], o) for o in originals
                                                         if o != e["label"]) for e in errors):
            assert score == 1.0
        else:
            assert score <= 1.0
    else:
        assert score < 1.0


@pytest.mark.parametrize("kind", DEGRADATIONS)
def test_degradations(kind):
    img = Image.new("RGB", (200, 100), "white")
    out = degrade_image(img, kind, seed=0)
    assert out.mode == "RGB"
    assert (degrade_image(img, kind, seed=0).tobytes() == out.tobytes())


def test_graphviz_and_perturbed_generators_with_resume(tmp_path):
    refs = tmp_path / "refs"
    refs.mkdir()
    for name in ("cv_detr", "nlp_rag"):
        (refs / f"{name}.json").write_bytes((REFS / f"{name}.json").read_bytes())
    (refs / "broken.json").write_text("{}")
    out = tmp_path / "gen"
    outcomes = run_generator(get_generator("graphviz"), refs, out)
    status = {o.item_id: o.status for o in outcomes}
    assert status == {"broken": "error", "cv_detr": "ok", "nlp_rag": "ok"}
    with Image.open(out / "cv_detr.png") as im:
        assert im.width > 200
    again = run_generator(get_generator("graphviz"), refs, out)
    assert {o.item_id: o.status for o in again}["cv_detr"] == "skipped"
    # a different prompt style is a different job: redone
    naive = run_generator(get_generator("graphviz"), refs, out, style="naive")
    assert {o.item_id: o.status for o in naive}["cv_detr"] == "ok"

    pout = tmp_path / "perturbed"
    run_generator(get_generator("perturbed", severity=2, degrade="blur"), refs, pout)
    rec = json.loads((pout / "injected" / "cv_detr.json").read_text())
    assert len(rec["errors"]) == 2 and rec["degradation"] == "blur"
    assert DiagramGraph.from_dict(rec["graph"]).id == "cv_detr"
    assert (pout / "cv_detr.png").is_file()


def test_unknown_generator_is_a_clear_error():
    with pytest.raises(GeneratorError, match="unknown generator 'nope'; available: graphviz, perturbed"):
        get_generator("nope")
    with pytest.raises(GeneratorError, match="rejected options"):
        get_generator("graphviz", colour="red")


def test_stats_of_the_reference_set():
    graphs = [load_graph(p) for p in sorted(REFS.glob("*.json"))]
    s = reference_stats(graphs)
    assert s["n_items"] == 60 and set(s["areas"].values()) == {12}
    assert s["difficulty_mismatch"] == []
    assert all(n > 0 for n in s["difficulty"].values())
    assert s["share_nonlinear"] > 0.7


def test_cli_stats_prompt_generate(tmp_path, capsys):
    assert main(["stats", str(REFS), "--plot", str(tmp_path / "s.png")]) == 0
    assert (tmp_path / "s.png").stat().st_size > 1000
    assert main(["prompt", str(REFS / "cv_detr.json")]) == 0
    out = capsys.readouterr().out
    assert "Relations (" in out and "-> transformer encoder" in out
    assert main(["prompt", str(REFS / "cv_detr.json"), "--style", "naive"]) == 0
    assert "DETR" in capsys.readouterr().out


def test_import_sciflow_bench_layout(tmp_path):
    root = tmp_path / "autobench"
    paper = root / "2304.02643"
    (paper / "sam_results").mkdir(parents=True)
    canvas = {"nodes": [{"node_id": "1", "desc": "image encoder"}, {"node_id": "2", "desc": "mask decoder"}],
              "edges": [{"from": "1", "to": "2"}]}
    (paper / "canvas_full.json").write_text(json.dumps(canvas))
    (paper / "prompt.json").write_text(json.dumps({"prompt": "An image encoder feeds a mask decoder."}))
    Image.new("RGB", (64, 32), "white").save(paper / "sam_results" / "segmentation_result.png")
    Image.new("RGB", (64, 32), "gray").save(paper / "gemini3.png")
    (paper / "gemini3_autobench").mkdir()
    (paper / "gemini3_autobench" / "canvas_full.json").write_text(json.dumps(canvas))
    (root / "broken").mkdir()
    out = tmp_path / "imported"
    rep = import_sciflow_bench(root, out)
    assert [p.name for p in rep.references] == ["2304.02643.json"]
    ref = load_graph(out / "references" / "2304.02643.json")
    assert ref.prompt is not None and ref.prompt.text.startswith("An image encoder")
    assert (out / "references" / "2304.02643.png").is_file()
    assert (out / "generated" / "gemini3" / "2304.02643.png").is_file()
    assert load_graph(out / "parsed" / "gemini3" / "2304.02643.json").id == "2304.02643"
    assert [e[0] for e in rep.errors] == ["broken"]
    assert main(["import", "sciflow-bench", str(root), "-o", str(tmp_path / "again")]) == 1  # 'broken' reported


def test_a_damaged_drawing_keeps_what_its_errors_do_not_touch():
    g = DiagramGraph.from_dict({
        "id": "lab", "groups": [{"id": "G", "label": "Encoder stack"}],
        "nodes": [{"id": "a", "label": "Input Tokens", "group": "G"},
                  {"id": "b", "label": "Self Attention", "group": "G"},
                  {"id": "c", "label": "Feed Forward"}, {"id": "d", "label": "Output Logits"}],
        "edges": [{"source": "a", "target": "b", "label": "embed"}, {"source": "b", "target": "c", "label": "attend",
                   "style": "dashed"}, {"source": "c", "target": "d", "label": "project"}]})
    same, errors = perturb_graph(g, 0, seed=3)
    assert same == g and errors == []  # severity 0 is the graphviz generator's drawing
    bad, (rec,) = perturb_graph(g, 1, seed=3, types=["reverse_edge"])
    flipped = next(e for e in bad.edges if (e.source, e.target) == (rec["target"], rec["source"]))
    original = next(e for e in g.edges if (e.source, e.target) == (rec["source"], rec["target"]))
    assert (flipped.label, flipped.style) == (original.label, original.style)
    bad, (rec,) = perturb_graph(g, 1, seed=3, types=["swap_labels"])
    assert [n.group for n in bad.nodes] == [n.group for n in g.nodes]  # groups stay drawn
    assert sorted(e.label for e in bad.edges) == sorted(e.label for e in g.edges)
    bad, (rec,) = perturb_graph(g, 1, seed=3, types=["merge_nodes"])
    kept = bad.node(rec["nodes"][0])
    assert kept.group == g.node(rec["nodes"][0]).group and kept.label == rec["merged_label"]
