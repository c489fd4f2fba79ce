"""Text level: coverage, faithfulness, alignment, exact values and invariants."""

from __future__ import annotations

import pytest
from conftest import STRING_ONLY, make_graph

from sciflow.config import TextConfig
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.text_level import prompt_graph, serialize, text_level


def ref_with_prompt(components, relations, text="", nodes="ABC", edges=(("A", "B"),)):
    g = make_graph(nodes, edges)
    return DiagramGraph.from_dict({
        **g.to_dict(),
        "prompt": {"text": text or "x", "components": list(components), "relations": [list(r) for r in relations]},
    })


def test_perfect_prediction_scores_one_string_only():
    ref = ref_with_prompt(["Encoder", "Decoder"], [("Encoder", "Decoder")])
    pred = make_graph([("a", "Encoder"), ("b", "Decoder")], [("a", "b")])
    r = text_level(pred, ref, matching=STRING_ONLY)
    assert (r.coverage, r.faithfulness, r.relation_recall) == (1.0, 1.0, 1.0)
    assert r.fallback is True
    # string fallback for the text similarity; alignment and score follow the documented weights
    assert r.alignment == pytest.approx(0.6 * 1.0 + 0.4 * r.text_similarity)
    assert r.score == pytest.approx(0.3 + 0.3 + 0.4 * r.alignment)


def test_coverage_faithfulness_exact():
    ref = ref_with_prompt(["Encoder", "Decoder", "Loss", "Optimizer"], [("Encoder", "Decoder"), ("Decoder", "Loss")])
    # two components drawn (one twice), one invented box, one edge label the prompt does not support
    pred = DiagramGraph.from_dict({
        "id": "p",
        "nodes": [{"id": "a", "label": "Encoder"}, {"id": "a2", "label": "Encoder"},
                  {"id": "b", "label": "Decoder"}, {"id": "z", "label": "Quantum Router"}],
        "edges": [{"source": "a", "target": "b", "label": "zebra"}],
    })
    r = text_level(pred, ref, matching=STRING_ONLY)
    assert r.coverage == pytest.approx(2 / 4)
    assert r.uncovered == ("Loss", "Optimizer")
    # statements: the labels Encoder, Encoder, Decoder, Quantum Router; the arrow label zebra;
    # the arrow Encoder -> Decoder. Unsupported: the second Encoder (a duplicate), Quantum
    # Router, zebra -> 3 of 6 supported
    assert r.faithfulness == pytest.approx(3 / 6)
    assert r.unsupported_texts == ("Quantum Router", "zebra")
    assert r.duplicate_texts == ("Encoder",)
    assert r.unsupported_relations == ()
    assert r.relation_recall == pytest.approx(1 / 2)


def test_edge_label_mentioned_in_prompt_text_is_supported():
    ref = ref_with_prompt(["Encoder", "Decoder"], [("Encoder", "Decoder")], text="The encoder passes latent codes on.")
    pred = DiagramGraph.from_dict({
        "id": "p", "nodes": [{"id": "a", "label": "Encoder"}, {"id": "b", "label": "Decoder"}],
        "edges": [{"source": "a", "target": "b", "label": "Latent Codes"}],
    })
    assert text_level(pred, ref, matching=STRING_ONLY).faithfulness == 1.0


def test_extra_texts_read_in_the_image_count():
    ref = ref_with_prompt(["Encoder"], [])
    pred = make_graph([("a", "Encoder")])
    r = text_level(pred, ref, matching=STRING_ONLY, extra_texts=["Figure 3: our amazing method"])
    assert r.faithfulness == 0.5


def test_empty_prediction_and_prompt_without_components():
    ref = ref_with_prompt(["Encoder", "Decoder"], [("Encoder", "Decoder")])
    r = text_level(make_graph([]), ref, matching=STRING_ONLY)
    assert (r.coverage, r.faithfulness, r.relation_recall) == (0.0, 0.0, 0.0)
    # no relations asked and none drawn: the relation scores are the component scores
    assert text_level(make_graph([]), ref_with_prompt(["Encoder"], []), matching=STRING_ONLY).relation_recall == 0.0
    one = text_level(make_graph([("a", "Encoder")]), ref_with_prompt(["Encoder"], []), matching=STRING_ONLY)
    assert (one.relation_precision, one.relation_recall) == (1.0, 1.0)
    plain = make_graph("AB", [("A", "B")])  # no prompt: the reference graph is the prompt
    assert prompt_graph(plain).labels == ["A", "B"]
    assert text_level(plain, plain, matching=STRING_ONLY).coverage == 1.0


def test_reversed_relation_lowers_alignment():
    ref = ref_with_prompt(["Encoder", "Decoder"], [("Encoder", "Decoder")])
    good = make_graph([("a", "Encoder"), ("b", "Decoder")], [("a", "b")])
    bad = make_graph([("a", "Encoder"), ("b", "Decoder")], [("b", "a")])
    assert text_level(bad, ref, matching=STRING_ONLY).relation_recall == 0.0
    assert text_level(bad, ref, matching=STRING_ONLY).score < text_level(good, ref, matching=STRING_ONLY).score


def test_serialization_ignores_ids_and_order():
    g1 = make_graph([("a", "X"), ("b", "Y")], [("a", "b")])
    g2 = make_graph([("q", "Y"), ("p", "X")], [("p", "q")])
    assert serialize(g1) == serialize(g2)


