from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")

from collections.abc import Iterable  # noqa: E402

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from sciflow.config import MatchingConfig  # noqa: E402
from sciflow.format.graph import DiagramGraph  # noqa: E402

STRING_ONLY = MatchingConfig(embedder="none")

# CI explores the same examples on every run (no flaky reds); locally hypothesis varies them.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def make_graph(
    nodes: Iterable[tuple[str, str]] | str, edges: Iterable[tuple[str, str]] = (), gid: str = "g"
) -> DiagramGraph:
    """Nodes as (id, label) pairs, or a string of one-letter ids that are their own labels."""
    if isinstance(nodes, str):
        nodes = [(c, c) for c in nodes]
    return DiagramGraph.from_dict(
        {
            "id": gid,
            "nodes": [{"id": i, "label": label} for i, label in nodes],
            "edges": [{"source": a, "target": b} for a, b in edges],
        }
    )


@pytest.fixture
def string_only() -> MatchingConfig:
    return STRING_ONLY
