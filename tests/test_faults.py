"""Process and disk faults with real processes: SIGKILL of the run or of one worker, two runs on
one folder, a full disk, workers that outlive their parent; and the output folder's checks.

Every test is bounded in time and kills what it started. Graph (JSON) predictions keep them
fast; a large graph (a few thousand nodes, seconds to score) is the item that is "in flight"."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sciflow.config import load_config
from sciflow.runs import files as files_mod
from sciflow.runs.files import LOCK_NAME, OutputBusy, OutputError, OutputLock, write_atomic
from sciflow.runs.items import GRAPH_KEYS, TEXT_KEYS, Item, pair_items
from sciflow.runs.results import read_log
from sciflow.runs.scoring import _finish_row, run_scoring
from sciflow.runs.worker import error_row

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REFS = EXAMPLES / "references"
PREDS = EXAMPLES / "predictions" / "careful-gen"
STRING_ONLY = load_config(overrides={"matching": {"embedder": "none"}})
OTHER = load_config(overrides={"matching": {"embedder": "none", "threshold": 0.7}})
CONFIG_TOML = '[matching]\nembedder = "none"\n'
BIG = 2000  # nodes of the slow item: a second or two to score


def big_graph(gid: str, n: int, edges: slice = slice(None)) -> str:
    nodes = [{"id": f"n{i}", "label": f"component number {i} of the big model"} for i in range(n)]
    chain = [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(n - 1)]
    return json.dumps({"id": gid, "nodes": nodes, "edges": chain[edges]})


def dataset(tmp_path: Path, big: tuple[str, ...] = ("m_big",), n: int = BIG) -> tuple[Path, Path]:
    """careful-gen against the example references, plus slow items ``big``."""
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    shutil.copytree(REFS, refs)
    shutil.copytree(PREDS, preds)
    for name in big:
        (refs / f"{name}.json").write_text(big_graph(name, n))
        (preds / f"{name}.json").write_text(big_graph(name, n, slice(0, n // 2)))
    return preds, refs


def score_cmd(preds: Path, refs: Path, out: Path, cfg: Path, jobs: int = 1) -> list[str]:
    return [sys.executable, "-m", "sciflow.cli", "score", str(preds), "--refs", str(refs), "--out", str(out),
            "--config", str(cfg), "--no-cache", "--jobs", str(jobs)]


def wait_for(cond, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the process ended (rc {proc.returncode}) before {what}")
        time.sleep(0.02)
    pytest.fail(f"timed out waiting for {what}")


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie nobody reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # pragma: no cover - no /proc
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def worker_pids(parent: int) -> list[int]:
    """PIDs of the multiprocessing workers (spawn_main) whose parent is ``parent``."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text().rsplit(")", 1)[1].split()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[1]) == parent and b"spawn_main" in cmd:
            out.append(int(d.name))
    return out


@contextlib.contextmanager
def reaped(proc: subprocess.Popen):
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


linux_only = pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs /proc (Linux)")


