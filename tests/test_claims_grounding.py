"""Grounding vetoes and the whole-graph count rule, on hand-made parses whose answers were
worked out by hand (each test fails without its rule)."""

from __future__ import annotations

from sciflow.claims import NEI, REFUTED, SUPPORTED, Claim, check_claim, ground_names
from sciflow.claims.grounding import compact, merged_with, replaces_word
from sciflow.config import MatchingConfig, load_config
from sciflow.format.graph import DiagramGraph

CFG = load_config(overrides={"matching": {"embedder": "none"}})
NONE = MatchingConfig(embedder="none")

CLEAN = {"dangling_ends": 0.0, "headless": 0.0, "isolated": 0.0, "single_agent": 0.0, "text_unassigned": 0.0,
         "both_heads": 0.0, "weak_heads": 0.3}


def parse(nodes: list[tuple[str, str]], edges: list[tuple[str, str]], **meta) -> DiagramGraph:
    return DiagramGraph.from_dict({"id": "p", "meta": {"parser": "sciflow", **meta},
                                   "nodes": [{"id": i, "label": lab} for i, lab in nodes],
                                   "edges": [{"source": s, "target": t} for s, t in edges]})


# the parse of a diffusion figure whose "Denoised Latent z_{t-1}" box was not drawn
DIFFUSION = parse([("a", "Images"), ("b", "Noisy Latent z_T"), ("c", "Denoising U-Net"), ("d", "Cross-Attention")],
                  [("a", "d"), ("b", "c"), ("d", "c")])


def test_a_label_with_a_replaced_word_is_never_taken_for_the_name():
    assert replaces_word("Denoised Latent z_{t−1}", "Noisy Latent z_T")
    alone = ground_names(["Denoised Latent z_{t−1}"], DIFFUSION, NONE)["Denoised Latent z_{t−1}"]
    assert alone.status == "unmatched"  # string similarity 0.81 >= the threshold 0.6, but "noisy" replaces "denoised"
    assert alone.candidates[0][1] != "Noisy Latent z_T"  # not even offered as the closest
    g = ground_names(["Noisy Latent z_T"], DIFFUSION, NONE)
    assert (g["Noisy Latent z_T"].status, g["Noisy Latent z_T"].node) == ("grounded", "b")
    fan_in = {"type": "parallel", "sources": ["Denoised Latent z_{t−1}", "Cross-Attention"],
              "target": "Denoising U-Net"}
    assert check_claim(Claim.from_dict(fan_in), DIFFUSION, config=CFG).verdict == NEI
    denial = {"type": "direct", "source": "Images", "target": "Denoised Latent z_{t−1}", "negated": True}
    assert check_claim(Claim.from_dict({**denial, "target": "Noisy Latent z_T"}), DIFFUSION, config=CFG).verdict \
        == SUPPORTED
    assert check_claim(Claim.from_dict(denial), DIFFUSION, config=CFG).verdict == NEI


def test_the_word_veto_leaves_misreadings_dropped_words_and_glyphs_alone():
    g = parse([("a", "Attcntion Block"), ("b", "Latent Code"), ("c", "Encoder E"), ("d", "Decoder")],
              [("a", "b"), ("c", "d")])
    out = ground_names(["Attention Block", "Latent Code z", "Encoder ℰ"], g, NONE)
    assert [(x.status, x.node) for x in out.values()] == [("grounded", "a"), ("grounded", "b"), ("grounded", "c")]
    assert not replaces_word("Denoised Latent", "Latent")  # a word the OCR dropped
    assert not replaces_word("Encoder", "Decoder")  # no shared word: the matcher's call, not the veto's


def test_a_merge_whose_separator_the_ocr_kept_is_seen_after_folding_both_sides():
    assert compact("x̃_j") == compact("xj") == "xj"
    assert merged_with("x̃_j", "xj/hj") == ["hj"]
    simclr = parse([("x", "X"), ("i", "x_i"), ("m", "xj/hj"), ("z", "zj")], [("x", "i"), ("x", "m"), ("m", "z")])
    g = ground_names(["x̃_j"], simclr, NONE)["x̃_j"]
    assert (g.status, g.candidates[0][0]) == ("merged", "m")
    edge = {"type": "direct", "source": "x", "target": "x̃_j"}
    assert check_claim(Claim.from_dict(edge), simclr, config=CFG).verdict == NEI
    fan_out = {"type": "parallel", "kind": "fan_out", "source": "x", "targets": ["x̃_i", "x̃_j"], "exactly": True}
    r = check_claim(Claim.from_dict(fan_out), simclr, config=CFG)
    assert r.verdict == NEI and "merged" in r.explanation


SOURCES2 = {"type": "analytical", "kind": "count", "of": "sources", "count": 2}
NODES4 = {"type": "analytical", "kind": "count", "of": "nodes", "count": 4}
A_INPUTS = {"type": "analytical", "kind": "count", "of": "inputs", "component": "Mixer", "count": 2}
CHAIN = ([("a", "Source A"), ("b", "Source B"), ("m", "Mixer"), ("o", "Output")], [("a", "m"), ("b", "m"), ("m", "o")])


def test_whole_graph_counts_wait_for_a_parse_without_signs_of_missing_or_extra_parts():
    clean = parse(*CHAIN, parse_reliability=0.9, reliability_signals=CLEAN)
    assert [check_claim(Claim.from_dict(c), clean, config=CFG).verdict for c in (SOURCES2, NODES4, A_INPUTS)] == \
        [SUPPORTED, SUPPORTED, SUPPORTED]
    dangling = parse(*CHAIN, parse_reliability=0.9, reliability_signals={**CLEAN, "dangling_ends": 0.25,
                                                                         "single_agent": 0.1})
    r = check_claim(Claim.from_dict(SOURCES2), dangling, config=CFG)
    assert r.verdict == NEI
    assert r.explanation == ('Not enough information: the diagram has 2 sources ("Source A" and "Source B"), but a '
                             "count over the whole diagram needs every box and arrow, and the parse shows signs of a "
                             "missing or extra one, which may cancel out: connectors attached at one end only (25%); "
                             "boxes found by one agent only (10%).")
    assert check_claim(Claim.from_dict({**SOURCES2, "negated": True, "count": 3}), dangling, config=CFG).verdict == NEI
    # a count that differs stays refuted: the diagram goes to review, it is not certified
    assert check_claim(Claim.from_dict({**NODES4, "count": 5}), dangling, config=CFG).verdict == REFUTED
    # one component's inputs are local: decided on the same parse
    assert check_claim(Claim.from_dict(A_INPUTS), dangling, config=CFG).verdict == SUPPORTED
    # arrow-direction signals alone do not hold a count back
    weak = parse(*CHAIN, reliability_signals={**CLEAN, "both_heads": 0.2, "weak_heads": 0.9})
    assert check_claim(Claim.from_dict({**SOURCES2, "count": 3}), weak, config=CFG).verdict == REFUTED


def test_whole_graph_counts_on_graphs_that_are_not_parses_are_always_decided():
    ref = DiagramGraph.from_dict({"id": "r", "meta": {"reliability_signals": {"dangling_ends": 0.5}},
                                  "nodes": [{"id": i, "label": lab} for i, lab in CHAIN[0]],
                                  "edges": [{"source": s, "target": t} for s, t in CHAIN[1]]})
    assert check_claim(Claim.from_dict(SOURCES2), ref, config=CFG).verdict == SUPPORTED
    no_signals = parse(*CHAIN)  # a parse saved without reliability signals says nothing against itself
    assert check_claim(Claim.from_dict(SOURCES2), no_signals, config=CFG).verdict == SUPPORTED
