"""`sciflow claims`: text and JSON outputs, exit codes, one-line errors; `claims generate`; the critic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciflow.cli import main

GRAPH = {
    "id": "toy",
    "nodes": [{"id": "a", "label": "Image Encoder"}, {"id": "b", "label": "Fusion Module"},
              {"id": "c", "label": "Decoder"}],
    "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}],
}
CLAIMS = [
    {"id": "ok", "type": "direct", "source": "Image Encoder", "target": "Fusion Module"},
    {"id": "rev", "type": "direct", "source": "Decoder", "target": "Fusion Module"},
    {"id": "seq", "type": "sequential", "kind": "reaches", "source": "Image Encoder", "target": "Decoder"},
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    g = tmp_path / "toy.json"
    g.write_text(json.dumps(GRAPH))
    c = tmp_path / "claims.jsonl"
    c.write_text("".join(json.dumps(x) + "\n" for x in CLAIMS))
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[matching]\nembedder = "none"\n')
    return {"graph": g, "claims": c, "config": cfg, "dir": tmp_path}


def test_text_output_for_people(files, capsys):
    rc = main(["claims", str(files["graph"]), "--claims", str(files["claims"]), "--config", str(files["config"])])
    out = capsys.readouterr().out
    assert rc == 1  # one claim is refuted
    assert out.splitlines()[0] == "toy: 3 claims: 2 supported, 1 refuted, 0 not enough information"
    assert "pixels: the input is a graph without pixel positions: no pixel regions" in out
    assert ' 2. [refuted] rev: "Decoder" feeds "Fusion Module"' in out
    assert ('Refuted: there is no arrow from "Decoder" to "Fusion Module": the arrow points from "Fusion Module" '
            'to "Decoder".') in out
    assert 'grounded: "Image Encoder" = a "Image Encoder" (1.00)' in out


def test_json_output_for_programs(files, capsys):
    rc = main(["claims", str(files["graph"]), "--claims", str(files["claims"]), "--format", "json",
               "--config", str(files["config"])])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert doc["counts"] == {"supported": 2, "refuted": 1, "not_enough_info": 0}
    assert [r["verdict"] for r in doc["results"]] == ["supported", "refuted", "supported"]
    seq = doc["results"][2]
    assert seq["nodes"] == ["a", "b", "c"] and seq["relations"] == [["a", "b"], ["b", "c"]]
    assert doc["input"] == "graph" and doc["closed_world"] is True and doc["claims_from"]["backend"] == "file"


def test_text_claims_all_supported_exit_0(files, capsys):
    rc = main(["claims", str(files["graph"]), "--text",
               "The image encoder feeds the fusion module, which feeds the decoder.", "--config", str(files["config"])])
    out = capsys.readouterr().out
    assert rc == 0
    assert "claims from: the claim grammar (version 1)" in out
    assert 'from: "The image encoder feeds the fusion module, which feeds the decoder."' in out


def test_a_bad_claim_line_is_one_line_naming_file_and_line(files, capsys):
    bad = files["dir"] / "bad.jsonl"
    bad.write_text(json.dumps(CLAIMS[0]) + "\n" + '{"type": "direct", "source": "A"\n')
    rc = main(["claims", str(files["graph"]), "--claims", str(bad), "--config", str(files["config"])])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(f"error: {bad} line 2: not valid JSON")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("argv,message", [
    (["--text", "The decoder is rather elegant."], 'error: cannot read sentence 1 ("The decoder is rather elegant.")'),
    ([], "error: give --claims FILE.jsonl or --text SENTENCES (one of them)"),
    (["--claims", "CLAIMS", "--judge"], "error: --judge reads --text"),
])
def test_expected_errors_are_one_line_rc_2(files, capsys, argv, message):
    argv = [str(files["claims"]) if a == "CLAIMS" else a for a in argv]
    rc = main(["claims", str(files["graph"]), *argv, "--config", str(files["config"])])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(message) and len(err.strip().splitlines()) == 1


def test_a_missing_figure_is_one_line(files, capsys):
    rc = main(["claims", str(files["dir"] / "nope.png"), "--claims", str(files["claims"]),
               "--config", str(files["config"])])
    err = capsys.readouterr().err
    assert rc == 2 and "nope.png" in err and "Traceback" not in err


def test_generate_writes_one_balanced_file_per_reference(files, capsys, tmp_path):
    refs = tmp_path / "refs"
    refs.mkdir()
    for k in range(2):
        doc = dict(GRAPH, id=f"toy{k}", nodes=GRAPH["nodes"] + [{"id": "d", "label": f"Loss {k}"}],
                   edges=GRAPH["edges"] + [{"source": "a", "target": "d"}, {"source": "c", "target": "d"}])
        (refs / f"toy{k}.json").write_text(json.dumps(doc))
    out = tmp_path / "claims"
    rc = main(["claims", "generate", str(refs), "-o", str(out), "--seed", "1"])
    assert rc == 0
    assert sorted(p.name for p in out.iterdir()) == ["toy0.jsonl", "toy1.jsonl"]
    first = (out / "toy0.jsonl").read_text()
    assert "wrote 2 claim files" in capsys.readouterr().out
    rc = main(["claims", "generate", str(refs), "-o", str(out), "--seed", "1"])
    assert rc == 0 and (out / "toy0.jsonl").read_text() == first
    rows = [json.loads(x) for x in first.splitlines()]
    for t in {r["type"] for r in rows}:
        labels = [r["label"] for r in rows if r["type"] == t]
        assert labels.count("supported") == labels.count("refuted")


def test_generate_needs_an_out_folder(files, capsys):
    rc = main(["claims", "generate", str(files["graph"])])
    assert rc == 2 and "needs -o/--out" in capsys.readouterr().err


def test_the_critique_lists_the_claims_a_diagram_fails():
    from sciflow.config import load_config
    from sciflow.critic import format_critique
    from sciflow.critic.claims import critique_with_claims
    from sciflow.format.graph import DiagramGraph

    ref = DiagramGraph.from_dict(GRAPH)
    pred = DiagramGraph.from_dict({**GRAPH, "edges": [{"source": "a", "target": "b"}, {"source": "c", "target": "b"}]})
    cfg = load_config(overrides={"matching": {"embedder": "none"}})
    c = critique_with_claims(pred, ref, CLAIMS, config=cfg)
    assert [(x["id"], x["verdict"]) for x in c.failed_claims] == [("seq", "refuted")]
    assert c.failed_claims[0]["explanation"] == 'Refuted: no directed path leads from "Image Encoder" to "Decoder".'
    text = format_critique(c, "text")
    assert "Claims the diagram fails (1 of 3):" in text
    assert json.loads(format_critique(c, "json"))["failed_claims"][0]["id"] == "seq"
    clean = critique_with_claims(ref, ref, CLAIMS[:1], config=cfg)
    assert clean.passed and clean.failed_claims == ()


def test_an_image_is_parsed_and_the_evidence_has_pixels(files, capsys):
    from sciflow.bench.drawing import render_graph
    from sciflow.format.graph import DiagramGraph

    png = render_graph(DiagramGraph.from_dict(GRAPH), files["dir"] / "toy.png")
    rc = main(["claims", str(png), "--claims", str(files["claims"]), "--format", "json",
               "--config", str(files["config"])])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1 and doc["input"] == "image" and doc["closed_world"] is False
    assert [r["verdict"] for r in doc["results"]] == ["supported", "refuted", "supported"]
    ok = doc["results"][0]
    kinds = [reg["kind"] for reg in ok["regions"]]
    assert kinds == ["node", "node", "edge"]
    edge = ok["regions"][2]
    assert edge["polylines"] and all(len(p) == 2 for line in edge["polylines"] for p in line)
    x0, y0, x1, y1 = ok["regions"][0]["bbox"]
    assert 0 <= x0 < x1 and 0 <= y0 < y1
    assert doc["regions_note"] == "node boxes and arrow polylines of the parse, in input-image pixels"


def test_the_critique_of_files_lists_failed_claims(files):
    from sciflow.config import load_config
    from sciflow.critic.claims import critique_with_claims

    pred = files["dir"] / "pred.json"
    pred.write_text(json.dumps({**GRAPH, "edges": [{"source": "a", "target": "b"}]}))
    c = critique_with_claims(pred, files["graph"], files["claims"],
                             config=load_config(overrides={"matching": {"embedder": "none"}}))
    assert not c.passed
    assert [(x["id"], x["verdict"]) for x in c.failed_claims] == [("rev", "refuted"), ("seq", "refuted")]
