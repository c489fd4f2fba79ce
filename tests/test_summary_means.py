"""Means in which every failure counts 0, each cell with its n; metric version and reference
fingerprint recorded and enforced on resume. Expected values are computed by hand."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from sciflow.config import load_config
from sciflow.metrics import METRIC_VERSION
from sciflow.runs.executors import error_row
from sciflow.runs.items import Item
from sciflow.runs.results import reusable_rows
from sciflow.runs.scoring import _finish_row, run_scoring
from sciflow.runs.summary import leaderboard_rows, summarize_rows

STRING_ONLY = load_config(overrides={"matching": {"embedder": "none"}})


def row(item: str, status: str = "ok", scores: dict | None = None, **meta: str) -> dict:
    return {"id": item, "status": status, "error": None if status == "ok" else f"{status} here",
            "meta": meta, "scores": scores}


def summarize(rows: list[dict]) -> dict:
    return summarize_rows(rows, run="r", config_hash="c" * 64)


# ------------------------------------------------------------------ failures count 0
def test_a_crashed_row_counts_zero_and_is_in_n():
    s = summarize([row("a", scores={"graph": 1.0}), row("b", "prediction_error", None)])
    assert s["means"]["graph"] == pytest.approx(0.5)
    assert s["means"]["n"] == 2
    assert (s["n_items"], s["n_scored"], s["n_prediction_errors"]) == (2, 1, 1)


def test_a_json_prediction_in_an_image_run_counts_zero_in_image_and_overall():
    rows = [
        row("img", scores={"graph": 0.8, "text": 0.6, "image": 0.5, "overall": 0.6}),
        row("valid_json", scores={"graph": 1.0, "text": 1.0}),  # scored, but no image level
        row("corrupt_json", "prediction_error", {"graph": 0.0, "text": 0.0}),
    ]
    m = summarize(rows)["means"]
    assert m["n"] == 3
    assert m["overall"] == pytest.approx(0.2)  # (0.6 + 0 + 0) / 3
    assert m["image"] == pytest.approx(0.5 / 3)
    assert m["graph"] == pytest.approx(0.6)  # (0.8 + 1.0 + 0) / 3
    assert m["text"] == pytest.approx(1.6 / 3)


def test_an_image_run_expects_overall_even_when_no_row_has_it():
    # every image row's judge failed (no text, so no overall), and nothing is missing
    rows = [row("a", scores={"graph": 1.0, "image": 0.5}), row("b", scores={"graph": 0.5, "image": 0.25})]
    s = summarize(rows)
    assert s["score_keys"] == ["overall", "graph", "image"]
    assert s["means"]["overall"] == 0.0 and s["means"]["image"] == pytest.approx(0.375)


def test_a_judge_failure_counts_zero_in_text():
    ok = row("a", scores={"graph": 1.0, "text": 0.8, "alignment": 0.9})
    judge_failed = row("b", scores={"graph": 1.0})
    judge_failed["notes"] = ["text level not scored: judge unreachable"]
    m = summarize([ok, judge_failed])["means"]
    assert m["text"] == pytest.approx(0.4)
    assert m["alignment"] == pytest.approx(0.45)
    assert m["graph"] == pytest.approx(1.0)
    assert m["n"] == 2


def test_none_values_count_zero():
    rows = [row("a", scores={"graph": 1.0, "text": None}), row("b", scores={"graph": None, "text": 0.5})]
    m = summarize(rows)["means"]
    assert (m["graph"], m["text"]) == (pytest.approx(0.5), pytest.approx(0.25))


def test_reference_errors_stay_out_of_the_means_but_are_counted_and_listed():
    rows = [row("a", scores={"graph": 0.75}), row("bad", "reference_error", None),
            row("m", "missing_prediction", {"graph": 0.0})]
    s = summarize(rows)
    assert s["means"]["graph"] == pytest.approx(0.375)
    assert s["means"]["n"] == 2
    assert (s["n_items"], s["n_reference_errors"], s["n_missing"]) == (3, 1, 1)
    assert s["errors"] == [{"id": "bad", "status": "reference_error", "error": "reference_error here"}]
    assert s["missing"] == ["m"]


def test_only_reference_errors_give_no_mean():
    s = summarize([row("bad", "reference_error", None)])
    assert s["means"] == {"n": 0, "n_unavailable": {}}
    assert s["score_keys"] == []


def test_cells_carry_their_n_and_failures_count_in_them():
    rows = [
        row("e1", scores={"graph": 1.0}, difficulty="easy", area="robotics"),
        row("e2", "prediction_error", None, difficulty="easy", area="vision"),
        row("h1", scores={"graph": 0.25}, difficulty="hard", area="vision"),
        row("h2", "reference_error", None, difficulty="hard", area="vision"),
    ]
    s = summarize(rows)
    assert s["means"]["n"] == 3 and s["means"]["graph"] == pytest.approx(1.25 / 3)
    assert s["by_difficulty"]["easy"] == {"n": 2, "graph": pytest.approx(0.5), "n_unavailable": {}}
    assert s["by_difficulty"]["hard"] == {"n": 1, "graph": pytest.approx(0.25), "n_unavailable": {}}
    assert s["by_area"]["robotics"]["n"] == 1 and s["by_area"]["robotics"]["graph"] == pytest.approx(1.0)
    assert s["by_area"]["vision"]["n"] == 2 and s["by_area"]["vision"]["graph"] == pytest.approx(0.125)
    assert "medium" not in s["by_difficulty"]


def test_score_keys_are_the_runs_and_every_key_has_a_value():
    rows = [row("a", scores={"edge_f1": 0.5, "graph": 1.0, "coverage": 0.3}), row("b", scores={"text": 0.2})]
    s = summarize(rows)
    assert s["score_keys"] == ["graph", "text", "edge_f1", "coverage"]
    assert s["means"] == {"n": 2, "text": pytest.approx(0.1), "graph": pytest.approx(0.5),
                          "edge_f1": pytest.approx(0.25), "coverage": pytest.approx(0.15), "n_unavailable": {}}


def test_a_partial_image_score_is_a_score_and_its_unavailable_term_is_left_out_of_that_term_only():
    partial = row("p", scores={"image": 0.5, "semantic_consistency": 0.6, "perceptual_similarity": None,
                               "visual_flow": 0.4})
    full = row("f", scores={"image": 0.6, "semantic_consistency": 0.8, "perceptual_similarity": 0.4,
                            "visual_flow": 0.6})
    json_pred = row("j", scores={"graph": 1.0})  # no image level at all: a failure there
    no_terms = row("z", scores={"image": None, "perceptual_similarity": None})  # image not scored: a failure
    m = summarize([partial, full, json_pred, no_terms])["means"]
    assert m["n"] == 4
    assert m["image"] == pytest.approx(0.275)  # (0.5 + 0.6 + 0 + 0) / 4
    assert m["semantic_consistency"] == pytest.approx(0.35)  # (0.6 + 0.8 + 0 + 0) / 4
    assert m["perceptual_similarity"] == pytest.approx(0.4 / 3)  # partial row left out: (0.4 + 0 + 0) / 3
    assert m["n_unavailable"] == {"perceptual_similarity": 1}
    lb = leaderboard_rows([summarize([partial, full, json_pred, no_terms])])[0]
    assert lb["n_averaged"] == 4 and lb["n_perceptual_similarity"] == 3


# ------------------------------------------------------------------ leaderboard rows
def test_leaderboard_row_carries_n_and_marks_differences_from_the_first_run():
    a = summarize_rows([row("x", scores={"graph": 1.0}, difficulty="easy")], run="a", config_hash="1" * 64,
                       fallbacks=["embedder"], metric_version=2,
                       references={"dir": "/r", "n": 1, "sha256": "ab" * 32})
    b = summarize_rows([row("x", scores={"graph": 0.5}), row("y", "prediction_error", None)], run="b",
                       config_hash="2" * 64, metric_version=2, references={"dir": "/s", "n": 1, "sha256": "ab" * 32})
    c = summarize_rows([row("x", scores={"graph": 0.5})], run="c", config_hash="1" * 64, fallbacks=["embedder"])
    ra, rb, rc = leaderboard_rows([a, b, c])
    assert (ra["n_averaged"], ra["graph"], ra["graph_easy"], ra["n_easy"]) == (1, 1.0, 1.0, 1)
    assert (rb["n_averaged"], rb["graph"], rb["n_errors"]) == (2, 0.25, 1)
    assert (ra["config"], rb["config"], rc["config"]) == ("1" * 12, "2" * 12 + "*", "1" * 12)
    assert (ra["fallbacks"], rb["fallbacks"], rc["fallbacks"]) == ("embedder", "none*", "embedder")
    # the folder the references lie in does not matter, their content does; unknown differs
    assert (ra["refs"], rb["refs"], rc["refs"]) == ("ab" * 6, "ab" * 6, "?*")
    assert (ra["metric_version"], rb["metric_version"], rc["metric_version"]) == ("2", "2", "?*")


# ------------------------------------------------------------------ metric version on resume
def test_reusable_rows_rejects_another_or_no_metric_version():
    base = {"config_hash": "h", "inputs": {}}
    rows = [{"id": "same", **base, "metric_version": METRIC_VERSION},
            {"id": "other", **base, "metric_version": METRIC_VERSION + 1},
            {"id": "none", **base}]
    inputs = {"same": {}, "other": {}, "none": {}}
    assert list(reusable_rows(rows, "h", inputs)) == ["same"]
    assert list(reusable_rows(rows, "h", inputs, metric_version=METRIC_VERSION + 1)) == ["other"]


def test_finish_row_stamps_the_metric_version_and_gives_a_crashed_row_its_meta(tmp_path):
    ref = tmp_path / "a.json"
    ref.write_text(json.dumps({"id": "a", "nodes": [{"id": "x", "label": "X"}], "edges": [],
                               "meta": {"area": "robotics", "difficulty": "hard"}}))
    crashed = error_row(Item("a", ref, tmp_path / "a.png"), "worker crashed: RuntimeError: boom")
    assert crashed["meta"] == {} and crashed["scores"] is None
    done = _finish_row(crashed, Item("a", ref, tmp_path / "a.png"))
    assert done["metric_version"] == METRIC_VERSION
    assert done["meta"] == {"area": "robotics", "difficulty": "hard"}
    assert _finish_row({"id": "b", "status": "ok", "meta": {}, "metric_version": 7}, None)["metric_version"] == 7


def _chain(gid: str) -> str:
    return json.dumps({"id": gid, "nodes": [{"id": n, "label": n} for n in "ABC"],
                       "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "C"}],
                       "meta": {"difficulty": "easy"}})


@pytest.fixture
def small(tmp_path) -> tuple[Path, Path]:
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    refs.mkdir()
    preds.mkdir()
    for name in ("one", "two"):
        (refs / f"{name}.json").write_text(_chain(name))
    (preds / "one.json").write_text(_chain("one"))
    return preds, refs


def test_run_records_metric_version_and_reference_fingerprint(small, tmp_path):
    preds, refs = small
    out = tmp_path / "out"
    res = run_scoring(preds, refs, out, STRING_ONLY)
    manifest = json.loads((out / "manifest.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert manifest["metric_version"] == METRIC_VERSION == summary["metric_version"]
    assert [r["metric_version"] for r in rows] == [METRIC_VERSION, METRIC_VERSION]
    pairs = sorted([p.stem, hashlib.sha256(p.read_bytes()).hexdigest()] for p in refs.glob("*.json"))
    expected = hashlib.sha256(json.dumps(pairs, separators=(",", ":")).encode()).hexdigest()
    assert manifest["references"] == {"dir": str(refs), "n": 2, "sha256": expected}
    assert summary["references"] == manifest["references"]
    # one perfect item, one missing: graph (1 + 0) / 2 over n = 2
    assert res.summary["means"]["n"] == 2 and res.summary["means"]["graph"] == pytest.approx(0.5)


def test_resume_redoes_rows_and_manifest_of_another_metric_version(small, tmp_path, monkeypatch):
    import sciflow.runs.scoring

    preds, refs = small
    out = tmp_path / "out"
    run_scoring(preds, refs, out, STRING_ONLY)
    # rows and manifest unchanged: everything reused, no executor built
    with monkeypatch.context() as m:
        m.setattr(sciflow.runs.scoring, "make_executor", lambda *a, **k: pytest.fail("an executor was built"))
        assert run_scoring(preds, refs, out, STRING_ONLY).n_reused == 2
    # the manifest of another metric version is not kept even when every row is reused
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["metric_version"] = METRIC_VERSION - 1
    (out / "manifest.json").write_text(json.dumps(manifest))
    again = run_scoring(preds, refs, out, STRING_ONLY)
    assert again.n_reused == 2
    assert json.loads((out / "manifest.json").read_text())["metric_version"] == METRIC_VERSION
    # rows of another (or no) metric version are scored again
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    lines[0]["metric_version"] = METRIC_VERSION - 1
    del lines[1]["metric_version"]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert run_scoring(preds, refs, out, STRING_ONLY).n_reused == 0


def test_a_changed_reference_set_rewrites_the_kept_manifest(small, tmp_path):
    preds, refs = small
    out = tmp_path / "out"
    run_scoring(preds, refs, out, STRING_ONLY)
    (refs / "two.json").unlink()
    res = run_scoring(preds, refs, out, STRING_ONLY)
    assert res.n_reused == 1
    assert json.loads((out / "manifest.json").read_text())["references"]["n"] == 1
