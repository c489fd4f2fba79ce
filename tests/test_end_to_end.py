"""Render -> parse -> score on all three levels, and what the report shows of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sciflow.bench.generators import get_generator, run_generator
from sciflow.config import load_config
from sciflow.runs.scoring import run_scoring
from sciflow.views.report import build_report

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    out = tmp_path_factory.mktemp("gv")
    run_generator(get_generator("graphviz"), EXAMPLES / "references", out)
    return out


@pytest.mark.slow
def test_a_perfect_graphviz_render_scores_one_on_graph_level_and_near_one_on_text(rendered, tmp_path):
    res = run_scoring(rendered, EXAMPLES / "references", tmp_path / "out", load_config(),
                      cache_dir=tmp_path / "cache", critique=True)
    for row in res.rows:
        s = row["scores"]
        assert row["status"] == "ok"
        assert s["graph"] == 1.0, row["id"]
        assert s["text"] >= 0.9, row["id"]
        assert 0.0 <= s["image"] <= 1.0 and 0.0 <= s["overall"] <= 1.0
        w = load_config().overall
        assert s["overall"] == pytest.approx(w.graph * s["graph"] + w.text * s["text"] + w.image * s["image"])
        assert row["image_level"]["partial"] is True  # no source figure beside the references
        assert row["critique"]["passed"] is True
        assert (tmp_path / "out" / row["parsed_graph"]).is_file()
    # the image level ran on labelled substitutes here, and says so everywhere
    assert {"image_semantic", "image_perceptual"} <= set(res.manifest["fallbacks"])
    html = build_report([tmp_path / "out"], tmp_path / "report.html").read_text()
    assert "FALLBACK" in html and "critique: pass" in html


def test_report_shows_failed_critiques_with_instructions(tmp_path):
    cfg = load_config(overrides={"matching": {"embedder": "none"}})
    run_scoring(EXAMPLES / "predictions" / "sloppy-gen", EXAMPLES / "references", tmp_path / "out", cfg,
                critique=True)
    html = build_report([tmp_path / "out"], tmp_path / "r.html").read_text()
    assert "critique: fail" in html
    assert "Reverse the arrow" in html or "reverse" in html.lower()
