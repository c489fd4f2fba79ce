"""Renderings: diff colours on a hand-made case, SVG/PNG files, determinism, overlays."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PIL import Image

from sciflow.config import MatchingConfig
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.graph_level import graph_level
from sciflow.views import viz

STRING_ONLY = MatchingConfig(embedder="none")
GREEN, RED, ORANGE, PURPLE = (viz.COLORS[k][0] for k in ("matched", "missing", "hallucinated", "reversed"))


def g(gid, nodes, edges, **extra):
    return DiagramGraph.from_dict({
        "id": gid,
        "nodes": [{"id": i, "label": lab, **({"bbox": b} if b else {})} for i, lab, *rest in nodes
                  for b in [rest[0] if rest else None]],
        "edges": [{"source": s, "target": t} for s, t in edges],
        **extra,
    })


# reference: Input -> Encoder -> Bottleneck -> Decoder -> Output, plus Encoder -> Output
REF = g("ref", [("r1", "Input"), ("r2", "Encoder"), ("r3", "Bottleneck"), ("r4", "Decoder"), ("r5", "Output"),
                ("r6", "Loss")],
        [("r1", "r2"), ("r2", "r3"), ("r3", "r4"), ("r4", "r5"), ("r5", "r6")])
# prediction: Bottleneck skipped (Encoder -> Decoder), Decoder <- Output reversed, a hallucinated "Dropout"
# feeding Loss, Input -> Loss unsupported, "Encodr" misspelt.
PRED = g("pred", [("a", "Input"), ("b", "Encodr"), ("d", "Decoder"), ("e", "Output"), ("x", "Dropout"),
                  ("l", "Loss")],
         [("a", "b"), ("b", "d"), ("e", "d"), ("x", "l"), ("a", "l")])


@pytest.fixture(scope="module")
def result():
    return graph_level(PRED, REF, STRING_ONLY)


def node_line(src: str, label_start: str) -> str:
    lines = [ln for ln in src.splitlines() if re.match(rf'\s*[rp]\d+ \[label="?{re.escape(label_start)}', ln)]
    assert len(lines) == 1, (label_start, lines)
    return lines[0]


def edge_line(src: str, dot, a: str, b: str) -> str:
    names = {}
    for ln in src.splitlines():
        m = re.match(r'\s*([rp]\d+) \[label=(?:"((?:[^"\\]|\\.)*)"|(\w+))', ln)
        if m:
            names[m.group(2) or m.group(3)] = m.group(1)
    lines = [ln for ln in src.splitlines() if re.match(rf"\s*{names[a]} -> {names[b]} ", ln)]
    assert lines, (a, b)
    return "\n".join(lines)


def test_the_hand_made_case_scores_as_expected(result):
    d = result.diagnostics()
    assert [m["label"] for m in d["missing_nodes"]] == ["Bottleneck"]
    assert d["hallucinated_nodes"] == ["x"]
    assert [(e["source_label"], e["target_label"]) for e in d["reversed_edges"]] == [("Output", "Decoder")]
    assert [(e["source_label"], e["target_label"]) for e in d["excused_edges"]] == [("Encodr", "Decoder")]
    assert [(e["source_label"], e["target_label"]) for e in d["unsupported_edges"]] == [("Input", "Loss")]
    assert [(e["source_label"], e["target_label"]) for e in d["unmatched_endpoint_edges"]] == [("Dropout", "Loss")]


def test_diff_colours(result):
    dot = viz.diff_dot(PRED, REF, result)
    src = dot.source
    # nodes
    assert f'color="{GREEN}"' in node_line(src, "Input")
    enc = node_line(src, "Encoder")
    assert f'color="{GREEN}"' in enc and r"drawn: Encodr" in enc  # the predicted label when it differs
    bott = node_line(src, "Bottleneck")
    assert f'color="{RED}"' in bott and "dashed" in bott
    drop = node_line(src, "Dropout")
    assert f'color="{ORANGE}"' in drop and drop.lstrip().startswith("p")
    # edges
    assert f'color="{GREEN}"' in edge_line(src, dot, "Input", "Encoder\\ndrawn: Encodr")
    for a, b in (("Encoder\\ndrawn: Encodr", "Bottleneck\\n(missing)"), ("Bottleneck\\n(missing)", "Decoder")):
        e = edge_line(src, dot, a, b)
        assert f'color="{RED}"' in e and "dashed" in e and "label=skipped" in e  # skipped: not recovered
    rev = edge_line(src, dot, "Output", "Decoder")  # drawn as predicted: Output -> Decoder
    assert f'color="{PURPLE}"' in rev and "reversed" in rev
    missing = edge_line(src, dot, "Decoder", "Output")  # the reference edge it failed to recover
    assert f'color="{RED}"' in missing and "dashed" in missing
    assert f'color="{ORANGE}"' in edge_line(src, dot, "Input", "Loss")
    assert f'color="{ORANGE}"' in edge_line(src, dot, "Dropout\\n(hallucinated)", "Loss")
    assert "legend" in src


def test_diff_from_stored_diagnostics_equals_diff_from_result(result):
    stored = {"graph_level": result.to_dict()}  # as a results row holds it
    assert viz.diff_dot(PRED, REF, stored).source == viz.diff_dot(PRED, REF, result).source
    # without the predicted graph the picture is still drawn (hallucinated nodes named from the edges)
    src = viz.diff_dot(None, REF, stored).source
    assert "Dropout" in src and PURPLE in src


def test_dot_source_is_deterministic(result):
    a = viz.diff_dot(PRED, REF, result).source
    b = viz.diff_dot(PRED, REF, graph_level(PRED, REF, STRING_ONLY)).source
    assert a == b
    assert viz.to_dot(REF).source == viz.to_dot(REF).source


def test_odd_labels_and_ids_are_escaped():
    odd = g("odd", [("a:1", '<b>"quoted"</b>'), ("b\\2", "back\\slash {x}")], [("a:1", "b\\2")])
    src = viz.to_dot(odd).source
    assert '"<b>\\"quoted\\"</b>"' in src  # a quoted string, never an HTML label
    assert "back\\\\slash" in src
    svg = viz.to_dot(odd).pipe(format="svg").decode()
    ET.fromstring(svg)  # well-formed
    assert "&lt;b&gt;" in svg and "back\\slash" in svg


def test_groups_become_clusters_and_layout_is_honoured():
    gg = DiagramGraph.from_dict({
        "id": "grp", "nodes": [{"id": "a", "label": "A", "group": "g1"}, {"id": "b", "label": "B", "group": "g2"},
                               {"id": "c", "label": "C"}],
        "edges": [{"source": "a", "target": "b", "label": "feat", "style": "dashed"}],
        "groups": [{"id": "g1", "label": "Encoder"}, {"id": "g2", "label": "Inner", "parent": "g1"}],
        "prompt": {"text": "t", "layout": "top-to-bottom"},
    })
    dot = viz.to_dot(gg)
    src = dot.source
    assert "subgraph cluster_0" in src and "subgraph cluster_1" in src
    assert src.index("cluster_0") < src.index("cluster_1") < src.index("n1 [")  # nested: g2 inside g1
    assert dot.graph_attr["rankdir"] == "TB"
    assert viz.to_dot(gg, rankdir="LR").graph_attr["rankdir"] == "LR"
    assert "style=dashed" in src and "label=feat" in src


def test_render_graph_writes_svg_and_png(tmp_path: Path, result):
    svg = viz.render_graph(REF, tmp_path / "ref.svg")
    root = ET.fromstring(svg.read_bytes())
    assert root.tag.endswith("svg")
    assert "Bottleneck" in svg.read_text()
    png = viz.render_graph(PRED, tmp_path / "sub" / "diff.png", diff=REF, result=result)
    with Image.open(png) as im:
        assert im.format == "PNG" and im.size[0] > 200 and im.size[1] > 100
    # computing the comparison itself (string-only matching keeps this fast)
    svg2 = viz.render_graph(PRED, tmp_path / "diff.svg", diff=REF, matching=STRING_ONLY)
    assert PURPLE in svg2.read_text()
    with pytest.raises(ValueError, match=r"\.svg, \.png or \.pdf"):
        viz.render_graph(REF, tmp_path / "ref.gif")
    # PDF too, with or without the legend (issue 20)
    pdf = viz.render_graph(PRED, tmp_path / "diff.pdf", diff=REF, result=result)
    assert pdf.read_bytes().startswith(b"%PDF")
    bare = viz.render_graph(PRED, tmp_path / "bare.svg", diff=REF, result=result, legend=False)
    assert "legend" in svg2.read_text() and "legend" not in bare.read_text()


def test_overlay_keeps_the_image_size(tmp_path: Path, result):
    boxed = g("boxed", [("a", "Input", [10, 10, 90, 50]), ("b", "Encodr", [150, 10, 230, 50]),
                        ("c", "Decoder", [150, 100, 230, 140]), ("d", "No box")],
              [("a", "b"), ("b", "c"), ("c", "d")])
    base = Image.new("RGB", (320, 180), "white")
    out = viz.overlay(base, boxed)
    assert isinstance(out, Image.Image) and out.size == base.size and out.mode == "RGB"
    assert out.getextrema() != base.getextrema()  # something was drawn
    # from a file, coloured by diagnostics
    path = tmp_path / "img.png"
    base.save(path)
    res = graph_level(boxed, REF, STRING_ONLY)
    out2 = viz.overlay(path, boxed, diagnostics=res)
    assert out2.size == (320, 180)
    green = tuple(int(viz.COLORS["matched"][0][i:i + 2], 16) for i in (1, 3, 5))
    assert green in {c for _, c in out2.getcolors(maxcolors=1 << 20)}


def test_diagnostics_table(result):
    rows = viz.diagnostics_table(result, pred=PRED)
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else list(rows)
    kinds = [r["kind"] for r in records]
    for k in ("matched node", "missing node", "hallucinated node", "missing edge", "reversed edge",
              "unsupported edge", "unmatched-endpoint edge", "excused skip"):
        assert k in kinds
    assert {"kind": "hallucinated node", "item": "Dropout", "detail": "in the diagram, not in the reference"} in records
    errors_only = viz.diagnostics_rows(result.diagnostics(), matched=False)
    assert "matched node" not in [r["kind"] for r in errors_only]
    assert "<table" in errors_only._repr_html_()
    row = {"status": "missing_prediction", "error": "no prediction for this reference", "graph_level": None}
    first = viz.diagnostics_table(row)
    first = first.to_dict("records") if hasattr(first, "to_dict") else first
    assert first[0]["kind"] == "error"


def test_notebook_helpers_display_inline(result):
    for obj in (viz.show_graph(REF), viz.show_diff(PRED, REF, result), viz.show_diff(PRED, REF, matching=STRING_ONLY)):
        bundle = obj._repr_mimebundle_()
        assert "image/svg+xml" in bundle


def test_resolve_path_and_item_graphs(tmp_path: Path):
    (tmp_path / "data").mkdir()
    REF.save(tmp_path / "data" / "ref.json")
    PRED.save(tmp_path / "data" / "pred.json")
    run = tmp_path / "runs" / "gen"
    run.mkdir(parents=True)
    row = {"prediction": "data/pred.json", "reference": "data/ref.json"}  # relative to an ancestor of the run
    pred, ref = viz.item_graphs(run, row)
    assert pred == PRED and ref == REF
    assert viz.resolve_path(run, "data/nothing.json") is None
    (run / "parsed").mkdir()
    PRED.save(run / "parsed" / "x.json")
    pred, _ = viz.item_graphs(run, {"prediction": "data/img.png", "reference": "data/ref.json",
                                    "parsed_graph": "parsed/x.json"})
    assert pred == PRED
