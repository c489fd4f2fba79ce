from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")


@pytest.fixture(scope="session")
def parser():
    """One Parser (OCR engine loaded once) for the whole parser test session."""
    from sciflow.pipeline import Parser

    return Parser()
