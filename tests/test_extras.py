"""Optional features name the extra that installs them when it is missing (issue 20)."""

from __future__ import annotations

import doctest
import importlib
import sys

import pytest

from sciflow.cli import main
from sciflow.format import extras
from sciflow.format.extras import EXTRAS, MissingExtra, require


def _hide(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    """Make ``import NAME`` fail as if the package were not installed (a ``None`` entry in
    ``sys.modules`` makes every import of it raise ``ImportError``, imported before or not)."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_docstring_examples():
    result = doctest.testmod(extras)
    assert result.attempted > 0 and result.failed == 0


def test_every_extra_is_declared_in_pyproject():
    from pathlib import Path

    import tomllib

    declared = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    optional = declared["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(optional)
    assert declared["project"]["name"] == extras.DISTRIBUTION


def test_require_names_the_extra():
    with pytest.raises(MissingExtra, match=r"pip install 'sciflow-eval\[verify\]'"):
        require("no_such_package_for_sure", "verify", "sciflow verify")
    with pytest.raises(ValueError, match="unknown extra"):
        require("json", "nope", "x")


def test_verify_without_the_extra_is_one_line(monkeypatch, tmp_path, capsys):
    _hide(monkeypatch, "starlette", "uvicorn")
    rc = main(["verify", str(tmp_path), "--out", str(tmp_path / "v")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "sciflow verify needs the 'verify' extra: pip install 'sciflow-eval[verify]'" in " ".join(err.split())
    assert "Traceback" not in err


def test_ray_executor_without_the_extra(monkeypatch):
    from sciflow.runs.executors import ExecutorError, RayExecutor
    from sciflow.runs.worker import WorkerSpec

    _hide(monkeypatch, "ray")
    with pytest.raises(ExecutorError, match=r"'ray' extra: pip install 'sciflow-eval\[ray\]'"):
        RayExecutor(WorkerSpec({}, None, False, False), jobs=1)


def test_text_spotter_backends_name_their_extra(monkeypatch):
    text_spotter = importlib.import_module("sciflow.agents.text_spotter")
    _hide(monkeypatch, "pytesseract", "paddleocr")
    with pytest.raises(MissingExtra, match=r"sciflow-eval\[tesseract\]"):
        text_spotter.TesseractBackend({})
    with pytest.raises(MissingExtra, match=r"sciflow-eval\[paddleocr\]"):
        text_spotter.PaddleOCRBackend({})


def test_to_pandas_without_pandas_names_the_extra(monkeypatch):
    from sciflow.api import Results

    _hide(monkeypatch, "pandas")
    with pytest.raises(MissingExtra, match=r"Results.to_pandas\(\) needs the 'pandas' extra"):
        Results([], {"run": "x", "means": {}}, {}).to_pandas()
