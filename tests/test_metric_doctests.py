"""The worked examples in the metric modules' docstrings are executed."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["sciflow.metrics.graph_level", "sciflow.metrics.matching", "sciflow.metrics.text_level",
           "sciflow.metrics.overall"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
