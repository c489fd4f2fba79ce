"""sciflow: structural evaluation of AI-generated scientific diagrams by inverse parsing."""

from __future__ import annotations

__version__ = "0.1.0"

from sciflow.config import Config, load_config  # noqa: E402
from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph  # noqa: E402

__all__ = [
    "Config", "DiagramGraph", "GraphFormatError", "ParseResult", "Parser", "__version__", "load_config",
    "load_graph", "parse",
]

_API = ("score", "score_one", "compare", "parse", "load_results", "Results", "ItemScore")
__all__ += ["ItemScore", "Results", "compare", "load_results", "score", "score_one"]
__all__ += ["check_claims"]  # structural claims, lazy (below)


def __getattr__(name: str) -> object:
    # The parser pulls in OpenCV and onnxruntime; import it only when asked for.
    if name in _API:  # the Python API (sciflow/api.py): parse accepts a list too
        from sciflow import api

        return getattr(api, name)
    if name in ("Parser", "ParseResult"):
        from sciflow import pipeline

        return getattr(pipeline, name)
    if name == "rectify":
        from sciflow.critic import rectify

        return rectify
    if name == "check_claims":  # structural claims (sciflow/claims/)
        from sciflow.claims import check_claims

        return check_claims
    raise AttributeError(f"module 'sciflow' has no attribute {name!r}")
