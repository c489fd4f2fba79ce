"""Executors, resume, and never losing a result."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sciflow.bench.generators import get_generator, run_generator
from sciflow.config import load_config
from sciflow.metrics import METRIC_VERSION
from sciflow.runs.results import finalize, read_log, reusable_rows
from sciflow.runs.scoring import run_scoring

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REFS = EXAMPLES / "references"
STRING_ONLY = load_config(overrides={"matching": {"embedder": "none"}})


def strip(rows):
    return [json.dumps(r, sort_keys=True) for r in rows]


def test_rerun_reuses_unchanged_rows_and_redoes_changed_ones(tmp_path, monkeypatch):
    import sciflow.runs.scoring

    preds = tmp_path / "preds"
    preds.mkdir()
    for p in (EXAMPLES / "predictions" / "careful-gen").glob("*.json"):
        (preds / p.name).write_bytes(p.read_bytes())
    out = tmp_path / "out"
    first = run_scoring(preds, REFS, out, STRING_ONLY)
    assert first.n_reused == 0
    manifest = (out / "manifest.json").read_bytes()
    # nothing to redo: no executor is built (no worker started, no model loaded), the manifest
    # of the run that made the rows stays
    with monkeypatch.context() as m:
        m.setattr(sciflow.runs.scoring, "make_executor", lambda *a, **k: pytest.fail("an executor was built"))
        second = run_scoring(preds, REFS, out, STRING_ONLY)
    assert second.n_reused == 5 and strip(second.rows) == strip(first.rows)
    assert second.summary == first.summary and (out / "manifest.json").read_bytes() == manifest
    # change one prediction: only that item is redone
    vit = json.loads((preds / "vit.json").read_text())
    vit["edges"] = vit["edges"][:1]
    (preds / "vit.json").write_text(json.dumps(vit))
    third = run_scoring(preds, REFS, out, STRING_ONLY)
    assert third.n_reused == 4
    assert {r["id"]: r for r in third.rows}["vit"]["scores"]["edge_recall"] < 1.0
    # a changed config redoes everything
    fourth = run_scoring(preds, REFS, out, load_config(overrides={"matching": {"embedder": "none", "threshold": 0.7}}))
    assert fourth.n_reused == 0
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == sorted(r["id"] for r in fourth.rows)


def test_results_log_tolerates_a_cut_line_and_finalize_dedups(tmp_path):
    log = tmp_path / "results.jsonl"
    a = json.dumps({"id": "a", "config_hash": "h", "metric_version": METRIC_VERSION, "inputs": {}})
    log.write_text(a + '\n{"id": "b", "config_h')
    rows = read_log(log)
    assert [r["id"] for r in rows] == ["a"]
    assert list(reusable_rows(rows, "h", {"a": {}, "b": {}})) == ["a"]
    assert reusable_rows(rows, "other", {"a": {}}) == {}
    finalize(log, [{"id": "b", "v": 1}, {"id": "a"}, {"id": "b", "v": 2}])
    assert [json.loads(x) for x in log.read_text().splitlines()] == [{"id": "a"}, {"id": "b", "v": 2}]


def test_local_pool_gives_the_same_rows_as_one_process(tmp_path):
    preds = EXAMPLES / "predictions" / "sloppy-gen"
    one = run_scoring(preds, REFS, tmp_path / "one", STRING_ONLY, run_name="x")
    two = run_scoring(preds, REFS, tmp_path / "two", STRING_ONLY, run_name="x", jobs=2, threads=1)
    assert strip(one.rows) == strip(two.rows)
    assert (tmp_path / "one" / "results.jsonl").read_bytes() == (tmp_path / "two" / "results.jsonl").read_bytes()
    assert one.manifest["executor"] == {"name": "local", "jobs": 1, "threads_per_worker": 0}
    assert two.manifest["executor"] == {"name": "local", "jobs": 2, "threads_per_worker": 1}


def test_local_pool_workers_share_the_cores_unless_told_otherwise():
    from sciflow.runs.executors import LocalExecutor
    from sciflow.runs.worker import WorkerSpec

    spec = WorkerSpec(dict(STRING_ONLY.data))
    for jobs, threads, expected in ((2, 0, max(1, (os.cpu_count() or 1) // 2)), (2, 3, 3), (64, 0, 1)):
        ex = LocalExecutor(WorkerSpec(spec.config_data, threads=threads), jobs=jobs)
        try:  # no item submitted: no worker process is started
            assert ex.threads == expected
        finally:
            ex.close()


@pytest.mark.slow
def test_ray_executor_gives_the_same_rows(tmp_path):
    pytest.importorskip("ray")
    preds = EXAMPLES / "predictions" / "careful-gen"
    local = run_scoring(preds, REFS, tmp_path / "local", STRING_ONLY, run_name="x")
    ray_run = run_scoring(preds, REFS, tmp_path / "ray", STRING_ONLY, run_name="x", executor="ray", jobs=2)
    assert strip(local.rows) == strip(ray_run.rows)
    assert ray_run.manifest["executor"]["name"] == "ray"
    assert ray_run.manifest["models"]["executor"]["actors"] == 2
    assert ray_run.manifest["executor"]["threads_per_worker"] == 1


@pytest.mark.slow
def test_sigkill_midway_then_rerun_scores_every_item_once(tmp_path):
    gen = tmp_path / "images"
    run_generator(get_generator("graphviz"), REFS, gen)
    out = tmp_path / "out"
    cfg = tmp_path / "cfg.toml"
    cfg.write_text('[matching]\nembedder = "none"\n[image]\nsemantic_backend = "auto"\n')
    cmd = [sys.executable, "-m", "sciflow.cli", "score", str(gen), "--refs", str(REFS), "--out", str(out),
           "--config", str(cfg), "--no-cache"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = out / "results.jsonl"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if log.is_file() and len(read_log(log)) >= 2:
            break
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.fail("the run finished before it could be killed; the test needs slower items")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = read_log(log)
    assert 2 <= len(before) < 5
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} items reused" in done.stderr
    rows = read_log(log)
    assert sorted(r["id"] for r in rows) == sorted(p.stem for p in REFS.glob("*.json"))
    kept = {r["id"]: r for r in before}
    for r in rows:
        if r["id"] in kept:
            assert r == kept[r["id"]]


def test_score_with_critique_writes_one_per_item_and_resume_respects_it(tmp_path):
    preds = EXAMPLES / "predictions" / "sloppy-gen"
    out = tmp_path / "out"
    plain = run_scoring(preds, REFS, out, STRING_ONLY)
    assert all("critique" not in r for r in plain.rows)
    crit = run_scoring(preds, REFS, out, STRING_ONLY, critique=True)
    assert crit.n_reused == 0  # rows without critiques cannot stand
    by_id = {r["id"]: r for r in crit.rows}
    vit = by_id["vit"]["critique"]
    assert vit["passed"] is False
    ops = {i["op"] for i in vit["instructions"]}
    assert {"reverse_edge", "remove_node"} <= ops
    assert run_scoring(preds, REFS, out, STRING_ONLY, critique=True).n_reused == 5
