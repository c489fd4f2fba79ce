"""Structural claims: every type on hand-made graphs whose answers were worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from sciflow.claims import NEI, REFUTED, SUPPORTED, Claim, check_claim, check_graph, parse_claims
from sciflow.claims.evidence import Regions, regions_of_diagram
from sciflow.config import load_config
from sciflow.format.graph import DiagramGraph

CFG = load_config(overrides={"matching": {"embedder": "none"}})

# Image Encoder, Text Encoder -> Fusion -> Decoder -> Loss -> Optimizer -> Fusion (a feedback loop);
# the two encoders are in "Encoders", itself inside "Backbone".
LOOP = DiagramGraph.from_dict({
    "id": "loop",
    "groups": [{"id": "bb", "label": "Backbone"}, {"id": "enc", "label": "Encoders", "parent": "bb"}],
    "nodes": [
        {"id": "img", "label": "Image Encoder", "group": "enc"},
        {"id": "txt", "label": "Text Encoder", "group": "enc"},
        {"id": "fus", "label": "Fusion Module"},
        {"id": "dec", "label": "Decoder"},
        {"id": "loss", "label": "Loss"},
        {"id": "opt", "label": "Optimizer"},
    ],
    "edges": [{"source": s, "target": t} for s, t in [
        ("img", "fus"), ("txt", "fus"), ("fus", "dec"), ("dec", "loss"), ("loss", "opt"), ("opt", "fus")]],
})


def verdict(obj: dict, graph: DiagramGraph = LOOP, config=CFG) -> str:
    return check_claim(Claim.from_dict(obj), graph, config=config).verdict


D = {"type": "direct"}
P = {"type": "parallel"}
S = {"type": "sequential"}
A = {"type": "analytical"}

CASES = [
    # direct
    ({**D, "source": "Image Encoder", "target": "Fusion Module"}, SUPPORTED),
    ({**D, "source": "Fusion Module", "target": "Image Encoder"}, REFUTED),  # reversed
    ({**D, "source": "Image Encoder", "target": "Decoder"}, REFUTED),  # only a path
    ({**D, "source": "Image Encoder", "target": "Decoder", "negated": True}, SUPPORTED),
    ({**D, "source": "Decoder", "target": "Loss", "negated": True}, REFUTED),
    # parallel
    ({**P, "sources": ["Image Encoder", "Text Encoder"], "target": "Fusion Module"}, SUPPORTED),
    ({**P, "sources": ["Image Encoder", "Text Encoder"], "target": "Fusion Module", "exactly": True}, REFUTED),
    ({**P, "sources": ["Image Encoder", "Text Encoder", "Optimizer"], "target": "Fusion Module", "exactly": True},
     SUPPORTED),
    ({**P, "sources": ["Image Encoder", "Decoder"], "target": "Fusion Module"}, REFUTED),
    ({**P, "source": "Fusion Module", "targets": ["Decoder", "Loss"]}, REFUTED),
    ({**P, "kind": "fan_out", "source": "Loss", "targets": ["Optimizer", "Decoder"], "negated": True}, SUPPORTED),
    # sequential
    ({**S, "path": ["Image Encoder", "Fusion Module", "Decoder", "Loss"]}, SUPPORTED),
    ({**S, "path": ["Image Encoder", "Decoder", "Loss"]}, REFUTED),
    ({**S, "kind": "reaches", "source": "Image Encoder", "target": "Optimizer"}, SUPPORTED),
    ({**S, "kind": "reaches", "source": "Optimizer", "target": "Image Encoder"}, REFUTED),
    ({**S, "kind": "reaches", "source": "Decoder", "target": "Fusion Module"}, SUPPORTED),  # round the loop
    ({**S, "kind": "reaches", "source": "Decoder", "target": "Decoder"}, SUPPORTED),  # the loop itself
    ({**S, "kind": "reaches", "source": "Image Encoder", "target": "Image Encoder"}, REFUTED),
    ({**S, "kind": "via", "source": "Image Encoder", "via": "Loss", "target": "Decoder"}, SUPPORTED),
    ({**S, "kind": "via", "source": "Text Encoder", "via": "Image Encoder", "target": "Decoder"}, REFUTED),
    ({**S, "kind": "only_through", "source": "Image Encoder", "via": "Fusion Module", "target": "Decoder"}, SUPPORTED),
    ({**S, "kind": "only_through", "source": "Image Encoder", "via": "Decoder", "target": "Loss"}, SUPPORTED),
    ({**S, "kind": "only_through", "source": "Text Encoder", "via": "Image Encoder", "target": "Decoder"}, REFUTED),
    ({**S, "kind": "only_through", "source": "Loss", "via": "Decoder", "target": "Image Encoder"}, REFUTED),
    ({**S, "kind": "before", "first": "Image Encoder", "then": "Decoder"}, SUPPORTED),
    ({**S, "kind": "before", "first": "Fusion Module", "then": "Decoder"}, REFUTED),  # both on the loop
    ({**S, "kind": "before", "first": "Decoder", "then": "Image Encoder"}, REFUTED),
    ({**S, "kind": "before", "first": "Image Encoder", "then": "Text Encoder"}, REFUTED),  # unrelated
    # analytical
    ({**A, "kind": "count", "of": "sources", "count": 2}, SUPPORTED),
    ({**A, "kind": "count", "of": "sources", "count": 3}, REFUTED),
    ({**A, "kind": "count", "of": "sinks", "count": 0}, SUPPORTED),
    ({**A, "kind": "count", "of": "nodes", "count": 6}, SUPPORTED),
    ({**A, "kind": "count", "of": "edges", "count": 7}, REFUTED),
    ({**A, "kind": "count", "of": "inputs", "component": "Fusion Module", "count": 3}, SUPPORTED),
    ({**A, "kind": "count", "of": "outputs", "component": "Fusion Module", "count": 2}, REFUTED),
    ({**A, "kind": "cycle"}, SUPPORTED),
    ({**A, "kind": "cycle", "negated": True}, REFUTED),
    ({**A, "kind": "cycle", "component": "Loss"}, SUPPORTED),
    ({**A, "kind": "cycle", "component": "Image Encoder"}, REFUTED),
    ({**A, "kind": "sink", "component": "Decoder"}, REFUTED),
    ({**A, "kind": "source", "component": "Image Encoder"}, SUPPORTED),
    ({**A, "kind": "source", "component": "Fusion Module"}, REFUTED),
    ({**A, "kind": "longest_path", "steps": 4}, SUPPORTED),  # Image Encoder -> ... -> Optimizer
    ({**A, "kind": "longest_path", "steps": 5}, REFUTED),
    ({**A, "kind": "in_group", "component": "Image Encoder", "group": "Encoders"}, SUPPORTED),
    ({**A, "kind": "in_group", "component": "Text Encoder", "group": "Backbone"}, SUPPORTED),  # nested
    ({**A, "kind": "in_group", "component": "Decoder", "group": "Encoders"}, REFUTED),
]


@pytest.mark.parametrize("obj,expected", CASES, ids=[f"{c[0]['type']}-{k}" for k, c in enumerate(CASES)])
def test_every_type_on_a_graph_with_a_loop_and_groups(obj, expected):
    assert verdict(obj) == expected


def test_a_sink_and_the_acyclic_longest_path():
    g = DiagramGraph.from_dict({"id": "dag", "nodes": [{"id": x, "label": x} for x in "ABCDE"],
                                "edges": [{"source": s, "target": t} for s, t in
                                          [("A", "B"), ("B", "C"), ("A", "C"), ("C", "D"), ("E", "D")]]})
    assert verdict({**A, "kind": "sink", "component": "D"}, g) == SUPPORTED
    assert verdict({**A, "kind": "sink", "component": "A"}, g) == REFUTED
    assert verdict({**A, "kind": "longest_path", "steps": 3}, g) == SUPPORTED  # A -> B -> C -> D
    assert verdict({**A, "kind": "cycle"}, g) == REFUTED
    assert verdict({**A, "kind": "count", "of": "sources", "count": 2}, g) == SUPPORTED  # A and E
    assert verdict({**S, "kind": "only_through", "source": "A", "via": "B", "target": "D"}, g) == REFUTED  # A->C


REPEATED = DiagramGraph.from_dict({
    "id": "rep",
    "nodes": [{"id": "x", "label": "Input"}, {"id": "l1", "label": "Linear"}, {"id": "l2", "label": "linear"},
              {"id": "s", "label": "Softmax"}],
    "edges": [{"source": "x", "target": "l1"}, {"source": "l1", "target": "s"}, {"source": "x", "target": "l2"}],
})


def test_a_repeated_label_is_ambiguous_never_guessed():
    r = check_claim(Claim.from_dict({**D, "source": "Linear", "target": "Softmax"}), REPEATED, config=CFG)
    assert r.verdict == NEI
    assert r.grounding[0].status == "ambiguous"
    assert {c[0] for c in r.grounding[0].candidates} == {"l1", "l2"}
    assert "ambiguous" in r.explanation and "l1" in r.explanation and "l2" in r.explanation


def test_a_missing_component_refutes_a_graph_and_is_nei_on_a_parse():
    claim = Claim.from_dict({**D, "source": "Decoder", "target": "Softmax"})
    assert check_claim(claim, REPEATED, config=CFG).verdict == REFUTED  # a reference: the whole truth
    negated = Claim.from_dict({**D, "source": "Decoder", "target": "Softmax", "negated": True})
    assert check_claim(negated, REPEATED, config=CFG).verdict == SUPPORTED
    parsed = DiagramGraph.from_dict({**REPEATED.to_dict(), "meta": {"parser": "sciflow"}})
    r = check_claim(claim, parsed, config=CFG)
    assert r.verdict == NEI
    assert r.explanation.startswith('Not enough information: the parse has no component matching "Decoder"')
    assert check_claim(Claim.from_dict({**D, "source": "Input", "target": "Softmax"}), parsed, config=CFG).verdict \
        == REFUTED


def test_an_unreliable_parse_gives_nei_for_every_claim():
    doc = {**LOOP.to_dict(), "meta": {"parser": "sciflow", "parse_reliability": 0.2}}
    report = check_graph(DiagramGraph.from_dict(doc), parse_claims(
        '{"type": "direct", "source": "Image Encoder", "target": "Fusion Module"}\n'
        '{"type": "analytical", "kind": "cycle"}'), config=CFG)
    assert [r.verdict for r in report.results] == [NEI, NEI]
    assert "parse reliability 0.20 < 0.50" in report.results[0].explanation
    doc["meta"]["parse_reliability"] = 0.9
    report = check_graph(DiagramGraph.from_dict(doc), [r.claim for r in report.results], config=CFG)
    assert [r.verdict for r in report.results] == [SUPPORTED, SUPPORTED]
    strict = load_config(overrides={"matching": {"embedder": "none"}, "claims": {"min_parse_reliability": 0.95}})
    assert check_graph(DiagramGraph.from_dict(doc), [report.results[0].claim], config=strict).results[0].verdict == NEI


def test_the_longest_path_search_gives_up_within_its_budget():
    nodes = [{"id": str(k), "label": f"Node {k}"} for k in range(8)]
    edges = [{"source": str(a), "target": str(b)} for a in range(8) for b in range(8) if a != b]
    g = DiagramGraph.from_dict({"id": "dense", "nodes": nodes, "edges": edges})
    tight = load_config(overrides={"matching": {"embedder": "none"}, "claims": {"longest_path_budget": 50}})
    assert verdict({**A, "kind": "longest_path", "steps": 7}, g, tight) == NEI
    assert verdict({**A, "kind": "longest_path", "steps": 7}, g) == SUPPORTED  # a Hamiltonian path


def test_evidence_names_nodes_relations_and_regions():
    g = DiagramGraph.from_dict({"id": "px", "nodes": [
        {"id": "a", "label": "Encoder", "bbox": [0, 0, 10, 10]},
        {"id": "b", "label": "Decoder", "bbox": [20, 0, 30, 10]}],
        "edges": [{"source": "a", "target": "b"}], "meta": {"parser": "sciflow"}})
    regions = Regions(boxes={"a": (0, 0, 10, 10), "b": (20, 0, 30, 10)},
                      polylines={("a", "b"): (((10.0, 5.0), (20.0, 5.0)),)}, note="from a parse")
    r = check_claim(Claim.from_dict({**D, "source": "Encoder", "target": "Decoder"}), g, config=CFG, regions=regions)
    assert r.verdict == SUPPORTED
    assert r.nodes == ("a", "b") and r.edges == (("a", "b"),)
    assert r.regions == (
        {"kind": "node", "id": "a", "label": "Encoder", "bbox": [0, 0, 10, 10]},
        {"kind": "node", "id": "b", "label": "Decoder", "bbox": [20, 0, 30, 10]},
        {"kind": "edge", "source": "a", "target": "b", "bbox": [0, 0, 30, 10],
         "polylines": [[[10.0, 5.0], [20.0, 5.0]]]},
    )
    assert r.explanation == 'Supported: there is an arrow from "Encoder" to "Decoder".'
    back = check_claim(Claim.from_dict({**D, "source": "Decoder", "target": "Encoder"}), g, config=CFG, regions=regions)
    assert back.verdict == REFUTED and back.absent == (("b", "a"),)
    assert back.regions[-1] == {"kind": "absent_edge", "source": "b", "target": "a", "bbox": [0, 0, 30, 10]}
    d = r.to_dict()
    assert d["relations"] == [["a", "b"]] and d["grounding"][0]["node"] == "a"


def test_a_graph_without_positions_says_it_has_no_pixels():
    report = check_graph(LOOP, [Claim.from_dict({**A, "kind": "cycle"})], config=CFG)
    assert report.regions_note == "the input is a graph without pixel positions: no pixel regions"
    assert report.results[0].regions == ()


def test_regions_of_a_parsed_diagram_map_strokes_to_graph_edges():
    from sciflow.agents.diagram import Diagram, EdgeEvidence, GroundedNode, Stroke

    d = Diagram(image=np.zeros((20, 60, 3), dtype=np.uint8), scale=2.0)
    d.nodes = [GroundedNode("s1", "Encoder", (0, 0, 20, 20), "rect", 1.0, ()),
               GroundedNode("s2", "Decoder", (40, 0, 60, 20), "rect", 1.0, ())]
    d.strokes = [Stroke(7, ((20.0, 10.0), (40.0, 10.0)), (), "solid", 1.0, (20, 10, 40, 10))]
    d.edges = [EdgeEvidence("s1", "s2", 0.9, stroke_id=7)]
    g = DiagramGraph.from_dict({"id": "p", "nodes": [
        {"id": "n1", "label": "Encoder", "bbox": [0, 0, 10, 10]},
        {"id": "n2", "label": "Decoder", "bbox": [20, 0, 30, 10]}],
        "edges": [{"source": "n1", "target": "n2"}]})
    regions = regions_of_diagram(d, g)
    assert regions.polylines == {("n1", "n2"): (((10.0, 5.0), (20.0, 5.0)),)}
    assert regions.boxes == {"n1": (0.0, 0.0, 10.0, 10.0), "n2": (20.0, 0.0, 30.0, 10.0)}


@pytest.mark.parametrize("key,value,message", [
    ("ambiguity_margin", 2.0, "claims.ambiguity_margin = 2.0: must lie in [0, 1]"),
    ("min_parse_reliability", "high", "claims.min_parse_reliability = 'high': expected a number"),
    ("longest_path_budget", 0, "claims.longest_path_budget = 0: must be >= 1"),
])
def test_the_claims_config_table_is_checked(key, value, message):
    from sciflow.config import ConfigError

    with pytest.raises(ConfigError) as err:
        load_config(overrides={"claims": {key: value}})
    assert str(err.value) == message
