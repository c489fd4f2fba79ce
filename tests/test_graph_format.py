"""Canonical graph format: validation messages, round trips, SciFlow-Bench layout."""

from __future__ import annotations

import json
import warnings

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sciflow.format.convert import convert_path
from sciflow.format.graph import (
    DiagramGraph,
    GraphFormatError,
    GraphFormatWarning,
    from_sciflow_bench,
    load_graph,
    schema,
)

GOOD = {
    "id": "toy",
    "nodes": [
        {"id": "a", "label": "Image Encoder", "kind": "box", "bbox": [10, 20, 110, 60], "group": "g1",
         "confidence": 0.9},
        {"id": "b", "label": "Decoder"},
    ],
    "edges": [{"source": "a", "target": "b", "label": "features", "style": "dashed", "confidence": 0.8}],
    "groups": [{"id": "g1", "label": "Backbone"}],
    "prompt": {"text": "Draw it.", "components": ["Image Encoder", "Decoder"],
               "relations": [["Image Encoder", "Decoder"]], "layout": "left-to-right"},
    "meta": {"area": "computer vision", "difficulty": "easy", "origin": "test"},
}


def write(tmp_path, data, name="g.json"):
    p = tmp_path / name
    p.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return p


def problems_of(tmp_path, data):
    with pytest.raises(GraphFormatError) as ei:
        DiagramGraph.load(write(tmp_path, data))
    return ei.value


