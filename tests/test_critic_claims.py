"""`sciflow critique ... --claims/--text`: the critique lists the claims the diagram fails, in
text and JSON, with exact verdicts on hand-made graphs; the judgement is the plain critique's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciflow.cli import main
from sciflow.config import load_config
from sciflow.critic import critique_input
from sciflow.critic.claims import critique_with_claims

# the reference: Encoder -> Fusion -> Decoder, two "Linear" boxes into Fusion;
# the diagram draws Fusion <- Decoder (reversed)
REF = {"id": "toy", "nodes": [{"id": "e", "label": "Encoder"}, {"id": "f", "label": "Fusion"},
                              {"id": "d", "label": "Decoder"}, {"id": "l1", "label": "Linear"},
                              {"id": "l2", "label": "Linear"}],
       "edges": [{"source": "e", "target": "f"}, {"source": "f", "target": "d"}, {"source": "l1", "target": "f"},
                 {"source": "l2", "target": "f"}]}
PRED = {"id": "toy", "nodes": [{"id": "a", "label": "Encoder"}, {"id": "b", "label": "Fusion"},
                               {"id": "c", "label": "Decoder"}, {"id": "x", "label": "Linear"},
                               {"id": "y", "label": "Linear"}],
        "edges": [{"source": "a", "target": "b"}, {"source": "c", "target": "b"}, {"source": "x", "target": "b"},
                  {"source": "y", "target": "b"}]}
CLAIMS = [
    {"id": "c1", "type": "direct", "source": "Encoder", "target": "Fusion"},
    {"id": "c2", "type": "direct", "source": "Linear", "target": "Fusion"},
    {"id": "c3", "type": "direct", "source": "Fusion", "target": "Decoder"},
    {"id": "c4", "type": "direct", "source": "Encoder", "target": "Attention"},
]
REVERSED = 'Refuted: there is no arrow from "Fusion" to "Decoder": the arrow points from "Decoder" to "Fusion".'
ABSENT = 'Refuted: the diagram has no component "Attention".'
AMBIGUOUS = 'Not enough information: "Linear" is ambiguous: it fits "Linear" (x), "Linear" (y) equally well.'


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {"ref": tmp_path / "ref.json", "pred": tmp_path / "pred.json", "claims": tmp_path / "claims.jsonl",
           "config": tmp_path / "cfg.toml"}
    out["ref"].write_text(json.dumps(REF))
    out["pred"].write_text(json.dumps(PRED))
    out["claims"].write_text("".join(json.dumps(c) + "\n" for c in CLAIMS))
    out["config"].write_text('[matching]\nembedder = "none"\n')
    return out


def run(files: dict[str, Path], *extra: str) -> list[str]:
    return ["critique", str(files["pred"]), "--ref", str(files["ref"]), "--config", str(files["config"]), *extra]


def test_text_critique_lists_the_failed_claims_refuted_first(files, capsys):
    rc = main(run(files, "--claims", str(files["claims"])))
    lines = capsys.readouterr().out.splitlines()
    assert rc == 1  # the judgement: the reversed arrow fails the critique, not the claims
    assert lines[0] == "toy: FAIL (graph score 0.850)"
    k = lines.index("Claims the diagram fails (3 of 4):")
    assert lines[k + 1:] == [f'  - [refuted] "Fusion" feeds "Decoder": {REVERSED}',
                             f'  - [refuted] "Encoder" feeds "Attention": {ABSENT}',
                             f'  - [not enough info] "Linear" feeds "Fusion": {AMBIGUOUS}']


def test_json_critique_lists_the_failed_claims(files, capsys):
    rc = main(run(files, "--claims", str(files["claims"]), "--format", "json"))
    d = json.loads(capsys.readouterr().out)
    assert rc == 1 and d["passed"] is False and d["claims_checked"] == 4
    assert [(x["id"], x["verdict"], x["explanation"]) for x in d["failed_claims"]] == [
        ("c3", "refuted", REVERSED), ("c4", "refuted", ABSENT), ("c2", "not_enough_info", AMBIGUOUS)]
    assert d["failed_claims"][0]["claim"] == '"Fusion" feeds "Decoder"'


def test_sentences_that_all_hold_are_said_to_hold(files, capsys):
    rc = main(run(files, "--text", "The encoder feeds fusion. Decoder feeds fusion."))
    out = capsys.readouterr().out
    assert rc == 1 and out.rstrip().endswith("Claims: all 2 supported.")
    main(run(files, "--text", "The encoder feeds fusion.", "--format", "json"))
    d = json.loads(capsys.readouterr().out)
    assert (d["claims_checked"], d["failed_claims"]) == (1, [])


def test_the_judgement_is_the_plain_critiques(files, capsys):
    cfg = load_config(files["config"])
    plain = critique_input(files["pred"], files["ref"], config=cfg)
    with_claims = critique_with_claims(files["pred"], files["ref"], files["claims"], config=cfg)
    assert (with_claims.passed, with_claims.summary, with_claims.score) == (plain.passed, plain.summary, plain.score)
    assert with_claims.findings == plain.findings
    main(run(files))  # without claims: no claim lines, no claim fields
    assert "Claims" not in capsys.readouterr().out
    main(run(files, "--format", "json"))
    assert "claims_checked" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("extra, message", [
    (["--text", "Fusion is great."], 'cannot read sentence 1 ("Fusion is great.")'),
    (["--text", "Encoder feeds Fusion.", "--claims", "CLAIMS"], "not both"),
    (["--judge"], "--judge reads --text"),
])
def test_bad_claims_are_one_line_errors(files, capsys, extra, message):
    extra = [str(files["claims"]) if x == "CLAIMS" else x for x in extra]
    rc = main(run(files, *extra))
    cap = capsys.readouterr()
    assert rc == 2 and message in cap.err and cap.out == ""
