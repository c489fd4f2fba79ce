"""`sciflow summarize`: runs against different reference sets or metric versions are refused
(one line, rc != 0) unless --allow-mixed; differing config hashes and fallbacks are marked."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from sciflow.cli import main
from sciflow.config import load_config
from sciflow.runs.scoring import run_scoring

REFS_A = {"dir": "/refs/a", "n": 2, "sha256": "a" * 64}
REFS_B = {"dir": "/refs/b", "n": 3, "sha256": "b" * 64}


def results_folder(path: Path, *, config_hash: str = "c" * 64, fallbacks: tuple[str, ...] = (),
                   metric_version: int | None = 2, references: dict | None = REFS_A, graph: float = 1.0) -> Path:
    """A results folder as `sciflow score` writes it (two rows: one scored, one crashed)."""
    path.mkdir(parents=True)
    rows = [{"id": "a", "status": "ok", "error": None, "meta": {"difficulty": "easy"}, "scores": {"graph": graph}},
            {"id": "b", "status": "prediction_error", "error": "worker crashed", "meta": {}, "scores": None}]
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest: dict = {"config_hash": config_hash, "fallbacks": list(fallbacks)}
    if metric_version is not None:
        manifest["metric_version"] = metric_version
    if references is not None:
        manifest["references"] = references
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


def leaderboard(path: Path) -> dict[str, dict[str, str]]:
    with path.open() as f:
        return {r["run"]: r for r in csv.DictReader(f)}


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error:" in line]


def test_mixed_reference_sets_are_refused_in_one_line(tmp_path, capsys):
    a = results_folder(tmp_path / "gen-a", references=REFS_A)
    b = results_folder(tmp_path / "gen-b", references=REFS_B)
    csv_path = tmp_path / "lb.csv"
    rc = main(["summarize", str(a), str(b), "-o", str(csv_path)])
    err = capsys.readouterr().err
    assert rc != 0
    assert "Traceback" not in err
    [line] = error_lines(err)
    assert "reference set differs" in line and "gen-a" in line and "gen-b" in line
    assert "aaaaaaaaaaaa (2 references)" in line and "bbbbbbbbbbbb (3 references)" in line
    assert "--allow-mixed" in line
    assert not csv_path.exists()


def test_allow_mixed_tabulates_and_marks_the_table(tmp_path, capsys):
    a = results_folder(tmp_path / "gen-a", references=REFS_A)
    b = results_folder(tmp_path / "gen-b", references=REFS_B)
    csv_path = tmp_path / "lb.csv"
    assert main(["summarize", str(a), str(b), "--allow-mixed", "-o", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert "MIXED: reference set differ" in out
    assert "reference set differs" in out  # the footnote
    lb = leaderboard(csv_path)
    assert (lb["gen-a"]["refs"], lb["gen-b"]["refs"]) == ("a" * 12, "b" * 12 + "*")
    # one perfect item and one crashed item: graph 0.5 over n = 2
    assert lb["gen-a"]["graph"] == "0.500000" and lb["gen-a"]["n_averaged"] == "2"


def test_different_metric_versions_are_refused(tmp_path, capsys):
    a = results_folder(tmp_path / "v1", metric_version=1)
    b = results_folder(tmp_path / "v2", metric_version=2)
    assert main(["summarize", str(a), str(b)]) != 0
    [line] = error_lines(capsys.readouterr().err)
    assert "metric version differs: v1: 1; v2: 2" in line
    assert main(["summarize", str(a), str(b), "--allow-mixed"]) == 0


def test_a_run_without_fingerprint_is_unknown_and_not_mixed_with_a_known_one(tmp_path, capsys):
    old = results_folder(tmp_path / "old", references=None, metric_version=None)
    new = results_folder(tmp_path / "new")
    assert main(["summarize", str(old), str(new)]) != 0
    err = capsys.readouterr().err
    assert "warning:" in err and "old: no reference set and no metric version recorded" in err
    [line] = error_lines(err)
    assert "reference set differs: old: unknown; new: aaaaaaaaaaaa (2 references)" in line
    assert "metric version differs: old: unknown; new: 2" in line
    # two old runs: warned about, but nothing known differs
    old2 = results_folder(tmp_path / "old2", references=None, metric_version=None)
    assert main(["summarize", str(old), str(old2)]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("warning:") == 2 and not error_lines(captured.err)


def test_differing_config_hashes_and_fallbacks_are_marked(tmp_path, capsys):
    a = results_folder(tmp_path / "gen-a", config_hash="1" * 64, fallbacks=("embedder",))
    b = results_folder(tmp_path / "gen-b", config_hash="2" * 64)
    c = results_folder(tmp_path / "gen-c", config_hash="1" * 64, fallbacks=("embedder",))
    csv_path = tmp_path / "lb.csv"
    assert main(["summarize", str(a), str(b), str(c), "-o", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert "MIXED" not in out
    # the config column of the terminal table (7 hex digits there, 12 in the CSV)
    table_cells = [c.strip() for line in out.splitlines() if "gen-" in line and "│" in line
                   for c in line.split("│")]
    assert table_cells.count("1" * 7) == 2 and table_cells.count("2" * 7 + "*") == 1
    assert "none*" in table_cells
    footnote = [line for line in out.splitlines() if line.startswith("* differs from the first run (gen-a)")]
    assert len(footnote) == 1
    assert "config hash differs: gen-a, gen-c: 111111111111; gen-b: 222222222222" in footnote[0]
    assert "fallbacks differ: gen-a, gen-c: embedder; gen-b: none" in footnote[0]
    lb = leaderboard(csv_path)
    assert [lb[r]["config"] for r in ("gen-a", "gen-b", "gen-c")] == ["1" * 12, "2" * 12 + "*", "1" * 12]
    assert [lb[r]["fallbacks"] for r in ("gen-a", "gen-b", "gen-c")] == ["embedder", "none*", "embedder"]


def test_identical_provenance_has_no_marks(tmp_path, capsys):
    a = results_folder(tmp_path / "gen-a")
    b = results_folder(tmp_path / "gen-b", graph=0.5)
    csv_path = tmp_path / "lb.csv"
    assert main(["summarize", str(a), str(b), "-o", str(csv_path)]) == 0
    assert "differs" not in capsys.readouterr().out
    lb = leaderboard(csv_path)
    assert all("*" not in v for r in lb.values() for v in r.values())
    assert lb["gen-b"]["graph"] == "0.250000"  # (0.5 + 0) / 2


@pytest.fixture
def two_reference_sets(tmp_path) -> tuple[Path, Path, Path]:
    chain = {"id": "x", "nodes": [{"id": n, "label": n} for n in "ABC"],
             "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "C"}]}
    preds, refs_a, refs_b = tmp_path / "preds", tmp_path / "refs_a", tmp_path / "refs_b"
    for d in (preds, refs_a, refs_b):
        d.mkdir()
    (preds / "one.json").write_text(json.dumps(chain))
    (refs_a / "one.json").write_text(json.dumps(chain))
    (refs_b / "one.json").write_text(json.dumps({**chain, "edges": chain["edges"][:1]}))  # same stem, other bytes
    return preds, refs_a, refs_b


def test_scored_runs_against_different_references_are_refused(two_reference_sets, tmp_path, capsys):
    preds, refs_a, refs_b = two_reference_sets
    config = load_config(overrides={"matching": {"embedder": "none"}})
    run_scoring(preds, refs_a, tmp_path / "on-a", config)
    run_scoring(preds, refs_a, tmp_path / "on-a-again", config)
    run_scoring(preds, refs_b, tmp_path / "on-b", config)
    assert main(["summarize", str(tmp_path / "on-a"), str(tmp_path / "on-a-again")]) == 0
    capsys.readouterr()
    assert main(["summarize", str(tmp_path / "on-a"), str(tmp_path / "on-b")]) != 0
    [line] = error_lines(capsys.readouterr().err)
    assert "reference set differs: on-a:" in line and "; on-b:" in line
