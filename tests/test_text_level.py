"""Text level: coverage, faithfulness, alignment, exact values and invariants."""

from __future__ import annotations

import pytest
from conftest import STRING_ONLY, make_graph

from sciflow.config import TextConfig
from sciflow.graph import DiagramGraph
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
    # texts: Encoder, Encoder, Decoder, Quantum Router, zebra -> 3 of 5 supported
    assert r.faithfulness == pytest.approx(3 / 5)
    assert r.unsupported_texts == ("Quantum Router", "zebra")
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
    # no relations asked and none drawn: the documented empty case gives recall 1
    assert text_level(make_graph([]), ref_with_prompt(["Encoder"], []), matching=STRING_ONLY).relation_recall == 1.0
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
    from sciflow.embedding import get_embedder

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
