"""Every way a command can fail ends in one clear line and a non-zero exit code, never a traceback
(issue 19, defects 6 and 15): missing and empty folders, bad config values, missing model
weights, no network, a busy port, a non-loopback host, an unexpected exception; and text that came
from input (ids, labels, file names, messages) is printed as written, never as rich markup."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from sciflow.cli import main
from sciflow.verify.sample import write_sample_items

FAST = '[matching]\nembedder = "none"\n'  # string matching only: no embedding model to load


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def one_error(capsys) -> str:
    """The single line a failed command printed (stderr), checking that it is the only output."""
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    err = lines(out.err)
    assert len(err) == 1, out.err
    assert not out.out.strip(), out.out
    return err[0]


def graph(gid: str, nodes: list[tuple[str, str]], edges: list[tuple[str, str]], **extra) -> dict:
    return {"id": gid, "nodes": [{"id": i, "label": label} for i, label in nodes],
            "edges": [{"source": s, "target": t} for s, t in edges], **extra}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------- missing and empty folders
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["stats", "{t}/nope"], "error: reference folder not found: {t}/nope"),
        (["stats", "{t}/empty"], "error: no reference graph (*.json) in {t}/empty"),
        (["score", "{t}/nope", "--refs", "{t}/refs"], "error: prediction folder not found: {t}/nope"),
        (["score", "{t}/preds", "--refs", "{t}/nope"], "error: reference folder not found: {t}/nope"),
        (["score", "{t}/preds", "--refs", "{t}/empty"], "error: no reference graph (*.json) in {t}/empty"),
        (["score", "{t}/empty", "--refs", "{t}/refs"],
         "error: no prediction (a graph .json or an image) in {t}/empty"),
        (["score", "{t}/preds", "--refs", "{t}/refs", "--out", "{t}/refs/a.json"],
         "error: -o/--out {t}/refs/a.json is a file, not a folder: `sciflow score` writes a folder"),
        (["verify", "{t}/nope", "--out", "{t}/v"], "error: figures folder not found: {t}/nope"),
        (["verify", "{t}/empty", "--out", "{t}/v"],
         "error: no figures in {t}/empty (expected .png, .jpg, .jpeg, .webp, .gif, .bmp files)"),
        (["agreement", "{t}/nope"], "error: verified folder not found: {t}/nope"),
        (["validate", "{t}/empty"], "error: no graph file (*.json) in {t}/empty"),
        (["parse", "{t}/empty", "-o", "{t}/parsed"], "error: no image in {t}/empty"),
        (["parse", "{t}/nope", "-o", "{t}/parsed"], "error: no such file or folder: {t}/nope"),
    ],
)
def test_missing_or_empty_folders_are_one_line_and_rc_2(tmp_path, capsys, argv, message) -> None:
    (tmp_path / "empty").mkdir()
    write(tmp_path / "refs" / "a.json", graph("a", [("x", "X")], []))
    write(tmp_path / "preds" / "a.json", graph("a", [("x", "X")], []))
    t = str(tmp_path.resolve()) if argv[0] == "verify" and "empty" in argv[1] else str(tmp_path)
    rc = main([a.format(t=tmp_path) for a in argv])
    assert rc == 2
    assert one_error(capsys) == message.format(t=t)


def test_config_value_of_the_wrong_type_is_one_line(tmp_path, capsys) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[matching]\nthreshold = "high"\n')
    write(tmp_path / "refs" / "a.json", graph("a", [("x", "X")], []))
    assert main(["score", str(tmp_path / "refs"), "--refs", str(tmp_path / "refs"), "--config", str(cfg)]) == 2
    assert one_error(capsys) == "config error: matching.threshold = 'high': expected a number"
    cfg.write_text("[matching\n")
    assert main(["score", str(tmp_path / "refs"), "--refs", str(tmp_path / "refs"), "--config", str(cfg)]) == 2
    assert one_error(capsys).startswith(f"config error: {cfg}: not valid TOML: ")


# ------------------------------------------------------------------------- graph files
def test_validate_names_each_problem_once_per_line(tmp_path, capsys) -> None:
    bad = write(tmp_path / "bad.json", {"nodes": 3})
    broken = tmp_path / "broken.json"
    broken.write_text("nope")
    assert main(["validate", str(bad), str(broken)]) == 1
    out = capsys.readouterr()
    err = lines(out.err)
    assert "invalid invalid" not in out.err
    assert all(line.startswith(f"error {bad}: ") for line in err[:-1]) and len(err) >= 3
    assert err[-1] == f"error {broken}: not valid JSON: Expecting value at line 1 column 1"
    assert lines(out.out) == ["2 of 2 files have problems"]


def test_stats_reports_an_invalid_reference_in_one_line(tmp_path, capsys) -> None:
    write(tmp_path / "refs" / "good.json", graph("good", [("x", "X"), ("y", "Y")], [("x", "y")]))
    write(tmp_path / "refs" / "bad.json", {"nodes": 3})
    assert main(["stats", str(tmp_path / "refs")]) == 1
    out = capsys.readouterr()
    err = lines(out.err)
    assert len(err) == 1 and "invalid invalid" not in err[0]
    assert err[0].startswith("error invalid graph file") and str(tmp_path / "refs" / "bad.json") in err[0]
    assert "1 items" in out.out


# ------------------------------------------------------------------------------- models
def test_a_forced_clip_backend_without_weights_is_one_line(tmp_path, capsys, monkeypatch) -> None:
    from sciflow.models.image_models import ImageModelUnavailable
    from sciflow.runs import scoring

    def no_weights(*args, **kwargs):
        raise ImageModelUnavailable("CLIP weights ViT-B-32/openai unavailable: Failed to download file "
                                    "(open_clip_pytorch_model.bin). Please check your connection")

    monkeypatch.setattr(scoring, "run_scoring", no_weights)
    write(tmp_path / "refs" / "a.json", graph("a", [("x", "X")], []))
    assert main(["score", str(tmp_path / "refs"), "--refs", str(tmp_path / "refs")]) == 2
    line = one_error(capsys)
    assert line.startswith("error: CLIP weights ViT-B-32/openai unavailable: Failed to download file")
    assert "`sciflow download-models`" in line


def test_download_models_without_network_is_one_line_per_target(tmp_path, capsys, monkeypatch) -> None:
    import urllib.error

    from sciflow.models import download

    def offline_network(targets, dest=None):
        if targets == ["clip"]:
            raise FileNotFoundError("Failed to download file (open_clip_pytorch_model.bin). Last error: "
                                    "Please check your connection")
        raise urllib.error.URLError(OSError(-2, "Name or service not known"))

    monkeypatch.setattr(download, "download_models", offline_network)
    assert main(["download-models", "--dest", str(tmp_path)]) == 2
    out = capsys.readouterr()
    err = lines(out.err)
    assert "Traceback" not in out.err and len(err) == 2, out.err
    assert err[0].startswith("error: could not download clip: FileNotFoundError: Failed to download file")
    assert err[1].startswith("error: could not download lpips: URLError: ")
    assert all("needs internet access" in e for e in err)

    def refused(targets, dest=None):
        raise download.DownloadRefused("refusing to download model weights: offline mode is set")

    monkeypatch.setattr(download, "download_models", refused)
    assert main(["download-models"]) == 2
    assert one_error(capsys) == "error: refusing to download model weights: offline mode is set"
    assert main(["download-models", "bogus"]) == 2
    assert one_error(capsys) == "error: unknown download target(s) bogus; known: clip, lpips, minilm"


# ------------------------------------------------------------------------------ verify
def test_verify_refuses_a_non_loopback_host(tmp_path, capsys) -> None:
    write_sample_items(tmp_path / "figs", ["retrieval"])
    for host in ("0.0.0.0", "::", "192.168.1.10", "127.example.com"):
        assert main(["verify", str(tmp_path / "figs"), "--out", str(tmp_path / "v"), "--host", host]) == 2
        line = one_error(capsys)
        assert line.startswith(f"error: --host {host} is not a loopback address: the verification page is for "
                               "local use only")
        assert "ssh -L 8765:127.0.0.1:8765" in line
    assert not (tmp_path / "v").exists()


def test_verify_on_a_busy_port_fails_before_printing_the_address(tmp_path) -> None:
    write_sample_items(tmp_path / "figs", ["retrieval"])
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = subprocess.run(
            [sys.executable, "-m", "sciflow.cli", "verify", str(tmp_path / "figs"), "--out", str(tmp_path / "v"),
             "--port", str(port)], capture_output=True, text=True, timeout=120,
        )
    assert r.returncode == 2
    assert r.stdout == ""  # no "open http://..." for a page that never opens
    assert lines(r.stderr) == [f"error: port {port} on 127.0.0.1 is already in use (another sciflow verify?); "
                               "choose another with --port"]


def test_verify_help_says_the_page_is_local_only(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "loopback address" in text and "is refused" in text and "ssh -L" in text


# ------------------------------------------------------------------- unexpected errors
def test_an_unexpected_exception_is_one_line_and_rc_1_with_the_traceback_under_v(tmp_path, capsys, monkeypatch):
    from sciflow.runs import scoring

    def bug(*args, **kwargs):
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")

    monkeypatch.setattr(scoring, "run_scoring", bug)
    write(tmp_path / "refs" / "a.json", graph("a", [("x", "X")], []))
    argv = ["score", str(tmp_path / "refs"), "--refs", str(tmp_path / "refs")]
    assert main(argv) == 1
    assert one_error(capsys) == ("error: unexpected TypeError: unsupported operand type(s) for +: 'int' and 'str' "
                                 "(a bug: rerun with `sciflow -v ...` for the traceback)")
    assert main(["-v", *argv]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "in bug" in err
    assert lines(err)[-1].startswith("error: unexpected TypeError")


def test_an_os_error_is_one_line_and_rc_2(tmp_path, capsys, monkeypatch) -> None:
    import errno

    from sciflow.runs import scoring

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "results.jsonl"))

    monkeypatch.setattr(scoring, "run_scoring", full)
    write(tmp_path / "refs" / "a.json", graph("a", [("x", "X")], []))
    assert main(["score", str(tmp_path / "refs"), "--refs", str(tmp_path / "refs")]) == 2
    assert one_error(capsys) == f"error: No space left on device: {tmp_path / 'out' / 'results.jsonl'}"


# ------------------------------------------------------------------- markup in input
MARKUP_ID = "[/bold]"
BBOX_TEXT = "[nan, 0, 10, 10]"


def test_markup_in_ids_labels_and_names_is_printed_as_written(tmp_path, capsys) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(FAST)
    refs, preds = tmp_path / "refs", tmp_path / "[red]preds"
    write(refs / "a.json", graph("a", [("x", "X"), ("y", "Y")], [("x", "y")], meta={"area": "[bold]vision"}))
    # an edge to an unknown node whose id is markup: the item's error message quotes it
    write(preds / "a.json", graph("a", [("x", BBOX_TEXT), ("y", "Y")], [("x", MARKUP_ID)]))
    write(preds / "[red]orphan.json", graph("o", [(MARKUP_ID, BBOX_TEXT)], []))
    out_dir = tmp_path / "out"
    rc = main(["score", str(preds), "--refs", str(refs), "--out", str(out_dir), "--config", str(cfg),
               "--name", "[/bold]run", "--no-cache"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "Traceback" not in out.err
    assert f"edge to unknown node '{MARKUP_ID}'" in out.err
    assert "predictions without reference (ignored): [red]orphan" in out.err
    assert "[/bold]run" in out.out and "[bold]vision" in out.out
    assert f"results written to {out_dir}/" in out.out
    # a reference file whose problem quotes markup, through validate and stats
    write(refs / "b.json", graph("b", [("x", "X")], [("x", BBOX_TEXT)]))
    assert main(["validate", str(refs / "b.json")]) == 1
    assert f"edge to unknown node '{BBOX_TEXT}'" in capsys.readouterr().err
    assert main(["stats", str(refs)]) == 1
    assert f"edge to unknown node '{BBOX_TEXT}'" in capsys.readouterr().err


def test_markup_in_a_config_error_is_printed_as_written(tmp_path, capsys) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[matching]\nthreshold = "[nan, 0, 10, 10]"\n')
    write(tmp_path / "refs" / "a.json", graph("a", [("x", "X")], []))
    assert main(["score", str(tmp_path / "refs"), "--refs", str(tmp_path / "refs"), "--config", str(cfg)]) == 2
    assert one_error(capsys) == "config error: matching.threshold = '[nan, 0, 10, 10]': expected a number"
