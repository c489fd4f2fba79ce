"""`sciflow score` / `summarize`: pairing, per-item errors, files written, determinism."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from sciflow.cli import main
from sciflow.config import ConfigError, load_config
from sciflow.runs.scoring import run_scoring

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STRING_ONLY = load_config(overrides={"matching": {"embedder": "none"}})


def graph(gid, nodes, edges, meta=None):
    d = {"id": gid, "nodes": [{"id": n, "label": n} for n in nodes],
         "edges": [{"source": a, "target": b} for a, b in edges]}
    if meta:
        d["meta"] = meta
    return json.dumps(d)


@pytest.fixture
def dirs(tmp_path):
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    refs.mkdir()
    preds.mkdir()
    chain = graph("x", "ABC", [("A", "B"), ("B", "C")], {"area": "robotics", "difficulty": "easy"})
    for name in ("perfect", "reversed", "missing", "corrupt", "badref"):
        (refs / f"{name}.json").write_text(chain)
    (refs / "badref.json").write_text('{"id": "badref", "nodes": [], "edges": [{"source": "q", "target": "r"}]}')
    (preds / "perfect.json").write_text(chain)
    (preds / "reversed.json").write_text(graph("x", "ABC", [("B", "A"), ("B", "C")]))
    (preds / "corrupt.json").write_text("{ this is not json")
    (preds / "badref.json").write_text(chain)
    (preds / "orphan.json").write_text(chain)
    return preds, refs


def test_run_scores_every_item_and_reports_bad_ones(dirs, tmp_path):
    preds, refs = dirs
    out = tmp_path / "out"
    res = run_scoring(preds, refs, out, STRING_ONLY)
    rows = {r["id"]: r for r in res.rows}
    assert list(rows) == ["badref", "corrupt", "missing", "perfect", "reversed"]
    assert rows["perfect"]["status"] == "ok" and rows["perfect"]["scores"]["graph"] == 1.0
    assert rows["reversed"]["scores"]["edge_f1"] == 0.5
    assert rows["missing"]["status"] == "missing_prediction" and rows["missing"]["scores"]["graph"] == 0.0
    assert rows["corrupt"]["status"] == "prediction_error" and "not valid JSON" in rows["corrupt"]["error"]
    assert rows["badref"]["status"] == "reference_error" and "unknown node 'q'" in rows["badref"]["error"]
    s = res.summary
    assert s["unreferenced_predictions"] == ["orphan"]
    assert (s["n_items"], s["n_scored"], s["n_missing"], s["n_prediction_errors"], s["n_reference_errors"]) == (
        5, 2, 1, 1, 1)
    # mean over the four scoreable items; the bad reference is left out
    expected = (1.0 + rows["reversed"]["scores"]["graph"] + 0 + 0) / 4
    assert s["means"]["graph"] == pytest.approx(expected)
    assert s["by_difficulty"]["easy"]["n"] == 4
    assert s["by_area"]["robotics"]["graph"] == pytest.approx(expected)

    written = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert written == res.rows
    assert json.loads((out / "summary.json").read_text()) == s
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sciflow_version"] == "0.1.0"
    assert manifest["config_hash"] == STRING_ONLY.hash
    assert manifest["thresholds"] == {"node_match": 0.6}
    assert manifest["metric_weights"]["graph"] == {"edge_f1": 0.6, "node_f1": 0.4}
    assert manifest["models"]["embedder"]["backend"] == "none"
    assert manifest["fallbacks"] == ["embedder"]
    assert {"python", "system", "packages"} <= set(manifest["platform"])
    with (out / "leaderboard.csv").open() as f:
        lb = list(csv.DictReader(f))
    assert lb[0]["run"] == "out" and float(lb[0]["graph"]) == pytest.approx(expected)
    assert lb[0]["fallbacks"] == "embedder"


def test_results_are_bit_identical_across_runs(dirs, tmp_path):
    preds, refs = dirs
    run_scoring(preds, refs, tmp_path / "a", STRING_ONLY, run_name="gen")
    run_scoring(preds, refs, tmp_path / "b", STRING_ONLY, run_name="gen")
    for name in ("results.jsonl", "leaderboard.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_missing_folder_is_a_clear_error(tmp_path, capsys):
    rc = main(["score", str(tmp_path / "nope"), "--refs", str(tmp_path)])
    assert rc == 2
    assert "prediction folder not found" in capsys.readouterr().err


def test_cli_score_and_summarize_examples(tmp_path, capsys):
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[matching]\nembedder = "none"\n')
    outs = []
    for gen in ("careful-gen", "sloppy-gen"):
        out = tmp_path / gen
        rc = main(["score", str(EXAMPLES / "predictions" / gen), "--refs", str(EXAMPLES / "references"),
                   "--out", str(out), "--config", str(cfg)])
        assert rc == 0
        outs.append(out)
    text = capsys.readouterr()
    assert "sciflow leaderboard" in text.out
    assert "missing predictions (1): diffusion_policy" in text.err
    assert "FALLBACK" in text.err
    combined = tmp_path / "lb.csv"
    assert main(["summarize", *map(str, outs), "-o", str(combined)]) == 0
    with combined.open() as f:
        lb = {r["run"]: r for r in csv.DictReader(f)}
    assert set(lb) == {"careful-gen", "sloppy-gen"}
    assert float(lb["careful-gen"]["graph"]) > float(lb["sloppy-gen"]["graph"])
    assert lb["sloppy-gen"]["n_missing"] == "1" and lb["sloppy-gen"]["n_errors"] == "1"


def test_summarize_rejects_a_non_results_folder(tmp_path, capsys):
    assert main(["summarize", str(tmp_path)]) == 2
    assert "no results.jsonl" in capsys.readouterr().err


def test_config_rejects_unknown_keys_and_bad_weights(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[matching]\nthreshhold = 0.7\n")
    with pytest.raises(ConfigError, match="unknown config key 'matching.threshhold'"):
        load_config(bad)
    with pytest.raises(ConfigError, match=r"^graph\.edge_weight \+ graph\.node_weight = .* must sum to 1$"):
        load_config(overrides={"graph": {"edge_weight": 0.9}})
    assert load_config().hash == load_config().hash
    assert load_config().hash != load_config(overrides={"matching": {"threshold": 0.7}}).hash


def test_cli_validate_and_convert(tmp_path, capsys):
    good = EXAMPLES / "references" / "vit.json"
    assert main(["validate", str(good)]) == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "b", "nodes": [{"id": "a"}], "edges": []}')
    assert main(["validate", str(bad)]) == 1
    assert "'label' is required" in capsys.readouterr().err
    paper = tmp_path / "bench" / "p1"
    paper.mkdir(parents=True)
    (paper / "canvas_full.json").write_text(json.dumps(
        {"nodes": [{"node_id": "a", "desc": "A"}, {"node_id": "b", "desc": "B"}], "edges": [{"from": "a", "to": "b"}]}))
    assert main(["convert", str(tmp_path / "bench"), "-o", str(tmp_path / "conv")]) == 0
    assert (tmp_path / "conv" / "p1.json").is_file()


def test_scoring_the_same_folder_with_a_copy_scores_one(tmp_path):
    refs = EXAMPLES / "references"
    preds = tmp_path / "copy"
    shutil.copytree(refs, preds)
    res = run_scoring(preds, refs, None, STRING_ONLY)
    assert all(r["scores"]["graph"] == 1.0 for r in res.rows)
