"""Bring-your-own-images layouts (issue 20): flat, several samples per prompt (<id>/<k>, <id>_s<k>)
scored per sample and averaged per item with the spread, other folders warned about."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from sciflow.config import load_config
from sciflow.runs.compare import compare_runs
from sciflow.runs.items import pair_items
from sciflow.runs.scoring import run_scoring
from sciflow.runs.summary import read_summary

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
REFS = EXAMPLES / "references"
CAREFUL = EXAMPLES / "predictions" / "careful-gen"
SLOPPY = EXAMPLES / "predictions" / "sloppy-gen"
FAST = load_config(overrides={"matching": {"embedder": "none"}})


def _flat_scores(pred: Path, stem: str) -> dict:
    rows = run_scoring(pred, REFS, None, FAST).rows
    return next(r for r in rows if r["id"] == stem)["scores"]


@pytest.fixture
def layouts(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "folder"  # vit: <id>/<k>.json, two samples; the others flat
    shutil.copytree(CAREFUL, folder)
    (folder / "vit.json").unlink()
    (folder / "vit").mkdir()
    shutil.copy(CAREFUL / "vit.json", folder / "vit" / "1.json")
    shutil.copy(SLOPPY / "vit.json", folder / "vit" / "2.json")
    suffix = tmp_path / "suffix"  # vit_s1.json, vit_s2.json
    shutil.copytree(folder, suffix)
    shutil.rmtree(suffix / "vit")
    shutil.copy(CAREFUL / "vit.json", suffix / "vit_s1.json")
    shutil.copy(SLOPPY / "vit.json", suffix / "vit_s2.json")
    return {"folder": folder, "suffix": suffix}


@pytest.mark.parametrize("layout", ["folder", "suffix"])
def test_samples_are_scored_each_and_averaged(layouts, layout, tmp_path):
    pred = layouts[layout]
    items, orphans = pair_items(pred, REFS)
    vit = next(i for i in items if i.id == "vit")
    assert vit.prediction is None and [k for k, _ in vit.samples] == ["1", "2"] and orphans == []
    out = tmp_path / "run"
    result = run_scoring(pred, REFS, out, FAST)
    row = next(r for r in result.rows if r["id"] == "vit")
    good, bad = _flat_scores(CAREFUL, "vit"), _flat_scores(SLOPPY, "vit")
    assert row["scores"]["graph"] == pytest.approx((good["graph"] + bad["graph"]) / 2)
    s = row["samples"]
    assert s["n"] == 2 and s["ids"] == ["vit~1", "vit~2"]
    assert s["min"]["graph"] == min(good["graph"], bad["graph"])
    assert s["max"]["graph"] == max(good["graph"], bad["graph"])
    assert s["sd"]["graph"] == pytest.approx(abs(good["graph"] - bad["graph"]) / 2 ** 0.5)
    assert result.summary["n_items"] == 5 and result.summary["samples"]["items"] == 1
    # results.jsonl keeps one row per sample (resumable); every reader merges them back
    logged = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in logged if r.get("sample_of")) == ["vit~1", "vit~2"]
    again = read_summary(out)
    assert again["means"] == result.summary["means"] and again["samples"] == result.summary["samples"]
    assert compare_runs(out, out)["n_common"] == 5
    rerun = run_scoring(pred, REFS, out, FAST)
    assert rerun.n_reused == 6 and rerun.summary["means"] == result.summary["means"]


def test_other_folders_are_warned_about(tmp_path, caplog):
    pred = tmp_path / "pred"
    shutil.copytree(CAREFUL, pred)
    (pred / "drafts").mkdir()
    shutil.copy(CAREFUL / "ppo.json", pred / "drafts" / "ppo.json")
    with caplog.at_level(logging.WARNING, logger="sciflow.runs.scoring"):
        result = run_scoring(pred, REFS, None, FAST)
    assert "drafts/" in result.summary["unreferenced_predictions"]
    assert "is a folder whose name is no reference id" in caplog.text and "<id>/<k>.png" in caplog.text
