"""Optional backends: clear errors when a package, binary or weights file is missing."""

from __future__ import annotations

import importlib.util
import shutil

import numpy as np
import pytest

from sciflow.agents import layout, shape_hunter, text_spotter


@pytest.mark.skipif(
    shutil.which("tesseract") is None or importlib.util.find_spec("pytesseract") is None,
    reason="tesseract binary or pytesseract not installed",
)
def test_tesseract_backend_reads_a_label():
    from .drawing import Canvas

    c = Canvas(400, 120)
    c.text("Image Encoder", 200, 60, size=28)
    lines = text_spotter.BACKENDS.create("tesseract", {}).read(c.array())
    assert any("Encoder" in t.text for t in lines)


@pytest.mark.skipif(importlib.util.find_spec("paddleocr") is not None, reason="paddleocr is installed")
def test_paddleocr_missing_is_clear():
    with pytest.raises(ImportError, match=r"paddleocr.*sciflow-eval\[paddleocr\]"):  # MissingExtra names the extra
        text_spotter.BACKENDS.create("paddleocr", {})


def test_sam_without_checkpoint_is_clear(tmp_path):
    with pytest.raises(RuntimeError, match="checkpoint"):
        shape_hunter.BACKENDS.create("sam", {})
    with pytest.raises(RuntimeError, match="does not exist"):
        shape_hunter.BACKENDS.create("sam", {"checkpoint": str(tmp_path / "none.pth")})


def test_layout_none_and_ultralytics_without_weights():
    assert layout.BACKENDS.create("none", {}).detect(np.zeros((5, 5, 3), np.uint8)) == []
    with pytest.raises(RuntimeError, match="weights"):
        layout.BACKENDS.create("ultralytics", {})


def test_arrow_glyph_filter():
    assert text_spotter.clean_text("->") == ""
    assert text_spotter.clean_text("→ Decoder") == "Decoder"
    assert text_spotter.clean_text("Encoder —") == "Encoder"
    assert text_spotter.clean_text("V") == ""
    assert text_spotter.clean_text("x") == "x"
    assert text_spotter.clean_text("x-y  plot") == "x-y plot"
