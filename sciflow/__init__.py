"""sciflow: structural evaluation of AI-generated scientific diagrams by inverse parsing."""

from __future__ import annotations

__version__ = "0.1.0"

from sciflow.config import Config, load_config  # noqa: E402
from sciflow.graph import DiagramGraph, GraphFormatError, load_graph  # noqa: E402

__all__ = ["Config", "DiagramGraph", "GraphFormatError", "__version__", "load_config", "load_graph"]
