"""Parallel edges are one edge however a DiagramGraph is built (in code, from_dict, networkx)."""

from __future__ import annotations

import warnings
from dataclasses import replace

from conftest import STRING_ONLY

from sciflow.format.graph import DiagramGraph, Edge, GraphFormatWarning, Node, merge_parallel_edges
from sciflow.metrics.graph_level import graph_level

NODES = (Node("a", "Image Encoder"), Node("b", "Decoder"), Node("c", "Loss"))


def from_dict(edges: list[dict]) -> DiagramGraph:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphFormatWarning)
        return DiagramGraph.from_dict({
            "id": "g", "nodes": [{"id": n.id, "label": n.label} for n in NODES], "edges": edges,
        })


def test_parallel_edges_built_in_code_are_merged_in_order():
    g = DiagramGraph(id="g", nodes=NODES, edges=(
        Edge("a", "b"), Edge("b", "c", style="dashed"), Edge("a", "b", confidence=0.3), Edge("b", "a"),
        Edge("b", "c", "loss"),
    ))
    # the first of each ordered pair stays where it was; b -> a is another pair
    assert [(e.source, e.target) for e in g.edges] == [("a", "b"), ("b", "c"), ("b", "a")]
    assert g.edges[0] == Edge("a", "b")
    # the first edge had no label: it takes the first non-empty label of its parallels
    assert g.edges[1] == Edge("b", "c", "loss", "dashed")


def test_first_label_wins():
    g = DiagramGraph(id="g", nodes=NODES, edges=(Edge("a", "b", ""), Edge("a", "b", "x"), Edge("a", "b", "y")))
    assert g.edges == (Edge("a", "b", "x"),)
    g = DiagramGraph(id="g", nodes=NODES, edges=(Edge("a", "b", "w"), Edge("a", "b", "x")))
    assert g.edges == (Edge("a", "b", "w"),)


def test_code_and_from_dict_agree():
    edges = [Edge("a", "b"), Edge("b", "c"), Edge("a", "b", "feeds"), Edge("c", "a", style="dashed"),
             Edge("b", "c", "second")]
    code = DiagramGraph(id="g", nodes=NODES, edges=tuple(edges))
    doc = from_dict([{k: v for k, v in e.__dict__.items() if v is not None} for e in edges])
    assert code == doc
    assert DiagramGraph.from_dict(code.to_dict()) == code
    assert DiagramGraph.from_networkx(code.to_networkx()) == code


def test_replace_and_no_duplicates_keep_the_edges():
    edges = (Edge("a", "b"), Edge("b", "a"), Edge("b", "c"))
    g = DiagramGraph(id="g", nodes=NODES, edges=edges)
    assert g.edges is edges  # nothing to merge: untouched
    assert merge_parallel_edges(edges) is None
    g2 = replace(g, edges=g.edges + (Edge("a", "b", "again"),))
    assert g2.edges == (Edge("a", "b", "again"), Edge("b", "a"), Edge("b", "c"))


def test_dangling_edges_are_kept_in_code():
    # graphs built in code may carry edges to ids that are not nodes (from_dict rejects them)
    g = DiagramGraph(id="g", nodes=NODES[:1], edges=(Edge("a", "z"), Edge("a", "z")))
    assert g.edges == (Edge("a", "z"),)


def test_graph_metric_sees_one_edge():
    ref = DiagramGraph(id="r", nodes=NODES, edges=(Edge("a", "b"), Edge("b", "c")))
    pred = DiagramGraph(id="p", nodes=NODES, edges=(Edge("a", "b"), Edge("a", "b"), Edge("b", "c")))
    r = graph_level(pred, ref, matching=STRING_ONLY)
    assert len(pred.edges) == 2
    assert r.edge_precision == 1.0 and r.edge_recall == 1.0 and r.score == 1.0
    # a doubled correct edge never dilutes a wrong one either
    half = DiagramGraph(id="p", nodes=NODES, edges=(Edge("a", "b"), Edge("a", "b"), Edge("c", "a")))
    assert graph_level(half, ref, matching=STRING_ONLY).edge_precision == 0.5