# ------------------------------------------------------------------ SIGKILL of the main process
@linux_only
def test_sigkill_of_the_run_then_rerun_gives_every_item_once_byte_identical(tmp_path):
    preds, refs = dataset(tmp_path)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(CONFIG_TOML)
    out = tmp_path / "out"
    log = out / "results.jsonl"
    with reaped(subprocess.Popen(score_cmd(preds, refs, out, cfg), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)) as proc:
        # items go in id order: diffusion_policy (fast), then m_big (seconds): kill during m_big
        wait_for(lambda: log.is_file() and len(read_log(log)) >= 1, 60, "the first row", proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    before = read_log(log)
    assert 1 <= len(before) < 6, "the run was not killed midway"
    assert not (out / "summary.json").exists()  # an unfinished run has no summary
    done = subprocess.run(score_cmd(preds, refs, out, cfg), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} items reused" in done.stderr
    rows = read_log(log)
    assert [r["id"] for r in rows] == sorted(p.stem for p in refs.glob("*.json"))  # every item once
    clean = run_scoring(preds, refs, tmp_path / "clean", load_config(cfg))
    assert log.read_bytes() == (tmp_path / "clean" / "results.jsonl").read_bytes()
    assert json.loads((out / "summary.json").read_text())["means"] == clean.summary["means"]
    assert sorted(p.name for p in out.iterdir()) == ["leaderboard.csv", "manifest.json", "results.jsonl",
                                                     "summary.json"]  # no lock, no temp file left


# ------------------------------------------------------------------ SIGKILL of one worker
def _kill_worker_running(item_id: str, times: int, box: dict, stop: threading.Event) -> None:
    """Kill the worker that runs ``item_id``, ``times`` times (a new pid each time)."""
    killed: list[int] = []
    deadline = time.monotonic() + 60
    while len(killed) < times and not stop.is_set() and time.monotonic() < deadline:
        ex = box.get("ex")
        pool = getattr(ex, "pool", None)
        for pid, key in (pool.running() if pool else {}).items():
            if key == item_id and pid not in killed:
                time.sleep(0.2)  # let it get into the item
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        time.sleep(0.01)
    box["killed"] = killed


def _run_killing(preds, refs, out, monkeypatch, times):
    import sciflow.runs.scoring as scoring

    box: dict = {}
    real = scoring.make_executor

    def capture(*a, **k):
        box["ex"] = real(*a, **k)
        return box["ex"]

    monkeypatch.setattr(scoring, "make_executor", capture)
    stop = threading.Event()
    killer = threading.Thread(target=_kill_worker_running, args=("m_big", times, box, stop), daemon=True)
    killer.start()
    try:
        res = run_scoring(preds, refs, out, STRING_ONLY, jobs=2, threads=1)
    finally:
        stop.set()
        killer.join(timeout=10)
    assert len(box["killed"]) == times
    return res, box["ex"]


@linux_only
def test_sigkill_of_one_worker_retries_its_item_and_the_run_finishes(tmp_path, monkeypatch, caplog):
    preds, refs = dataset(tmp_path)
    res, ex = _run_killing(preds, refs, tmp_path / "out", monkeypatch, times=1)
    assert ex.pool.retried == 1
    assert "died while running m_big: the worker process was killed by SIGKILL" in caplog.text
    assert "retrying it once" in caplog.text
    clean = run_scoring(preds, refs, tmp_path / "clean", STRING_ONLY)
    assert all(r["status"] == "ok" for r in res.rows)
    assert (tmp_path / "out" / "results.jsonl").read_bytes() == (tmp_path / "clean" / "results.jsonl").read_bytes()
    assert res.summary == {**clean.summary, "run": "out"}


@linux_only
def test_a_worker_killed_twice_fails_only_its_item_with_its_file_name(tmp_path, monkeypatch):
    preds, refs = dataset(tmp_path)
    res, _ex = _run_killing(preds, refs, tmp_path / "out", monkeypatch, times=2)
    rows = {r["id"]: r for r in res.rows}
    big = rows.pop("m_big")
    assert big["status"] == "prediction_error"
    assert big["error"].startswith(f"worker crashed while scoring {preds / 'm_big.json'}: ")
    assert "killed by SIGKILL" in big["error"] and "tried 2 times" in big["error"]
    assert big["scores"] == dict.fromkeys(GRAPH_KEYS + TEXT_KEYS, 0.0)
    assert big["prediction"] == str(preds / "m_big.json") and big["config_hash"] is None
    assert all(r["status"] == "ok" for r in rows.values())
    s = res.summary
    assert s["n_prediction_errors"] == 1 and s["means"]["n"] == 6
    assert s["errors"] == [{"id": "m_big", "status": "prediction_error", "error": big["error"]}]
    # the crashed row is not reused: a rerun scores the item again
    again = run_scoring(preds, refs, tmp_path / "out", STRING_ONLY)
    assert again.n_reused == 5 and {r["id"]: r for r in again.rows}["m_big"]["status"] == "ok"


def test_the_pool_fails_only_the_task_whose_worker_dies_and_reports_raising_tasks():
    from sciflow.runs.pool import ExecutorError, WorkerPool

    pool = WorkerPool(2)
    try:
        tasks = [("exit", (3,))]  # os._exit(3): the worker dies, then the one running the retry
        got = {key: (value, failure) for key, value, failure in pool.map_unordered(os._exit, tasks)}
        assert got["exit"][0] is None and got["exit"][1].crashed
        assert got["exit"][1].message == "the worker process exited with code 3; tried 2 times"
        got = {k: (v, f) for k, v, f in pool.map_unordered(int, [("bad", ("x",)), ("one", ("1",)), ("two", ("2",))])}
        assert got["one"] == (1, None) and got["two"] == (2, None)
        assert not got["bad"][1].crashed and got["bad"][1].message.startswith("ValueError: invalid literal")
        assert pool.call(abs, -4) == 4
    finally:
        pool.close()
    assert pool.pids() == []
    broken = WorkerPool(1, os.chdir, ("/no/such/folder",))
    try:
        with pytest.raises(ExecutorError, match=r"^a worker process could not start: FileNotFoundError"):
            broken.call(abs, 1)
    finally:
        broken.close()


def test_a_crashed_row_gets_zeros_its_meta_or_reference_error(tmp_path):
    ref = tmp_path / "a.json"
    ref.write_text(json.dumps({"id": "a", "nodes": [{"id": "x", "label": "X"}], "edges": [],
                               "meta": {"area": "robotics", "difficulty": "hard"}}))
    item = Item("a", ref, tmp_path / "a.png")
    row = _finish_row(error_row(item, "worker crashed while scoring a.png: boom"), item)
    assert row["status"] == "prediction_error" and row["meta"] == {"area": "robotics", "difficulty": "hard"}
    assert set(row["scores"]) == {*GRAPH_KEYS, *TEXT_KEYS, "image", "semantic_consistency",
                                  "perceptual_similarity", "visual_flow", "overall"}
    assert set(row["scores"].values()) == {0.0}
    broken = tmp_path / "b.json"
    broken.write_text("[" * 100_000 + "]" * 100_000)
    item = Item("b", broken, tmp_path / "b.json")
    row = _finish_row(error_row(item, "worker crashed while scoring b.json: boom"), item)
    assert row["status"] == "reference_error" and str(broken) in row["error"] and row["scores"] is None


def test_a_broken_reference_is_a_reference_error_whatever_the_error(tmp_path):
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    refs.mkdir()
    preds.mkdir()
    (refs / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (preds / "deep.json").write_text((REFS / "vit.json").read_text())
    (refs / "vit.json").write_text((REFS / "vit.json").read_text())
    (preds / "vit.json").write_text("[" * 100_000 + "]" * 100_000)
    rows = {r["id"]: r for r in run_scoring(preds, refs, None, STRING_ONLY).rows}
    assert rows["deep"]["status"] == "reference_error" and rows["deep"]["scores"] is None
    assert rows["vit"]["status"] == "prediction_error" and str(preds / "vit.json") in rows["vit"]["error"]
    assert set(rows["vit"]["scores"].values()) == {0.0}


# ------------------------------------------------------------------ workers die with their parent
@linux_only
def test_score_workers_exit_when_the_run_is_sigkilled(tmp_path):
    preds, refs = dataset(tmp_path, big=("a_big", "b_big"), n=5000)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(CONFIG_TOML)
    out = tmp_path / "out"
    with reaped(subprocess.Popen(score_cmd(preds, refs, out, cfg, jobs=2), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)) as proc:
        # the manifest is written once a worker is ready; then both workers start on a big item
        wait_for(lambda: (out / "manifest.json").is_file() and len(worker_pids(proc.pid)) == 2, 60,
                 "two workers", proc)
        time.sleep(0.5)
        workers = worker_pids(proc.pid)
        assert all(alive(p) for p in workers)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while any(alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [p for p in workers if alive(p)]
        for p in left:
            os.kill(p, signal.SIGKILL)
        assert not left, f"workers {left} outlived their killed parent"


POOL_SCRIPT = """
import sys, threading, time
from sciflow.runs.pool import WorkerPool

if __name__ == "__main__":
    pool = WorkerPool(2, die_with_parent=sys.argv[1] == "prctl")
    it = pool.map_unordered(time.sleep, [(i, (120,)) for i in range(2)])
    threading.Thread(target=lambda: list(it), daemon=True).start()
    deadline = time.monotonic() + 60
    while len(pool.running()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    print(" ".join(map(str, pool.running())), ";".join(s.info["parent_death"] for s in pool._slots), flush=True)
    time.sleep(120)
"""


@linux_only
@pytest.mark.parametrize("how", ["prctl", "poll"])
def test_busy_workers_exit_when_their_parent_is_sigkilled(tmp_path, how):
    """prctl(PR_SET_PDEATHSIG) on Linux; the thread polling os.getppid() everywhere (tested with
    prctl off)."""
    script = tmp_path / "pool.py"
    script.write_text(POOL_SCRIPT)
    with reaped(subprocess.Popen([sys.executable, str(script), how], stdout=subprocess.PIPE, text=True)) as proc:
        ready, _, _ = select.select([proc.stdout], [], [], 90)
        assert ready, "the pool script printed nothing"
        line = proc.stdout.readline().split()
        assert len(line) == 3, "the pool did not start"
        workers, mechanisms = [int(p) for p in line[:2]], line[2]
        expected = "prctl+poll" if how == "prctl" else "poll"
        assert mechanisms == f"{expected};{expected}"
        assert all(alive(p) for p in workers)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 3
        while any(alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.02)
        left = [p for p in workers if alive(p)]
        for p in left:
            os.kill(p, signal.SIGKILL)
        assert not left, f"workers {left} outlived their killed parent ({how})"


# ------------------------------------------------------------------ one run per output folder
@linux_only
def test_a_second_run_on_the_same_out_is_refused_at_once_naming_the_holder(tmp_path, monkeypatch):
    import sciflow.runs.scoring as scoring

    # six slow items keep the first run busy while a second process starts (it takes seconds
    # to import on a loaded machine): the second must find the lock held, not a finished run
    preds, refs = dataset(tmp_path, big=tuple(f"m_big{k}" for k in range(6)), n=3000)
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(CONFIG_TOML)
    out = tmp_path / "out"
    lock = out / LOCK_NAME
    with reaped(subprocess.Popen(score_cmd(preds, refs, out, cfg), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)) as first:
        wait_for(lambda: lock.is_file() and lock.read_text().strip() == str(first.pid), 60, "the lock", first)
        with monkeypatch.context() as m:
            m.setattr(scoring, "make_executor", lambda *a, **k: pytest.fail("a model was loaded"))
            t0 = time.monotonic()
            with pytest.raises(OutputBusy) as info:
                run_scoring(preds, refs, out, OTHER)
            assert time.monotonic() - t0 < 5
        assert info.value.pid == first.pid
        message = str(info.value)
        assert "\n" not in message and f"pid {first.pid}" in message and str(out) in message
        second = subprocess.run(score_cmd(preds, refs, out, cfg), capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert f"pid {first.pid}" in " ".join(second.stderr.split()) and "Traceback" not in second.stderr
        _, err = first.communicate(timeout=120)
        assert first.returncode == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    summary = json.loads((out / "summary.json").read_text())
    rows = read_log(out / "results.jsonl")
    assert manifest["config_hash"] == summary["config_hash"] == STRING_ONLY.hash
    assert {r["config_hash"] for r in rows} == {STRING_ONLY.hash} and len(rows) == 11
    assert not lock.exists()


def test_the_lock_is_exclusive_and_released(tmp_path):
    with OutputLock(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text() == f"{os.getpid()}\n"
        # flock locks belong to the open file: a second open in this process conflicts too
        with pytest.raises(OutputBusy, match=rf"in use by another sciflow run \(pid {os.getpid()}\)"):
            OutputLock(tmp_path).acquire()
    assert not (tmp_path / LOCK_NAME).exists()
    with OutputLock(tmp_path):  # free again
        pass


def test_out_naming_an_existing_file_fails_before_any_model_loads(tmp_path, monkeypatch):
    import sciflow.runs.scoring as scoring
    from sciflow.runs.parse_batch import parse_to_dir

    monkeypatch.setattr(scoring, "make_executor", lambda *a, **k: pytest.fail("a model was loaded"))
    f = tmp_path / "out.txt"
    f.write_text("not a folder")
    with pytest.raises(OutputError, match=r"^output folder .*out\.txt is an existing file, not a folder$"):
        run_scoring(PREDS, REFS, f, STRING_ONLY)
    with pytest.raises(OutputError, match="cannot create output folder"):
        run_scoring(PREDS, REFS, f / "sub", STRING_ONLY)
    with pytest.raises(OutputError, match="is an existing file"):
        parse_to_dir([], f, STRING_ONLY)
    assert f.read_text() == "not a folder"


# ------------------------------------------------------------------ a full disk
def test_write_atomic_leaves_the_old_file_and_no_temp_on_a_full_disk(tmp_path, monkeypatch):
    target = tmp_path / "summary.json"
    target.write_text("old")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files_mod.os, "fsync", full)
    with pytest.raises(OutputError, match=rf"^disk full writing {target}$"):
        write_atomic(target, "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["summary.json"]
    monkeypatch.setattr(files_mod.os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EACCES, "Denied")))
    with pytest.raises(OutputError, match=rf"^cannot write {target}: Denied$"):
        write_atomic(target, "new")


def test_a_full_disk_midway_stops_the_run_in_one_line_and_the_rerun_finishes(tmp_path, monkeypatch):
    import sciflow.runs.results as results

    out = tmp_path / "out"
    run_scoring(PREDS, REFS, out, STRING_ONLY)
    calls = {"n": 0}
    real = results.os.fsync

    def fsync(fd):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    with monkeypatch.context() as m:
        m.setattr(results.os, "fsync", fsync)
        with pytest.raises(OutputError, match=rf"^disk full writing {out / 'results.jsonl'}$"):
            run_scoring(PREDS, REFS, out, OTHER)
    # an unfinished run of the new config: no summary or leaderboard of the old one beside it
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "results.jsonl"]
    assert json.loads((out / "manifest.json").read_text())["config_hash"] == OTHER.hash
    res = run_scoring(PREDS, REFS, out, OTHER)
    assert res.n_reused == 2  # the rows flushed before the disk filled
    run_scoring(PREDS, REFS, tmp_path / "clean", OTHER)
    assert (out / "results.jsonl").read_bytes() == (tmp_path / "clean" / "results.jsonl").read_bytes()


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MiB tmpfs (root and a working ``mount`` only)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root and mount")
    disk = tmp_path / "disk"
    disk.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True,
                       text=True, timeout=30)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=30)


