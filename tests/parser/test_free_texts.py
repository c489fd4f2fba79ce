"""Text read outside every node and arrow label reaches the parsed graph as free text."""

from __future__ import annotations

from sciflow.config import MatchingConfig
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.text_level import text_level

from .drawing import Canvas, labels


def test_a_title_and_a_stray_glyph(parser):
    c = Canvas(620, 220)
    c.text("Overview of our method", 310, 25, size=20)
    c.box("Encoder", 30, 110)
    c.box("Decoder", 420, 110)
    c.arrow([(180, 135), (420, 135)])
    g = parser(c.array()).graph
    assert labels(g) == {"encoder", "decoder"}
    assert [" ".join(t.lower().split()) for t in g.meta["free_texts"]] == ["overview of our method"]


STRING_ONLY = MatchingConfig(embedder="none")


def graph(labels_by_id: dict[str, str], edges: list[tuple[str, str]], **extra) -> DiagramGraph:
    return DiagramGraph.from_dict({"id": "g", "nodes": [{"id": i, "label": t} for i, t in labels_by_id.items()],
                                   "edges": [{"source": a, "target": b} for a, b in edges], **extra})


def test_free_text_costs_faithfulness_when_the_prompt_does_not_support_it():
    ref = graph({"e": "Encoder", "d": "Decoder"}, [("e", "d")])
    pred = graph({"a": "Encoder", "b": "Decoder"}, [("a", "b")],
                 meta={"free_texts": ["Overview of our method", "Encoder"]})
    r = text_level(pred, ref, matching=STRING_ONLY)
    # statements: 2 labels, 1 arrow, 2 free texts; the invented title is unsupported
    assert r.faithfulness == 1 - 1 / 5
    assert r.unsupported_texts == ("Overview of our method",)
    assert text_level(pred, ref, matching=STRING_ONLY, extra_texts=()).faithfulness == 1.0
