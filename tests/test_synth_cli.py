"""`sciflow synth`: three files per item, resumable, deterministic, clear errors."""

from __future__ import annotations

import json

from sciflow.cli import main


def test_writes_three_files_per_item_and_resumes(tmp_path, capsys):
    out = tmp_path / "pil"
    assert main(["synth", "--style", "pillow", "-n", "2", "-o", str(out), "--seed", "5"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["pillow-5.elements.json", "pillow-5.json", "pillow-5.png",
                     "pillow-6.elements.json", "pillow-6.json", "pillow-6.png"]
    first = (out / "pillow-5.png").read_bytes()
    record = json.loads((out / "pillow-5.elements.json").read_text())
    assert record["format"] == "sciflow.elements/v1" and record["style"] == "pillow"
    assert {c for c, _ in record["elements"]} >= {"node", "text"}
    graph = json.loads((out / "pillow-5.json").read_text())
    assert graph["nodes"] and graph["id"]
    capsys.readouterr()
    assert main(["synth", "--style", "pillow", "-n", "3", "-o", str(out), "--seed", "5"]) == 0
    assert "3 of 3 items" in capsys.readouterr().out and (out / "pillow-7.png").is_file()
    assert (out / "pillow-5.png").read_bytes() == first  # kept, not redrawn
    again = tmp_path / "again"
    assert main(["synth", "--style", "pillow", "-n", "1", "-o", str(again), "--seed", "5"]) == 0
    assert (again / "pillow-5.png").read_bytes() == first  # same seed, same bytes


def test_unknown_knob_is_one_clear_error(tmp_path, capsys):
    assert main(["synth", "--style", "pillow", "-n", "1", "-o", str(tmp_path), "--knob", "x=1"]) == 2
    assert "style 'pillow' has no knobs to force" in capsys.readouterr().err