def _consistent(out: Path) -> None:
    """No temp file; summary and leaderboard only beside the manifest and rows of their own run."""
    names = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    assert not [n for n in names if n.endswith(".tmp")], names
    if "summary.json" in names:
        summary = json.loads((out / "summary.json").read_text())
        manifest = json.loads((out / "manifest.json").read_text())
        assert summary["config_hash"] == manifest["config_hash"]
        assert {r["config_hash"] for r in read_log(out / "results.jsonl")} == {manifest["config_hash"]}
    else:
        assert "leaderboard.csv" not in names


def test_a_real_full_disk_at_every_point_gives_one_line_and_a_consistent_folder(small_disk, tmp_path):
    """A run with a new config on a folder holding a finished run, with 0, 1, 2 ... pages free,
    until it fits: each failure is one line, leaves no temp file and no summary of the old
    config beside the new manifest; with room again the rerun finishes, byte-identical."""
    refs, preds, few = tmp_path / "refs", tmp_path / "preds", tmp_path / "few"
    for d in (refs, preds, few):
        d.mkdir()
    for k in range(8):  # 40 items: a results log of about 30 pages
        for p in REFS.glob("*.json"):
            (refs / f"{p.stem}_{k}.json").write_bytes(p.read_bytes())
            (preds / f"{p.stem}_{k}.json").write_bytes((PREDS / p.name).read_bytes())
            if k == 0:
                (few / f"{p.stem}_{k}.json").write_bytes(p.read_bytes())
    out = small_disk / "out"
    run_scoring(preds, few, out, STRING_ONLY)  # a finished run of 5 items, another config
    saved = tmp_path / "saved"
    shutil.copytree(out, saved)
    clean = run_scoring(preds, refs, tmp_path / "clean", OTHER)
    clean_bytes = (tmp_path / "clean" / "results.jsonl").read_bytes()
    filler = small_disk / "filler"
    stages: set[str] = set()
    for free_pages in range(0, 120, 3):
        shutil.rmtree(out)
        filler.unlink(missing_ok=True)
        shutil.copytree(saved, out)
        st = os.statvfs(small_disk)
        filler.write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - free_pages * 4096))
        try:
            run_scoring(preds, refs, out, OTHER)
        except OutputError as exc:
            message = str(exc)
            assert "\n" not in message and message.startswith(f"disk full writing {out}/"), message
            name = Path(message.removeprefix("disk full writing ")).name
            if name == "results.jsonl":
                name += " (log)" if len(read_log(out / "results.jsonl")) < 40 else " (final)"
            stages.add(name)
            _consistent(out)
        else:
            _consistent(out)
            break
        filler.unlink()
        res = run_scoring(preds, refs, out, OTHER)  # room again: the rerun finishes
        assert (out / "results.jsonl").read_bytes() == clean_bytes
        assert res.summary["means"] == clean.summary["means"]
        _consistent(out)
    else:
        pytest.fail("the run never fitted")
    assert (out / "results.jsonl").read_bytes() == clean_bytes
    assert {".sciflow.lock", "results.jsonl (log)", "results.jsonl (final)"} <= stages, stages


