"""Claims in the HTML report: `sciflow claims ... -o RESULTS/claims/` writes the claims result
file, and `build_report` shows, per item, every claim checked with verdict and explanation,
failed ones first."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

from sciflow.cli import main
from sciflow.config import load_config
from sciflow.runs.scoring import run_scoring
from sciflow.views.report import build_report
from sciflow.views.report.verdicts import load_claims_results

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
# examples/predictions/careful-gen/vit.json: Image -> Patch Embedding -> "Transformer encoder (ViT)"
# <- Position Embedding; -> MLP Head -> Class Label
CLAIMS = [
    {"id": "edge", "type": "direct", "source": "Image", "target": "Patch Embedding"},
    {"id": "back", "type": "direct", "source": "Class Label", "target": "MLP Head"},
    {"id": "gone", "type": "direct", "source": "MLP Head", "target": "Softmax"},
    {"id": "sinks", "type": "analytical", "kind": "count", "of": "sinks", "count": 1},
]


def test_claims_result_files_show_in_the_report(tmp_path: Path, capsys):
    cfg_file = tmp_path / "cfg.toml"
    cfg_file.write_text('[matching]\nembedder = "none"\n')
    run = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_scoring(EXAMPLES / "predictions" / "careful-gen", EXAMPLES / "references", run, load_config(cfg_file))
    claims = tmp_path / "vit.jsonl"
    claims.write_text("".join(json.dumps(c) + "\n" for c in CLAIMS))
    pred = EXAMPLES / "predictions" / "careful-gen" / "vit.json"
    rc = main(["claims", str(pred), "--claims", str(claims), "--config", str(cfg_file), "--format", "json",
               "-o", str(run / "claims")])
    cap = capsys.readouterr()
    assert rc == 1 and f"wrote {run / 'claims' / 'vit.json'}" in cap.err
    written = json.loads((run / "claims" / "vit.json").read_text("utf-8"))
    assert written == json.loads(cap.out)  # the file is the JSON output
    assert [(r["claim"]["id"], r["verdict"]) for r in written["results"]] == [
        ("edge", "supported"), ("back", "refuted"), ("gone", "refuted"), ("sinks", "supported")]
    assert written["results"][1]["description"] == '"Class Label" feeds "MLP Head"'
    assert list(load_claims_results(run)) == ["vit"]

    html = build_report([run], tmp_path / "report.html").read_text("utf-8")
    section = html[html.index('id="item-vit"'):]
    section = section[:section.index("</section>")]
    assert "claims: 2 of 4 failed</strong> · 2 refuted, 0 not enough information, 2 supported" in section
    rows = re.findall(r'<tr class="claim-(\w+)"><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>',
                      section)
    assert [(v, i) for v, _, i, _, _ in rows] == [("refuted", "back"), ("refuted", "gone"), ("supported", "edge"),
                                                  ("supported", "sinks")]
    assert rows[0][3] == "&quot;Class Label&quot; feeds &quot;MLP Head&quot;"
    assert rows[1][4] == "Refuted: the diagram has no component &quot;Softmax&quot;."
    assert rows[2][4] == "Supported: there is an arrow from &quot;Image&quot; to &quot;Patch Embedding&quot;."
    other = html[html.index('id="item-rag"'):]
    assert 'class="claims"' not in other[:other.index("</section>")]  # no claims file: nothing shown


def test_a_bad_claims_file_is_skipped(tmp_path: Path, caplog):
    (tmp_path / "claims").mkdir()
    (tmp_path / "claims" / "a.json").write_text("{not json")
    (tmp_path / "claims" / "b.json").write_text('{"item": "b"}')
    (tmp_path / "claims" / "c.json").write_text('{"item": "c", "results": []}')
    assert list(load_claims_results(tmp_path)) == ["c"]
    assert "unreadable claims result" in caplog.text and "not a claims result" in caplog.text
