"""The HTML report and parse reliability: a flagged item carries the badge and the overlay that
explains why, an unflagged one a line, and the leaderboard shows each mean's interval and the
share flagged."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sciflow.format.graph import DiagramGraph
from sciflow.runs.summary import read_summary
from sciflow.views.reliability import reliability_caption
from sciflow.views.report import build_report
from tests.test_report import make_image_run, string_config

SIGNALS = {"unexplained_ink": 0.05, "dangling_ends": 0.5, "headless": 0.25, "both_heads": 0.0, "weak_heads": 0.0,
           "ocr_low_conf": 0.0, "text_unassigned": 0.1, "single_agent": 0.0, "isolated": 0.2,
           "layout_disagreement": 0.0, "layout": False}


def flagged_run(out: Path, reliability: float) -> Path:
    run = make_image_run(out, string_config())
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    for r in rows:
        if r["id"] == "vit":
            r.update(parse_reliability=reliability, reliability_signals=SIGNALS,
                     low_reliability=reliability < 0.5, reliability_threshold=0.5)
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    parsed = DiagramGraph.load(run / "parsed" / "vit.json")
    meta = {**parsed.meta, "parse_reliability": reliability, "reliability_signals": SIGNALS,
            "reliability_evidence": {"unexplained": [[900, 10, 1000, 60]], "dangling": [[190, 110]],
                                     "headless": [[405, 110], [450, 110]], "single_agent": []}}
    DiagramGraph.from_dict({**parsed.to_dict(), "meta": meta}).save(run / "parsed" / "vit.json")
    (run / "summary.json").write_text(json.dumps(read_summary(run)))
    return run


def test_caption_names_the_largest_signals():
    row = {"parse_reliability": 0.23, "reliability_signals": SIGNALS}
    assert reliability_caption(row) == ("parse reliability 0.23: connectors attached at one end 0.50, "
                                        "connectors without an arrowhead 0.25, nodes no arrow touches 0.20")


def test_flagged_item_shows_badge_overlay_and_leaderboard_share(tmp_path):
    run = flagged_run(tmp_path / "low", 0.23)
    html = build_report([run], tmp_path / "report.html").read_text()
    assert "low parse reliability</span> the score may reflect the parser" in html
    fig = re.search(r'<figure class="fig overlay reliability">(?:<a [^>]*>)?<img alt="([^"]*)"[^>]* src="data:image/',
                    html)
    assert fig and fig.group(1).startswith("parse reliability 0.23: connectors attached at one end 0.50")
    assert re.search(r'class="badge low-reliability"[^>]*>\?</span>', html)  # the item list marks it
    assert re.search(r'<td class="num">1/1 <span class="muted">\(graph without: ', html)
    assert re.search(r'<span class="ci">\[\d\.\d{3}, \d\.\d{3}\]</span>', html)  # intervals on the means


def test_unflagged_item_gets_one_line_and_no_overlay(tmp_path):
    run = flagged_run(tmp_path / "high", 0.91)
    html = build_report([run], tmp_path / "report.html").read_text()
    assert "parse reliability 0.91:" in html
    assert 'class="fig overlay reliability"' not in html and "badge low-reliability" not in html
    assert re.search(r'<td class="num">0/1 <span class="muted">', html)