@pytest.mark.parametrize("name", ["manifest.json", "results.jsonl", "summary.json", "leaderboard.csv"])
def test_a_full_disk_on_each_finished_file_gives_its_name_and_a_consistent_folder(tmp_path, monkeypatch, name):
    out = tmp_path / "out"
    run_scoring(PREDS, REFS, out, STRING_ONLY)
    real = files_mod.os.replace

    def replace(src, dst):
        if Path(dst).name == name:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    with monkeypatch.context() as m:
        m.setattr(files_mod.os, "replace", replace)
        with pytest.raises(OutputError, match=rf"^disk full writing {out / name}$"):
            run_scoring(PREDS, REFS, out, OTHER)
    _consistent(out)
    run_scoring(PREDS, REFS, out, OTHER)
    run_scoring(PREDS, REFS, tmp_path / "clean", OTHER)
    assert (out / "results.jsonl").read_bytes() == (tmp_path / "clean" / "results.jsonl").read_bytes()
    _consistent(out)


# ------------------------------------------------------------------ clashing names
def test_two_predictions_with_one_stem_use_the_documented_precedence_and_say_so(tmp_path):
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    refs.mkdir()
    preds.mkdir()
    for stem in ("x", "y"):
        (refs / f"{stem}.json").write_text((REFS / "vit.json").read_text())
    (preds / "x.png").write_bytes(b"png")
    (preds / "x.json").write_text("{}")
    (preds / "y.png").write_bytes(b"png")
    (preds / "y.bmp").write_bytes(b"bmp")
    items, _ = pair_items(preds, refs)
    x, y = items
    assert x.prediction == preds / "x.json" and y.prediction == preds / "y.bmp"
    assert x.notes == ["several predictions for 'x': x.json, x.png; using x.json (a .json before an image, "
                       "then by file name)"]
    assert "y.bmp, y.png; using y.bmp" in y.notes[0]


