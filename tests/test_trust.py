"""Parse reliability in rows and summaries (sciflow/runs/trust.py): rows below the pinned threshold
are flagged, summaries report the share flagged and the means with and without them, and
--min-reliability drops them from the means (recorded in the summary and the manifest).
Expected values are computed by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sciflow.cli import main
from sciflow.config import ConfigError, load_config
from sciflow.format.graph import DiagramGraph
from sciflow.runs.items import Item
from sciflow.runs.scoring import run_scoring
from sciflow.runs.summary import read_summary, summarize_rows
from sciflow.runs.trust import reliability_fields
from sciflow.runs.worker import base_row


def row(item: str, graph: float, reliability: float | None) -> dict:
    r = {"id": item, "status": "ok", "error": None, "meta": {}, "scores": {"graph": graph}}
    if reliability is not None:
        r.update(reliability_fields(
            DiagramGraph(id=item, meta={"parse_reliability": reliability, "reliability_signals": {"isolated": 0.0}}),
            0.5))
    return r


ROWS = [row("a", 1.0, 0.9), row("b", 0.2, 0.3), row("c", 0.6, 0.7), row("d", 0.4, None)]


def test_row_fields_flag_below_the_threshold_only_for_parses():
    assert ROWS[0]["low_reliability"] is False and ROWS[0]["parse_reliability"] == 0.9
    assert ROWS[1]["low_reliability"] is True
    assert ROWS[1]["reliability_signals"] == {"isolated": 0.0}
    assert "parse_reliability" not in ROWS[3]
    plain = base_row(Item("x", Path("x.json"), None))  # a graph prediction: no parse, null, not flagged
    assert (plain["parse_reliability"], plain["reliability_signals"], plain["low_reliability"]) == (None, None, False)
    no_meta = reliability_fields(DiagramGraph(id="g"), 0.5)
    assert no_meta == {"parse_reliability": None, "reliability_signals": None, "low_reliability": False}


def test_summary_reports_share_flagged_and_means_with_and_without():
    s = summarize_rows(ROWS, run="r", config_hash="c" * 64)
    rel = s["reliability"]
    assert (rel["n_parsed"], rel["n_flagged"], rel["threshold"]) == (3, 1, 0.5)
    assert rel["share_flagged"] == pytest.approx(1 / 3)
    assert rel["flagged"] == ["b"]
    assert rel["means_with_flagged"]["graph"] == pytest.approx((1.0 + 0.2 + 0.6 + 0.4) / 4)
    assert rel["means_without_flagged"]["graph"] == pytest.approx((1.0 + 0.6 + 0.4) / 3)
    assert rel["means_without_flagged"]["n"] == 3
    lo, hi = rel["intervals_without_flagged"]["graph"]
    assert lo <= rel["means_without_flagged"]["graph"] <= hi
    assert s["means"]["graph"] == pytest.approx(0.55) and s["min_reliability"] is None


def test_min_reliability_drops_rows_below_it_from_every_mean():
    s = summarize_rows(ROWS, run="r", config_hash="c" * 64, min_reliability=0.8)
    # b (0.3) and c (0.7) are dropped; d has no parse and stays
    assert s["means"]["n"] == 2 and s["means"]["graph"] == pytest.approx((1.0 + 0.4) / 2)
    assert (s["min_reliability"], s["n_dropped_low_reliability"], s["n_items"]) == (0.8, 2, 4)


def test_threshold_is_a_checked_config_key():
    assert load_config().trust.min_reliability_flag == 0.5
    with pytest.raises(ConfigError, match=r"^trust.min_reliability_flag = -0.1: must lie in \[0, 1\]$"):
        load_config(overrides={"trust": {"min_reliability_flag": -0.1}})


def results_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (path / "manifest.json").write_text(json.dumps({"config_hash": "c" * 64, "fallbacks": [], "metric_version": 3,
                                                    "references": {"dir": "/r", "n": 4, "sha256": "a" * 64}}))
    return path


def test_summarize_min_reliability_on_the_command_line(tmp_path, capsys):
    run = results_folder(tmp_path / "run")
    assert read_summary(run, min_reliability=0.8)["means"]["graph"] == pytest.approx(0.7)
    assert main(["summarize", str(run), "--min-reliability", "0.8", "-o", str(tmp_path / "lb.csv")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "parse reliability < 0.8 left out of the means" in out
    assert "1 of 3 parsed items below 0.5" in out
    import csv

    with (tmp_path / "lb.csv").open() as f:
        lb = next(csv.DictReader(f))
    assert (lb["graph"], lb["min_reliability"]) == ("0.700000", "0.800000")
    assert lb["share_low_reliability"] == "0.333333" and lb["graph_without_low_reliability"] == "0.666667"
    with pytest.raises(SystemExit):
        main(["summarize", str(run), "--min-reliability", "1.5"])
    assert "expected a number in [0, 1]" in capsys.readouterr().err


def test_score_records_min_reliability_in_manifest_and_summary(tmp_path):
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    refs.mkdir()
    preds.mkdir()
    g = {"id": "x", "nodes": [{"id": "a", "label": "Alpha"}, {"id": "b", "label": "Beta"}],
         "edges": [{"source": "a", "target": "b"}]}
    (refs / "x.json").write_text(json.dumps(g))
    (preds / "x.json").write_text(json.dumps(g))
    cfg = load_config(overrides={"matching": {"embedder": "none"}})
    res = run_scoring(preds, refs, tmp_path / "out", cfg, min_reliability=0.6)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert manifest["min_reliability"] == 0.6 and summary["min_reliability"] == 0.6
    assert res.rows[0]["parse_reliability"] is None and res.rows[0]["low_reliability"] is False
    assert summary["n_dropped_low_reliability"] == 0 and summary["reliability"]["n_parsed"] == 0


def test_samples_of_an_item_average_their_reliability():
    from sciflow.runs.samples import merge_samples

    def sample(k: int, r: float) -> dict:
        return {**row(f"a~{k}", 0.5, r), "sample_of": "a"}

    merged = merge_samples([sample(1, 0.2), sample(2, 0.6), sample(3, 0.9)])[0]
    # mean (0.2 + 0.6 + 0.9) / 3 = 0.5667: not below 0.5, so not flagged although sample 1 was
    assert merged["parse_reliability"] == pytest.approx(1.7 / 3)
    assert merged["low_reliability"] is False and merged["reliability_samples"] == [0.2, 0.6, 0.9]
    low = merge_samples([sample(1, 0.2), sample(2, 0.4)])[0]
    assert low["parse_reliability"] == pytest.approx(0.3) and low["low_reliability"] is True
