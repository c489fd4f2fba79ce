"""95% bootstrap intervals of every mean in a summary: they cover the mean, shrink with n,
are bit-identical across calls, and reach the leaderboard CSV and the terminal table."""

from __future__ import annotations

import csv
import json
import random

import pytest

from sciflow.cli import main
from sciflow.runs.summary import bootstrap_interval, leaderboard_rows, summarize_rows, write_leaderboard


def rows(n: int, seed: int = 0) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        g, t = rnd.random(), rnd.random()
        out.append({"id": f"i{i}", "status": "ok", "error": None,
                    "meta": {"difficulty": ("easy", "hard")[i % 2], "area": ("vision", "nlp")[i % 3 == 0]},
                    "scores": {"graph": g, "text": t, "image": (g + t) / 2, "overall": (g + 2 * t) / 3}})
    out.append({"id": "crashed", "status": "prediction_error", "error": "boom", "meta": {}, "scores": None})
    return out


def summarize(n: int, run: str = "r") -> dict:
    return summarize_rows(rows(n), run=run, config_hash="c" * 64)


def test_every_mean_has_an_interval_that_covers_it():
    s = summarize(40)
    iv = s["intervals"]
    assert (iv["confidence"], iv["resamples"]) == (0.95, 1000)
    cells = [(s["means"], iv["means"])]
    cells += [(s["by_difficulty"][d], iv["by_difficulty"][d]) for d in s["by_difficulty"]]
    cells += [(s["by_area"][a], iv["by_area"][a]) for a in s["by_area"]]
    assert set(iv["by_difficulty"]) == {"easy", "hard"} and set(iv["by_area"]) == {"vision", "nlp"}
    for cell, ci in cells:
        assert set(ci) == set(s["score_keys"])
        for k in s["score_keys"]:
            lo, hi = ci[k]
            assert lo <= cell[k] <= hi and lo < hi


def test_intervals_shrink_with_n():
    small, large = summarize(20), summarize(200)
    for k in ("graph", "text", "overall"):
        lo_s, hi_s = small["intervals"]["means"][k]
        lo_l, hi_l = large["intervals"]["means"][k]
        assert hi_l - lo_l < (hi_s - lo_s) * 0.6


def test_intervals_are_deterministic_and_do_not_depend_on_the_run_name():
    assert summarize(30)["intervals"] == summarize(30)["intervals"]
    assert json.dumps(summarize(30)) == json.dumps(summarize(30))
    assert summarize(30, "a")["intervals"] == summarize(30, "b")["intervals"]


def test_degenerate_intervals():
    assert bootstrap_interval([], seed=1) is None
    assert bootstrap_interval([0.4], seed=1) == [pytest.approx(0.4), pytest.approx(0.4)]
    s = summarize_rows([], run="r", config_hash="c")
    assert s["intervals"]["means"] == {}


def test_leaderboard_csv_has_lo_hi_columns_and_the_table_shows_plus_minus(tmp_path, capsys):
    s = summarize(50, run="gen")
    [lb] = leaderboard_rows([s])
    for k in ("overall", "graph", "text", "image"):
        assert (lb[f"{k}_lo"], lb[f"{k}_hi"]) == tuple(s["intervals"]["means"][k])
    write_leaderboard([s], tmp_path / "lb.csv")
    with (tmp_path / "lb.csv").open() as f:
        [row] = list(csv.DictReader(f))
    assert float(row["graph_lo"]) <= float(row["graph"]) <= float(row["graph_hi"])
    # the terminal table, through summarize on a results folder
    d = tmp_path / "gen"
    d.mkdir()
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows(50)))
    (d / "manifest.json").write_text(json.dumps({"config_hash": "c" * 64, "metric_version": 2,
                                                 "references": {"dir": "/r", "n": 50, "sha256": "a" * 64}}))
    assert main(["summarize", str(d)]) == 0
    out = capsys.readouterr().out
    assert "±0." in out


def test_a_summary_without_intervals_still_tabulates():
    s = summarize(10)
    del s["intervals"]
    [lb] = leaderboard_rows([s])
    assert lb["graph_lo"] is None and lb["graph"] == pytest.approx(s["means"]["graph"])
