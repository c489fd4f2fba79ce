"""Hand-computed cases for sciflow.bench.prompts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sciflow.bench.prompts import PROMPT_VERSION, build_prompt, naive_prompt, structured_prompt
from sciflow.format.graph import DiagramGraph, Prompt

TINY = {
    "id": "tiny",
    "nodes": [
        {"id": "n1", "label": "Image", "group": "g2"},
        {"id": "n2", "label": "Encoder", "group": "g2"},
        {"id": "n3", "label": "Loss"},
    ],
    "edges": [
        {"source": "n2", "target": "n3", "label": "features"},
        {"source": "n1", "target": "n2"},
        {"source": "n3", "target": "n2", "style": "dashed"},
    ],
    "groups": [{"id": "g1", "label": "Model"}, {"id": "g2", "label": "Backbone", "parent": "g1"}],
    "meta": {"title": "Tiny Net", "layout": "top-to-bottom", "description": "Image to loss."},
}

TINY_TEXT = """\
Title: Tiny Net
Draw a scientific framework diagram with exactly the components and directed arrows listed below.
Components (3):
- Image (group: Backbone)
- Encoder (group: Backbone)
- Loss
Groups (2):
- Model
- Backbone (inside: Model)
Relations (3):
- Encoder -> Loss
- Image -> Encoder
- Loss -> Encoder
Layout: top-to-bottom"""


def tiny() -> DiagramGraph:
    return DiagramGraph.from_dict(TINY)


def test_version() -> None:
    assert PROMPT_VERSION == "1"


def test_structured_prompt_exact_text() -> None:
    assert structured_prompt(tiny()) == TINY_TEXT


def test_structured_prompt_defaults() -> None:
    g = DiagramGraph.from_dict({"id": "solo", "nodes": [{"id": "a", "label": "A"}], "edges": []})
    assert structured_prompt(g) == (
        "Title: solo\n"
        "Draw a scientific framework diagram with exactly the components and directed arrows "
        "listed below.\n"
        "Components (1):\n"
        "- A\n"
        "Groups: none\n"
        "Relations: none\n"
        "Layout: left-to-right"
    )


def test_group_without_label_uses_id() -> None:
    g = DiagramGraph.from_dict(
        {
            "id": "x",
            "nodes": [{"id": "a", "label": "A", "group": "grp"}],
            "edges": [],
            "groups": [{"id": "grp"}],
        }
    )
    text = structured_prompt(g)
    assert "- A (group: grp)" in text
    assert "Groups (1):\n- grp\n" in text


def test_naive_prompt_is_description() -> None:
    assert naive_prompt(tiny()) == "Image to loss."


@pytest.mark.parametrize("meta", [{}, {"description": ""}, {"description": "  "}, {"description": 3}])
def test_naive_prompt_errors_without_description(meta: dict) -> None:
    d = dict(TINY, meta=meta)
    with pytest.raises(ValueError, match=r"'tiny'.*description"):
        naive_prompt(DiagramGraph.from_dict(d))


def test_build_prompt_fields() -> None:
    p = build_prompt(tiny())
    assert p == Prompt(
        text=TINY_TEXT,
        components=("Image", "Encoder", "Loss"),
        relations=(("Encoder", "Loss"), ("Image", "Encoder"), ("Loss", "Encoder")),
        layout="top-to-bottom",
    )
    g = DiagramGraph.from_dict(dict(TINY, meta={}))
    assert build_prompt(g).layout == "left-to-right"
    assert build_prompt(g).text.startswith("Title: tiny\n")


def test_deterministic_and_round_trips(tmp_path: Path) -> None:
    g = tiny()
    assert build_prompt(g) == build_prompt(g)
    assert structured_prompt(DiagramGraph.from_dict(g.to_dict())) == structured_prompt(g)
    with_prompt = dataclasses.replace(g, prompt=build_prompt(g))
    path = tmp_path / "tiny.json"
    with_prompt.save(path)
    assert DiagramGraph.load(path).prompt == build_prompt(g)
