"""`sciflow compare` and compare_runs: a paired difference with a bootstrap interval, a
Wilcoxon p-value and a one-line verdict per level; mixed reference sets refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from sciflow.cli import main
from sciflow.runs.compare import CompareError, compare_rows, compare_runs

REFS = {"dir": "/refs", "n": 30, "sha256": "a" * 64}


def make_rows(n: int = 30, lower_graph: float = 0.0) -> list[dict]:
    rnd = random.Random(7)
    out = []
    for i in range(n):
        g, t = 0.2 + 0.8 * rnd.random(), rnd.random()
        out.append({"id": f"i{i:02d}", "status": "ok", "error": None,
                    "meta": {"difficulty": ("easy", "medium", "hard")[i % 3], "area": ("vision", "nlp")[i % 2]},
                    "scores": {"graph": g - lower_graph, "text": t}})
    return out


def folder(path: Path, rows: list[dict], references: dict = REFS, metric_version: int = 2) -> Path:
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "manifest.json").write_text(json.dumps({"config_hash": "c" * 64, "metric_version": metric_version,
                                                    "references": references}))
    return path


def test_a_run_against_itself_shows_no_difference(tmp_path):
    a = folder(tmp_path / "gen", make_rows())
    res = compare_runs(a, a)
    assert res["n_common"] == 30 and set(res["levels"]) == {"graph", "text"}
    for st in [*res["levels"].values(), *(s for c in res["by_difficulty"].values() for s in c.values()),
               *(s for c in res["by_area"].values() for s in c.values())]:
        assert st["diff"] == 0.0 and st["ci"] == [0.0, 0.0] and st["p"] == 1.0 and not st["significant"]
    assert all(v.startswith("no significant difference") for v in res["verdicts"])


def test_a_known_graph_difference_is_found(tmp_path):
    a = folder(tmp_path / "gen", make_rows())
    b = folder(tmp_path / "worse", make_rows(lower_graph=0.1))
    res = compare_runs(b, a)
    g = res["levels"]["graph"]
    assert g["diff"] == pytest.approx(-0.1, abs=1e-9) and g["n"] == 30
    assert g["ci"][0] == pytest.approx(-0.1, abs=1e-9) and g["ci"][1] == pytest.approx(-0.1, abs=1e-9)
    assert g["ci"][0] <= g["diff"] <= g["ci"][1]
    assert g["p"] < 0.05 and g["significant"]
    assert res["levels"]["text"]["diff"] == 0.0 and res["levels"]["text"]["p"] == 1.0
    assert set(res["by_difficulty"]) == {"easy", "medium", "hard"} and set(res["by_area"]) == {"nlp", "vision"}
    assert res["by_difficulty"]["easy"]["graph"]["n"] == 10
    graph_line, text_line = res["verdicts"]
    assert graph_line.startswith("gen beats worse on graph by 0.100 [0.100, 0.100], p = ") and "n = 30" in graph_line
    assert text_line.startswith("no significant difference on text (worse − gen = 0.000")


def test_a_noisy_difference_has_an_interval_around_it():
    rnd = random.Random(3)
    a = make_rows(60)
    b = json.loads(json.dumps(a))
    for r in b:
        r["scores"]["graph"] -= 0.1 + rnd.uniform(-0.05, 0.05)
    g = compare_rows(a, b, "a", "b")["levels"]["graph"]
    lo, hi = g["ci"]
    assert 0.0 < lo < g["diff"] < hi and g["diff"] == pytest.approx(0.1, abs=0.02)
    assert g["p"] < 0.001


def test_compare_is_deterministic_and_pairs_by_id():
    a, b = make_rows(), make_rows(lower_graph=0.05)
    b[0]["scores"]["graph"] = 0.9  # noise
    del b[-1]
    b.append({"id": "extra", "status": "ok", "meta": {}, "scores": {"graph": 1.0, "text": 1.0}})
    one, two = compare_rows(a, b, "a", "b"), compare_rows(a, b, "a", "b")
    assert json.dumps(one) == json.dumps(two)
    assert one["n_common"] == 29 and one["only_a"] == ["i29"] and one["only_b"] == ["extra"]


def test_nothing_in_common_is_refused():
    with pytest.raises(CompareError):
        compare_rows(make_rows(2), [{"id": "z", "status": "ok", "scores": {"graph": 1.0}}])


def test_cli_prints_verdicts_and_json(tmp_path, capsys):
    a = folder(tmp_path / "gen", make_rows())
    b = folder(tmp_path / "worse", make_rows(lower_graph=0.1))
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert any(line.startswith("gen beats worse on graph by 0.100 [0.100, 0.100], p = ") for line in lines)
    assert any(line.startswith("no significant difference on text (gen − worse = 0.000") for line in lines)
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["levels"]["graph"]["diff"] == pytest.approx(0.1) and res["a"] == "gen"


@pytest.mark.parametrize("other", [{"references": {"dir": "/o", "n": 3, "sha256": "b" * 64}},
                                   {"metric_version": 1}])
def test_cli_refuses_mixed_reference_sets_and_metric_versions(tmp_path, capsys, other):
    a = folder(tmp_path / "gen", make_rows())
    b = folder(tmp_path / "other", make_rows(), **other)
    assert main(["compare", str(a), str(b)]) == 2
    captured = capsys.readouterr()
    [line] = [x for x in captured.err.splitlines() if x.strip()]
    assert "error:" in line and "not comparable" in line and "gen" in line and "other" in line
    assert "differs" in line and "Traceback" not in captured.err
    assert captured.out == ""


def test_cli_refuses_a_folder_without_results(tmp_path, capsys):
    a = folder(tmp_path / "gen", make_rows())
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(a), str(tmp_path / "empty")]) == 2
    assert "no results.jsonl" in capsys.readouterr().err