def test_good_file_loads_and_round_trips(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = DiagramGraph.load(write(tmp_path, GOOD))
    assert g.node("a").bbox == (10.0, 20.0, 110.0, 60.0)
    out = tmp_path / "out.json"
    g.save(out)
    assert DiagramGraph.load(out) == g
    assert json.loads(out.read_text())["format"] == "sciflow.graph/v1"


def test_networkx_round_trip_is_lossless():
    g = DiagramGraph.from_dict(GOOD)
    nxg = g.to_networkx()
    assert isinstance(nxg, nx.DiGraph)
    assert nxg.nodes["a"]["label"] == "Image Encoder" and nxg.nodes["a"]["bbox"] == [10, 20, 110, 60]
    assert nxg.edges["a", "b"]["style"] == "dashed"
    assert nxg.graph["meta"]["area"] == "computer vision"
    assert DiagramGraph.from_networkx(nxg) == g


def test_error_names_file_path_and_reason(tmp_path):
    bad = json.loads(json.dumps(GOOD))
    bad["nodes"].append({"id": "a", "label": "Dup"})
    bad["nodes"][1]["label"] = 42
    bad["nodes"][0]["bbox"] = [10, 20, 5, 60]
    bad["edges"].append({"source": "b", "target": "ghost"})
    err = problems_of(tmp_path, bad)
    msg = str(err)
    assert "g.json" in msg
    paths = dict(err.problems)
    assert "duplicate node id 'a'" in paths["$.nodes[2].id"]
    assert "expected string" in paths["$.nodes[1].label"]
    assert "malformed bbox" in paths["$.nodes[0].bbox"]
    assert "unknown node 'ghost'" in paths["$.edges[1].target"]


@pytest.mark.parametrize(
    "bbox", [[1, 2, 3], [0, 0, "x", 1], [5, 5, 1, 1], "0,0,1,1"],
)
def test_malformed_bboxes_are_errors(tmp_path, bbox):
    bad = json.loads(json.dumps(GOOD))
    bad["nodes"][0]["bbox"] = bbox
    err = problems_of(tmp_path, bad)
    assert any(p.startswith("$.nodes[0].bbox") for p, _ in err.problems)


def test_unknown_keys_warn_but_load(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["colour"] = "blue"
    data["nodes"][0]["shape_score"] = 3
    with pytest.warns(GraphFormatWarning) as rec:
        g = DiagramGraph.load(write(tmp_path, data))
    msgs = [str(w.message) for w in rec]
    assert any("$: unknown key 'colour'" in m for m in msgs)
    assert any("$.nodes[0]: unknown key 'shape_score'" in m for m in msgs)
    assert g.id == "toy"


def test_duplicate_edges_merge_with_warning(tmp_path):
    data = json.loads(json.dumps(GOOD))
    data["edges"].append({"source": "a", "target": "b"})
    with pytest.warns(GraphFormatWarning, match="duplicate edge"):
        g = DiagramGraph.load(write(tmp_path, data))
    assert len(g.edges) == 1


@pytest.mark.parametrize(
    "text, reason",
    [("{not json", "not valid JSON"), ("", "not valid JSON"), ('{"id": "x"}', "'nodes' is required")],
)
def test_unreadable_documents(tmp_path, text, reason):
    with pytest.raises(GraphFormatError, match=reason):
        DiagramGraph.load(write(tmp_path, text))


def test_missing_file_and_unknown_group(tmp_path):
    with pytest.raises(GraphFormatError, match="cannot read file"):
        DiagramGraph.load(tmp_path / "nope.json")
    data = json.loads(json.dumps(GOOD))
    data["nodes"][1]["group"] = "nowhere"
    err = problems_of(tmp_path, data)
    assert dict(err.problems)["$.nodes[1].group"] == "unknown group 'nowhere'"


def test_schema_is_shipped_and_documents_every_key():
    s = schema()
    assert set(s["properties"]) >= {"id", "nodes", "edges", "groups", "prompt", "meta"}
    assert set(s["$defs"]["node"]["properties"]) == {"id", "label", "kind", "bbox", "group", "confidence"}
    assert set(s["$defs"]["edge"]["properties"]) == {"source", "target", "label", "style", "confidence"}


labels = st.text(min_size=0, max_size=12)


@settings(max_examples=100, deadline=None)
@given(st.lists(labels, max_size=6), st.data())
def test_round_trips_hold_for_any_graph(node_labels, data):
    ids = [f"n{i}" for i in range(len(node_labels))]
    pairs = [(a, b) for a in ids for b in ids]
    edges = data.draw(st.lists(st.sampled_from(pairs), unique=True, max_size=8)) if pairs else []
    doc = {
        "id": "p",
        "nodes": [{"id": i, "label": lab} for i, lab in zip(ids, node_labels, strict=True)],
        "edges": [{"source": a, "target": b} for a, b in edges],
    }
    g = DiagramGraph.from_dict(doc)
    assert DiagramGraph.from_networkx(g.to_networkx()) == g
    assert DiagramGraph.from_dict(json.loads(json.dumps(g.to_dict()))) == g


CANVAS = {
    "nodes": [
        {"node_id": 1, "desc": "Image Encoder", "node_type": "module", "bbox": [0, 0, 50, 20]},
        {"node_id": 2, "desc": "Mask Decoder", "node_type": "module", "bbox": {"x": 60, "y": 0, "w": 40, "h": 20}},
    ],
    "edges": [{"from": 1, "to": 2, "label": "embedding"}],
}


def test_sciflow_bench_layout_is_read(tmp_path):
    paper = tmp_path / "2304.02643"
    paper.mkdir()
    (paper / "canvas_full.json").write_text(json.dumps(CANVAS))
    (paper / "prompt.json").write_text(json.dumps({"prompt": "The image encoder feeds the mask decoder."}))
    g = load_graph(paper / "canvas_full.json")
    assert g.id == "2304.02643"
    assert [(n.id, n.label, n.kind) for n in g.nodes] == [
        ("1", "Image Encoder", "module"),
        ("2", "Mask Decoder", "module"),
    ]
    assert g.node("2").bbox == (60.0, 0.0, 100.0, 20.0)
    assert [(e.source, e.target, e.label) for e in g.edges] == [("1", "2", "embedding")]
    assert g.prompt is not None and g.prompt.text.startswith("The image encoder")


def test_sciflow_bench_errors_name_the_file():
    with pytest.raises(GraphFormatError, match="expected an object with 'from' and 'to'"):
        from_sciflow_bench({"nodes": [{"node_id": 1, "desc": "A"}], "edges": [{"src": 1}]}, "x", source="c.json")
    with pytest.raises(GraphFormatError, match="unknown node '9'"):
        from_sciflow_bench({"nodes": [{"node_id": 1, "desc": "A"}], "edges": [{"from": 1, "to": 9}]}, "x")


def test_convert_writes_ours_and_reports_bad_folders(tmp_path):
    root = tmp_path / "bench"
    for name, canvas in (("p1", CANVAS), ("p2", {"nodes": [{"node_id": 1, "desc": 5}], "edges": []})):
        (root / name).mkdir(parents=True)
        (root / name / "canvas_full.json").write_text(json.dumps(canvas))
    (root / "p3").mkdir()
    out = tmp_path / "out"
    results = {r.item_id: r for r in convert_path(root, out)}
    assert results["p1"].error is None
    assert DiagramGraph.load(out / "p1.json").labels == ["Image Encoder", "Mask Decoder"]
    assert "expected string" in results["p2"].error
    assert "no canvas_full.json" in results["p3"].error
