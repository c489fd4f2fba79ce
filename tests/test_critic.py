"""The critic: exact critiques per error type, formats, the instruction editor and the loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import STRING_ONLY, make_graph

from sciflow.bench.perturb import ERROR_TYPES, perturb_graph
from sciflow.config import CritiqueConfig, load_config
from sciflow.critic import (
    Candidate,
    Critique,
    CritiqueRule,
    Instruction,
    apply_instructions,
    critique,
    critique_from_result,
    format_critique,
    is_local,
    parse_instruction,
    parse_tagged,
    rectify,
    rectify_folder,
    to_tagged,
)
from sciflow.critic.instructions import InstructionError, InstructionWarning
from sciflow.critic.rectify import GraphEditor, graph_aware_generator
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.graph_level import graph_level

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "sciflow" / "data" / "sciflow-bench-60"  # sciflow-bench-60@1

# A -> B -> C -> D, B -> E   (labels are words so that misspellings and merges are realistic)
LABELS = {"a": "Image", "b": "Encoder", "c": "Decoder", "d": "Loss", "e": "Memory Bank"}
REF_EDGES = [("a", "b"), ("b", "c"), ("c", "d"), ("b", "e")]


def ref_graph() -> DiagramGraph:
    return make_graph(list(LABELS.items()), REF_EDGES, gid="toy")


def pred(labels: dict[str, str], edges, boxes: dict[str, list[float]] | None = None) -> DiagramGraph:
    nodes = []
    for i, lab in labels.items():
        n = {"id": i, "label": lab}
        if boxes and i in boxes:
            n["bbox"] = boxes[i]
        nodes.append(n)
    return DiagramGraph.from_dict({"id": "toy", "nodes": nodes,
                                   "edges": [{"source": s, "target": t} for s, t in edges]})


def crit(p: DiagramGraph, rule: CritiqueRule | None = None) -> Critique:
    return critique(p, ref_graph(), rule=rule, matching=STRING_ONLY)


def ops(c: Critique) -> list[tuple[str, dict]]:
    return [(i.op, dict(i.args)) for i in c.instructions]


def repaired(p: DiagramGraph, c: Critique) -> bool:
    return crit(apply_instructions(p, c.instructions)).passed


# ------------------------------------------------------------------ exact critiques per error type
def test_clean_prediction_passes_with_no_edits():
    c = crit(ref_graph())
    assert c.passed and c.findings == () and c.instructions == []
    assert c.summary.startswith("The diagram matches the reference: all 5 components and 4 arrows")
    assert to_tagged(c).startswith("<answer>yes</answer>")


def test_reversed_edge_with_boxes():
    boxes = {"c": [300, 10, 380, 50], "d": [420, 10, 480, 50]}
    p = pred(LABELS, [("a", "b"), ("b", "c"), ("d", "c"), ("b", "e")], boxes)
    c = crit(p)
    assert not c.passed
    [f] = c.findings
    assert f.kind == "reversed_edge" and f.severity == 5 and f.blocking
    assert f.message == ('the arrow between "Loss" at [420, 10, 480, 50] and "Decoder" at [300, 10, 380, 50] points '
                         'the wrong way: the reference has "Decoder" → "Loss".')
    [i] = f.instructions
    assert (i.op, dict(i.args), i.region) == ("reverse_edge", {"source": "Loss", "target": "Decoder"},
                                               (300, 10, 480, 50))
    assert i.text == ('Reverse the arrow from "Loss" to "Decoder" so that it points from "Decoder" to "Loss" '
                      "(region [300, 10, 480, 50]).")
    assert c.summary == "The diagram does not match the reference: 1 error (1 reversed arrow)."
    assert repaired(p, c)


def test_missing_edge():
    p = pred(LABELS, [("a", "b"), ("b", "c"), ("b", "e")])
    c = crit(p)
    assert [f.kind for f in c.findings] == ["missing_edge"]
    assert ops(c) == [("add_edge", {"source": "Decoder", "target": "Loss"})]
    assert c.instructions[0].region is None
    assert c.findings[0].message == ('there is no arrow from "Decoder" to "Loss"; the reference has '
                                     '"Decoder" → "Loss".')
    assert repaired(p, c)


def test_unsupported_edge():
    p = pred(LABELS, REF_EDGES + [("d", "a")])
    c = crit(p)
    assert [f.kind for f in c.findings] == ["unsupported_edge"]
    assert ops(c) == [("remove_edge", {"source": "Loss", "target": "Image"})]
    assert repaired(p, c)


def test_missing_node_carries_its_arrows():
    labels = {k: v for k, v in LABELS.items() if k != "c"}
    p = pred(labels, [("a", "b"), ("b", "e")], {"b": [0, 0, 10, 10], "d": [50, 0, 60, 10]})
    c = crit(p)
    [f] = c.findings
    assert f.kind == "missing_node" and f.severity == 1
    assert ops(c) == [("add_node", {"label": "Decoder", "sources": ["Encoder"], "targets": ["Loss"], "replaces": []})]
    assert c.instructions[0].region == (0, 0, 60, 10)  # where its neighbours are
    assert f.message == ('the diagram has no box "Decoder"; the reference has "Encoder" → "Decoder", '
                         '"Decoder" → "Loss".')
    assert repaired(p, c)


def test_skipped_node_shortcut_is_replaced():
    labels = {k: v for k, v in LABELS.items() if k != "c"}
    p = pred(labels, [("a", "b"), ("b", "d"), ("b", "e")])  # Encoder -> Loss skips Decoder
    c = crit(p)
    assert ops(c) == [("add_node", {"label": "Decoder", "sources": ["Encoder"], "targets": ["Loss"],
                                    "replaces": [["Encoder", "Loss"]]})]
    assert "directly instead" in c.findings[0].message
    assert repaired(p, c)


def test_hallucinated_node():
    p = pred({**LABELS, "x": "Quantum Router"}, REF_EDGES + [("x", "c")], {"x": [5, 5, 25, 15]})
    c = crit(p)
    [f] = c.findings
    assert f.kind == "hallucinated_node"
    assert f.message == ('the box "Quantum Router" at [5, 5, 25, 15] has no counterpart in the reference, '
                         "nor does its arrow.")
    assert ops(c) == [("remove_node", {"label": "Quantum Router"})]
    assert repaired(p, c)


def test_misspelled_label():
    p = pred({**LABELS, "b": "Encodr"}, REF_EDGES, {"b": [10, 20, 30, 40]})
    c = crit(p)
    [f] = c.findings
    assert f.kind == "misspelled_label" and f.severity == 8
    assert f.message == 'the box at [10, 20, 30, 40] reads "Encodr" instead of "Encoder".'
    assert ops(c) == [("relabel", {"from": "Encodr", "to": "Encoder"})]
    assert repaired(p, c)


def test_case_and_punctuation_are_not_misspellings():
    assert crit(pred({**LABELS, "e": "memory-bank"}, REF_EDGES)).passed


def test_misspelling_threshold_is_configurable():
    p = pred({**LABELS, "e": "Memory Bnk"}, REF_EDGES)
    assert not crit(p).passed
    assert crit(p, CritiqueRule(misspell_threshold=0.9)).passed


def test_merged_nodes_are_split_with_their_arrows():
    labels = {"a": "Image", "b": "Encoder / Decoder", "d": "Loss", "e": "Memory Bank"}
    p = pred(labels, [("a", "b"), ("b", "d"), ("b", "e")])
    c = crit(p)
    [f] = c.findings
    assert f.kind == "merged_node" and f.severity == 2
    assert ops(c) == [("split_node", {"label": "Encoder / Decoder", "into": ["Encoder", "Decoder"],
                                      "edges": [["Decoder", "Loss"], ["Encoder", "Decoder"], ["Encoder", "Memory Bank"],
                                                ["Image", "Encoder"]]})]
    assert repaired(p, c)


def test_merge_detected_by_containment_without_separator():
    labels = {"a": "Image", "b": "Encoder Decoder", "d": "Loss", "e": "Memory Bank"}
    c = crit(pred(labels, [("a", "b"), ("b", "d"), ("b", "e")]))
    assert [f.kind for f in c.findings] == ["merged_node"]


def test_swapped_labels_need_two_relabels():
    # Loss and Memory Bank (two leaves under different parents) exchange labels
    p = pred({**LABELS, "d": "Memory Bank", "e": "Loss"}, REF_EDGES)
    c = crit(p)
    [f] = c.findings
    assert f.kind == "swapped_labels"
    assert sorted(ops(c), key=str) == sorted([("relabel", {"from": "Memory Bank", "to": "Loss"}),
                                              ("relabel", {"from": "Loss", "to": "Memory Bank"})], key=str)
    assert repaired(p, c)


def test_severity_order_and_rule():
    p = pred({"a": "Image", "b": "Encodr", "c": "Decoder", "d": "Loss", "x": "Quantum Router"},
             [("a", "b"), ("c", "b"), ("c", "d"), ("d", "a")])
    c = crit(p)
    kinds = [f.kind for f in c.findings]
    assert kinds == ["missing_node", "hallucinated_node", "reversed_edge", "unsupported_edge", "misspelled_label"]
    assert [f.severity for f in c.findings] == sorted(f.severity for f in c.findings)
    assert repaired(p, c)
    lenient = CritiqueRule(fail_on_missing_node=False, fail_on_hallucinated_node=False, fail_on_reversed_edge=False,
                           fail_on_unsupported_edge=False, misspell_threshold=0.0)
    c2 = crit(p, lenient)
    assert c2.passed and all(not f.blocking for f in c2.findings if f.kind != "misspelled_label")
    assert "(minor)" in to_tagged(c2) and c2.summary.startswith("The diagram passes with")


def test_critique_from_result_matches_critique():
    p = pred({**LABELS, "b": "Encodr"}, [("b", "a")])
    res = graph_level(p, ref_graph(), matching=STRING_ONLY)
    c = critique_from_result(p, ref_graph(), res, CritiqueRule())
    assert c == crit(p) and c.score == res.score
    d = c.to_dict()
    assert d["passed"] is False and d["answer"] == "no" and d["instructions"][0]["op"] in {
        "add_node", "reverse_edge", "add_edge", "relabel"}
    json.dumps(d)
    assert Critique.from_dict(d) == c


@pytest.mark.parametrize("kind", ERROR_TYPES)
def test_every_perturbation_is_caught_and_repaired(kind):
    from sciflow.format.graph import load_graph

    ref = load_graph(BENCH / "cv_clip.json")
    for seed in range(3):
        bad, _ = perturb_graph(ref, 1, seed, [kind])
        c = critique(bad, ref, matching=STRING_ONLY)
        assert not c.passed, (kind, seed)
        fixed = apply_instructions(bad, c.instructions)
        assert critique(fixed, ref, matching=STRING_ONLY).passed, (kind, seed, [i.text for i in c.instructions])


# ------------------------------------------------------------------ formats
def test_tagged_round_trip_and_formats():
    p = pred({"a": "Image", "b": "Encodr", "c": "Encoder / Decoder", "d": "Loss", "x": 'Odd "quoted" box'},
             [("a", "b"), ("d", "c"), ("x", "d")], {"b": [1.25, 2, 3, 4.5]})
    ref = make_graph([("a", "Image"), ("b", "Encoder"), ("c", "Decoder"), ("d", "Loss"), ("e", "Head")],
                     [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")])
    c = critique(p, ref, matching=STRING_ONLY)
    assert len(c.findings) >= 3
    tagged = to_tagged(c)
    assert tagged.startswith("<answer>no</answer>\n<explanation>\n") and "<edit>\n1. " in tagged
    back = parse_tagged(tagged)
    assert back == c
    assert back.unparsed == ()
    assert json.loads(format_critique(c, "json"))["passed"] is False
    text = format_critique(c, "text")
    assert text.splitlines()[0].startswith("toy: FAIL") or text.splitlines()[0].startswith("g: FAIL")
    with pytest.raises(ValueError):
        format_critique(c, "xml")
    ok = crit(ref_graph())
    assert parse_tagged(to_tagged(ok)) == ok


def test_parse_tagged_is_lenient_with_model_output():
    text = ("<think>...</think><ANSWER> No </ANSWER><explanation>The arrow is backwards.</explanation>"
            "<edit>- Reverse the arrow from “Loss” to “Decoder”.\n- make it prettier</edit>")
    c = parse_tagged(text)
    assert not c.passed and c.summary == "The arrow is backwards."
    assert [(i.op, dict(i.args)) for i in c.instructions] == [("reverse_edge", {"source": "Loss", "target": "Decoder"})]
    assert c.unparsed == ("- make it prettier",)
    assert parse_tagged("Yes, the diagram is correct.").passed
    with pytest.raises(ValueError):
        parse_tagged("<explanation>hmm</explanation>")


@pytest.mark.parametrize("ins", [
    Instruction("add_edge", {"source": "A", "target": 'B "b"'}, (1, 2, 3, 4.5)),
    Instruction("remove_edge", {"source": "A, x", "target": "B and C"}),
    Instruction("reverse_edge", {"source": "A", "target": "B"}),
    Instruction("add_node", {"label": "X", "sources": ["A", "B"], "targets": ["C"], "replaces": [["A", "C"]]}),
    Instruction("add_node", {"label": "X", "sources": [], "targets": [], "replaces": []}),
    Instruction("add_node", {"label": "X", "sources": [], "targets": ["C", "D", "E"], "replaces": []}),
    Instruction("remove_node", {"label": "Quantum Router"}, (0, 0, 10, 10)),
    Instruction("relabel", {"from": "Encodr", "to": "Encoder"}),
    Instruction("split_node", {"label": "A / B", "into": ["A", "B"], "edges": [["A", "B"], ["X", "A"]]}),
])
def test_instruction_sentence_round_trip(ins):
    assert parse_instruction(ins.text) == ins
    assert Instruction.from_dict(json.loads(json.dumps(ins.to_dict()))) == ins


def test_bad_instructions():
    with pytest.raises(InstructionError):
        Instruction("paint", {})
    with pytest.raises(InstructionError):
        parse_instruction("Make the diagram nicer.")
    g = ref_graph()
    with pytest.warns(InstructionWarning):
        out = apply_instructions(g, [Instruction("remove_edge", {"source": "Loss", "target": "Image"})])
    assert out == g
    with pytest.raises(InstructionError):
        apply_instructions(g, [Instruction("remove_node", {"label": "Nope"})], strict=True)


def test_editor_is_order_independent_and_swaps_labels():
    g = make_graph([("a", "A"), ("b", "B")], [("a", "b")])
    ins = [Instruction("relabel", {"from": "A", "to": "B"}), Instruction("relabel", {"from": "B", "to": "A"}),
           Instruction("add_edge", {"source": "A", "target": "B"})]  # names after the relabels
    out1 = apply_instructions(g, ins)
    out2 = apply_instructions(g, list(reversed(ins)))
    assert out1 == out2
    assert {n.id: n.label for n in out1.nodes} == {"a": "B", "b": "A"}
    assert sorted((e.source, e.target) for e in out1.edges) == [("a", "b"), ("b", "a")]


# ------------------------------------------------------------------ config
def test_critique_config_table():
    cfg = load_config()
    assert cfg.critique == CritiqueConfig()
    assert CritiqueRule.from_config(cfg) == CritiqueRule()
    cfg2 = load_config(overrides={"critique": {"fail_on_missing_edge": False, "misspell_threshold": 0.5}})
    rule = CritiqueRule.from_config(cfg2.critique)
    assert not rule.fail_on_missing_edge and rule.misspell_threshold == 0.5
    p = pred(LABELS, [("a", "b"), ("b", "c"), ("b", "e")])
    assert crit(p, rule).passed


# ------------------------------------------------------------------ the loop
def test_is_local():
    few = [Instruction("add_edge", {"source": "A", "target": "B"})] * 2
    assert is_local(few) and not is_local(few * 2) and not is_local([])
    big = Instruction("add_node", {"label": "X", "sources": ["A", "B"], "targets": ["C"], "replaces": []})
    assert not is_local([big])


def test_loop_converges_with_the_graph_editor(tmp_path):
    ref = ref_graph()
    bad = pred({**LABELS, "b": "Encodr"}, [("a", "b"), ("c", "b"), ("c", "d"), ("b", "e")])
    calls = []

    def generate(item, prompt, out_path):
        calls.append(prompt)
        return bad  # a graph-aware generator that always draws the same mistakes

    t = rectify(ref, generate, edit=GraphEditor(render=False), matching=STRING_ONLY, out_dir=tmp_path)
    assert t.passed and t.n_steps == 1 and [s.action for s in t.steps] == ["generate", "edit"]
    assert len(calls) == 1
    data = json.loads((tmp_path / "trajectory.json").read_text())
    assert data["passed"] and len(data["steps"]) == 2
    assert data["steps"][0]["critique"]["passed"] is False and data["steps"][1]["score"] == 1.0
    assert (tmp_path / "step00.png").is_file() and (tmp_path / "step01.graph.json").is_file()


def test_loop_regenerates_with_instructions_when_many_errors():
    ref = ref_graph()
    bad = pred({"a": "Image", "b": "Encodr", "c": "Decodr", "d": "Los", "e": "Memory Bank"}, REF_EDGES)
    prompts = []

    def generate(item, prompt, out_path):
        prompts.append(prompt)
        return bad if len(prompts) == 1 else item  # the second attempt follows the corrections

    t = rectify(ref, generate, edit=GraphEditor(render=False), matching=STRING_ONLY)
    assert t.passed and [s.action for s in t.steps] == ["generate", "regenerate"]
    assert 'Change the label "Encodr" to "Encoder"' in prompts[1]


def test_loop_stops_after_max_steps():
    ref = ref_graph()
    bad = pred({"a": "Image", "b": "Encodr", "c": "Decodr", "d": "Los", "e": "Memory Bank"}, REF_EDGES)
    t = rectify(ref, lambda item, prompt, out: bad, matching=STRING_ONLY, max_steps=3)
    assert not t.passed and len(t.steps) == 4 and t.n_steps == 3


def test_rectify_folder_with_the_perturbed_generator(tmp_path):
    refs = tmp_path / "refs"
    refs.mkdir()
    for name in ("cv_vit", "ml_gan"):
        (refs / f"{name}.json").write_text((BENCH / f"{name}.json").read_text())
    cfg = load_config(overrides={"matching": {"embedder": "none"}})
    out = tmp_path / "out"
    summary = rectify_folder("perturbed", refs, out, editor="graph", generator_options={"severity": 1, "seed": 0},
                             config=cfg)
    assert summary["items"] == 2 and summary["errors"] == []
    assert summary["passed_initially"] == 0.0 and summary["repaired"] == 1.0
    rows = [json.loads(x) for x in (out / "trajectories.jsonl").read_text().splitlines()]
    assert [r["item"] for r in rows] == ["cv_vit", "ml_gan"]
    for r in rows:
        assert r["passed"] and Path(r["steps"][-1]["image"]).is_file()
        assert (out / r["item"] / "trajectory.json").is_file()
    assert json.loads((out / "summary.json").read_text())["repaired"] == 1.0


def test_perturbed_regeneration_draws_the_next_seed():
    from sciflow.format.graph import load_graph

    ref = load_graph(BENCH / "cv_vit.json")
    gen = graph_aware_generator("perturbed", render=False, severity=2, seed=5)
    first, second = gen(ref, "", Path("x.png")), gen(ref, "", Path("x.png"))
    assert isinstance(first, Candidate) and first.graph != second.graph
    decaying = graph_aware_generator("perturbed", render=False, severity=1, seed=5, decay=1)
    decaying(ref, "", Path("x.png"))
    assert decaying(ref, "", Path("x.png")).graph == ref  # one error fewer per regeneration: none left


# ------------------------------------------------------------------ through the parser (slow)
@pytest.mark.slow
def test_critique_of_a_parsed_render_and_rerender_round_trip(tmp_path):
    pytest.importorskip("rapidocr", reason="the parser's OCR backend is not installed")
    from sciflow.bench.drawing import render_graph
    from sciflow.critic import critique_input
    from sciflow.pipeline import Parser

    cfg = load_config(overrides={"matching": {"embedder": "none"}})
    ref = make_graph([("a", "Image Patches"), ("b", "Patch Embedding"), ("c", "Transformer Encoder"),
                      ("d", "Classification Head")], [("a", "b"), ("b", "c"), ("c", "d")], gid="vit")
    bad = make_graph([("a", "Image Patches"), ("b", "Patch Embeding"), ("c", "Transformer Encoder"),
                      ("d", "Classification Head")], [("a", "b"), ("b", "c")], gid="vit")
    png = render_graph(bad, tmp_path / "bad.png")
    parser = Parser(cfg)
    c = critique_input(png, ref, config=cfg, parser=parser)
    assert not c.passed
    assert {f.kind for f in c.findings} == {"missing_edge", "misspelled_label"}
    assert all(i.region is not None for i in c.instructions)  # parsed boxes give pixel regions
    # instruction -> graph edit -> re-render -> re-parse: the errors are gone
    fixed = apply_instructions(parser(png).graph, c.instructions)
    png2 = render_graph(fixed, tmp_path / "fixed.png")
    assert critique_input(png2, ref, config=cfg, parser=parser).passed
