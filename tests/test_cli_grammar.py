"""One CLI grammar (issue 20): -o/--out files and folders, --format, list, prompts, help, the
80-column leaderboard, the user cache folder and the no-match error."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from sciflow.cli import build_parser, main
from sciflow.cli.common import default_cache_dir, leaderboard_table
from sciflow.cli.grammar import EXAMPLES, FORMATS, WORKFLOW
from sciflow.runs.summary import read_summary

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
PRED, REFS = EXAMPLES_DIR / "predictions" / "careful-gen", EXAMPLES_DIR / "references"


@pytest.fixture(scope="module")
def fast_config(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("cfg") / "fast.toml"
    p.write_text('[matching]\nembedder = "none"\n')
    return p


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, fast_config) -> Path:
    out = tmp_path_factory.mktemp("runs") / "careful"
    assert main(["score", str(PRED), "--refs", str(REFS), "-o", str(out), "--config", str(fast_config),
                 "--no-cache"]) == 0
    return out


def _subcommands() -> dict:
    parser = build_parser()
    action = next(a for a in parser._subparsers._group_actions)  # noqa: SLF001
    return action.choices


def test_every_command_has_an_example_and_is_in_workflow_order(capsys):
    commands = _subcommands()
    assert set(commands) <= set(WORKFLOW) and set(commands) <= set(EXAMPLES)
    for name, sub in commands.items():
        text = sub.format_help()
        assert "example:" in text and EXAMPLES[name] in text, name
    listed = [a.dest for a in next(iter(build_parser()._subparsers._group_actions))._choices_actions]  # noqa: SLF001
    assert listed == [c for c in WORKFLOW if c in listed]
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "inverse parser" in out and "workflow:" in out


def test_options_show_their_defaults():
    text = _subcommands()["score"].format_help()
    assert "(default: 1)" in text and "(default: table)" in text and "user cache folder" in text


def test_score_format_json_is_json_alone_on_stdout(run_dir, fast_config, capsys):
    capsys.readouterr()
    assert main(["score", str(PRED), "--refs", str(REFS), "-o", str(run_dir), "--config", str(fast_config),
                 "--no-cache", "--format", "json"]) == 0
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["n_items"] == 5 and "results written" in out.err


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "table"])
def test_summarize_formats(run_dir, capsys, fmt):
    capsys.readouterr()
    assert main(["summarize", str(run_dir), "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        assert json.loads(out)[0]["run"] == "careful"
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert rows[0]["run"] == "careful" and float(rows[0]["graph_lo"]) <= float(rows[0]["graph"])
    elif fmt == "markdown":
        assert out.startswith("| run |") and "| careful |" in out
    else:
        assert out.startswith("\\begin{tabular}") and "careful" in out


def test_out_file_or_folder(run_dir, tmp_path, capsys):
    assert main(["summarize", str(run_dir), "-o", str(tmp_path / "board.json")]) == 0
    assert json.loads((tmp_path / "board.json").read_text())[0]["run"] == "careful"
    assert main(["summarize", str(run_dir), "-o", str(tmp_path / "board")]) == 0
    assert (tmp_path / "board" / "leaderboard.csv").is_file()
    assert main(["report", str(run_dir), "-o", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "report.html").is_file()
    assert main(["compare", str(run_dir), str(run_dir), "-o", str(tmp_path / "c.md")]) == 0
    assert (tmp_path / "c.md").read_text().startswith("| scope |")
    capsys.readouterr()
    # mismatches: one line, rc 2, before any work
    for argv in (["report", str(run_dir), "-o", str(tmp_path / "x.csv")],
                 ["score", str(PRED), "--refs", str(REFS), "-o", str(tmp_path / "out.json")],
                 ["generate", "graphviz", "--refs", str(REFS), "-o", str(tmp_path / "g.html")]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: -o/--out") and len(err.splitlines()) == 1
    assert not (tmp_path / "g.html").exists()


def test_parse_one_image_into_one_file(tmp_path, fast_config):
    image = EXAMPLES_DIR / "predictions" / "graphviz-render" / "vit.png"
    out = tmp_path / "sub" / "vit-parsed.json"
    assert main(["parse", str(image), "-o", str(out), "--config", str(fast_config), "--no-cache"]) == 0
    assert json.loads(out.read_text())["nodes"]
    assert main(["parse", str(image), str(image.with_name("ppo.png")), "-o", str(out)]) == 2


def test_list_and_prompts(tmp_path, capsys):
    for what in ("backends", "generators", "benchmarks"):
        assert main(["list", what, "--format", "json"]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert rows
    assert main(["list", "benchmarks", "--format", "json"]) == 0
    [bench] = json.loads(capsys.readouterr().out)
    assert bench["name"] == "sciflow-bench-60@1" and bench["items"] == 60
    assert main(["prompts", "sciflow-bench-60@1", "-o", str(tmp_path / "prompts.jsonl")]) == 0
    lines = (tmp_path / "prompts.jsonl").read_text().splitlines()
    records = [json.loads(x) for x in lines]
    assert len(records) == 60 and records[0]["id"] == "cv_clip" and "Components" in records[0]["prompt"]


def test_leaderboard_fits_80_columns(run_dir):
    s = read_summary(run_dir)
    buf = io.StringIO()
    Console(file=buf, width=80).print(leaderboard_table([s, dict(s, run="a-rather-long-run-name")], width=80))
    text = buf.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text and "0.…" not in text
    assert "not shown at this width" in text


def test_no_prediction_matches_any_reference(tmp_path, capsys):
    (tmp_path / "preds").mkdir()
    (tmp_path / "preds" / "figure_1.json").write_text((PRED / "vit.json").read_text())
    assert main(["score", str(tmp_path / "preds"), "--refs", str(REFS)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "matches a reference" in err and "figure_1" in err and "diffusion_policy" in err


def test_cache_defaults_to_the_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("SCIFLOW_CACHE_DIR", raising=False)
    assert default_cache_dir() != Path(".sciflow-cache") and default_cache_dir().name == "sciflow"
    assert default_cache_dir().is_absolute()
    monkeypatch.setenv("SCIFLOW_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path


def test_every_option_is_explained():
    import argparse

    missing = []

    def walk(parser: argparse.ArgumentParser, path: list[str]) -> None:
        for a in parser._actions:  # noqa: SLF001
            if isinstance(a, argparse._SubParsersAction):  # noqa: SLF001
                for name, sub in a.choices.items():
                    if name != "claims":  # sciflow/cli/claims.py has its own owner
                        walk(sub, [*path, name])
            elif a.help is None:
                missing.append(f"{' '.join(path)} {a.option_strings or a.dest}")

    walk(build_parser(), [])
    assert missing == []