def test_judge_backend_requires_a_judge_value():
    ref = ref_with_prompt(["Encoder"], [])
    pred = make_graph([("a", "Encoder")])
    cfg = TextConfig(alignment_backend="judge")
    with pytest.raises(ValueError, match="judge_alignment"):
        text_level(pred, ref, cfg, STRING_ONLY)
    r = text_level(pred, ref, cfg, STRING_ONLY, judge_alignment=0.5)
    assert r.alignment == 0.5 and r.score == pytest.approx(0.3 + 0.3 + 0.4 * 0.5)


@pytest.mark.slow
def test_minilm_text_similarity_chunks_long_texts():
    from sciflow.models.embedding import get_embedder

    emb = get_embedder("minilm")
    long = "\n".join(f"- Component number {i} feeds component number {i + 1}" for i in range(200))
    chunks = emb.chunks(long)
    assert len(chunks) > 1
    assert " ".join(" ".join(chunks).split()) == " ".join(long.replace("\n", " ").split())
    assert emb.text_similarity(long, long) == pytest.approx(1.0, abs=1e-6)
    ref = ref_with_prompt(["Image Encoder", "Mask Decoder"], [("Image Encoder", "Mask Decoder")],
                          text="An image encoder feeds a mask decoder.")
    pred = make_graph([("a", "Image Encoder"), ("b", "Mask Decoder")], [("a", "b")])
    r = text_level(pred, ref)
    assert r.fallback is False and 0.5 < r.text_similarity <= 1.0
    assert r.score > 0.9


PROMPT = ref_with_prompt(["Encoder", "Decoder", "Loss"], [("Encoder", "Decoder"), ("Decoder", "Loss")],
                         text="Title: Toy\nComponents (3):\n- Encoder\n- Decoder\n- Loss\nRelations (2):\n"
                              "- Encoder -> Decoder\n- Decoder -> Loss\nLayout: left-to-right")
COPY = make_graph([("e", "Encoder"), ("d", "Decoder"), ("l", "Loss")], [("e", "d"), ("d", "l")])


def text(pred, **kw):
    return text_level(pred, PROMPT, matching=STRING_ONLY, **kw)


def test_perfect_copy_scores_exactly_one():
    r = text(COPY)
    assert (r.coverage, r.faithfulness, r.relation_f1, r.text_similarity, r.score) == (1.0, 1.0, 1.0, 1.0, 1.0)


def test_every_arrow_both_ways_costs_faithfulness_and_relation_precision():
    both = make_graph([("e", "Encoder"), ("d", "Decoder"), ("l", "Loss")],
                      [("e", "d"), ("d", "e"), ("d", "l"), ("l", "d")])
    r = text(both)
    assert r.faithfulness == pytest.approx(1 - 2 / 7)  # 3 labels + 4 arrows, 2 arrows unsupported
    assert (r.relation_precision, r.relation_recall) == (0.0, 0.0)  # two two-way pairs: no direction
    assert r.unsupported_relations == ("Decoder -> Encoder", "Loss -> Decoder")
    assert r.score < text(COPY).score


def test_diagram_drawn_twice_costs_faithfulness():
    twice = make_graph([("e", "Encoder"), ("d", "Decoder"), ("l", "Loss"),
                        ("e2", "Encoder"), ("d2", "Decoder"), ("l2", "Loss")],
                       [("e", "d"), ("d", "l"), ("e2", "d2"), ("d2", "l2")])
    r = text(twice)
    assert r.coverage == 1.0
    assert r.faithfulness == pytest.approx(0.5)  # 6 labels + 4 arrows: 3 duplicates, 2 copied arrows
    assert r.duplicate_texts == ("Decoder", "Encoder", "Loss")
    assert r.relation_precision == 0.5


def test_template_words_are_not_support():
    r = text(COPY, extra_texts=["Components", "Relations", "Layout", "Toy", "left-to-right"])
    assert r.unsupported_texts == ("Components", "Layout", "Relations")  # the title and layout are content
    assert r.faithfulness == pytest.approx(1 - 3 / 10)


def test_repeated_components_are_kept():
    g = make_graph([("r1", "ReLU"), ("r2", "ReLU"), ("c", "Concat")], [("r1", "c"), ("r2", "c")])
    from sciflow.bench.prompts import build_prompt

    ref = DiagramGraph.from_dict({**g.to_dict(), "prompt": {
        "text": "x", "components": list(build_prompt(g).components),
        "relations": [list(r) for r in build_prompt(g).relations]}})
    assert prompt_graph(ref).labels == ["ReLU", "ReLU", "Concat"]
    r = text_level(g, ref, matching=STRING_ONLY)
    assert (r.coverage, r.faithfulness, r.relation_f1) == (1.0, 1.0, 1.0)


def test_free_text_exactly_at_the_threshold_is_supported():
    # "abcxy" against the component "abcde": Indel similarity 0.6 = the pinned threshold
    ref = ref_with_prompt(["abcde"], [], nodes="A", edges=())
    pred = make_graph([("a", "abcde")])
    assert text_level(pred, ref, matching=STRING_ONLY, extra_texts=["abcxy"]).faithfulness == 1.0
    assert text_level(pred, ref, matching=STRING_ONLY, extra_texts=["abxyz"]).faithfulness == 0.5