def test_parse_keeps_both_outputs_when_inputs_share_a_stem(tmp_path, monkeypatch, caplog):
    import sciflow.runs.parse_batch as pb
    from sciflow.format.graph import DiagramGraph

    class FakeParser:
        def fingerprint(self):
            return {"fake": 1}

        def __call__(self, path, item_id, debug_dir=None):
            g = DiagramGraph.from_dict({"id": item_id, "nodes": [{"id": "a", "label": path.suffix}], "edges": []})
            return type("R", (), {"graph": g, "backends": {}})()

    monkeypatch.setattr(pb, "_init_worker", lambda *a: setattr(pb, "_WORKER", FakeParser()))
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    for name in ("x.png", "x.bmp", "z.png", "sub/z.png", "w.png"):
        (src / name).write_bytes(b"img")
    images = pb.collect_images([src, src / "sub", src / "w.png"])  # w.png given twice: parsed once
    assert [p.relative_to(src).as_posix() for p in images] == ["w.png", "x.bmp", "x.png", "z.png", "sub/z.png"]
    out = tmp_path / "out"
    outcomes = pb.parse_to_dir(images, out, STRING_ONLY)
    assert sorted(p.name for p in out.iterdir()) == ["w.json", "x.bmp.json", "x.png.json", "z.png-2.json",
                                                     "z.png.json"]
    assert json.loads((out / "x.bmp.json").read_text())["nodes"][0]["label"] == ".bmp"
    by_name = {o.path.relative_to(src).as_posix(): o for o in outcomes}
    assert by_name["x.png"].output == out / "x.png.json" and by_name["w.png"].notes == []
    assert "2 inputs share the stem 'x'" in by_name["x.png"].notes[0] and "x.bmp.json" in by_name["x.png"].notes[0]
    assert "share the stem 'x'" in caplog.text
    assert pb.output_ids([Path("a/X.png"), Path("b/x.png")])[0] == ["X.png", "x.png-2"]


def test_a_folder_named_like_a_prediction_is_reported_as_a_folder(tmp_path):
    from sciflow.runs.scoring import run_scoring

    preds = tmp_path / "preds"
    (preds / "vit.json").mkdir(parents=True)
    for p in (EXAMPLES / "predictions" / "careful-gen").glob("*.json"):
        if p.name != "vit.json":
            shutil.copy(p, preds / p.name)
    res = run_scoring(preds, EXAMPLES / "references", None, STRING_ONLY)
    row = next(r for r in res.rows if r["id"] == "vit")
    assert row["status"] == "missing_prediction"
    assert row["error"] == f"{preds / 'vit.json'} is a folder, not a prediction file"
