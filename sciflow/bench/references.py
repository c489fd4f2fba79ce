"""The reference set as data: what a reference graph file must hold, and the check of it.

``sciflow/data/sciflow-bench-60/*.json`` (the bundled benchmark ``sciflow-bench-60@1``) are the
source of truth (edited by hand, one file per published method; a change needs a new benchmark
version, :mod:`sciflow.format.benchmarks`); :func:`check_reference` is what ``sciflow validate``
runs on every file of the reference set (``meta.origin`` names it: :data:`REFERENCE_SET`), or on
every file with ``--references``.
Other graphs, such as the demo's small references in ``examples/``, get the schema check only.
A reference passes when

- it validates against the graph schema (checked by the loader before this);
- ``meta`` names the paper: ``title``, ``year``, ``area`` (one of :data:`AREAS`), ``layout``
  (one of :data:`LAYOUTS`), an identifier (``arxiv``, ``doi`` or ``reference``), a
  ``citation`` that contains the title, a ``provenance`` saying how the graph was made, a
  ``description`` of 3 to 6 sentences (the naive prompt) and ``notes`` (a list of strings,
  possibly empty: annotation decisions for this item);
- ``meta.difficulty`` equals the tier :func:`sciflow.bench.difficulty.difficulty` computes from
  the graph, and ``prompt`` equals :func:`sciflow.bench.prompts.build_prompt` of the graph
  (so a hand edit of a node or an edge that forgets the prompt is caught);
- every node has an edge, and node labels are unique within the item (repeated blocks carry
  a distinguishing suffix, so that a prompt's relations name each box unambiguously).

Example
-------
>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({"id": "x", "nodes": [{"id": "a", "label": "A"}], "edges": []})
>>> check_reference(g)[:2]
['meta.title is missing', 'meta.year is missing']
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sciflow.bench.difficulty import difficulty
from sciflow.bench.prompts import build_prompt
from sciflow.format.graph import DiagramGraph

AREAS = ("computer vision", "natural language processing", "machine learning", "integrated circuits", "robotics")
LAYOUTS = ("left-to-right", "top-to-bottom")
REFERENCE_SET = "sciflow reference set"
REQUIRED_META = ("title", "year", "area", "layout", "citation", "provenance", "description", "notes", "difficulty")


def with_derived_fields(graph: DiagramGraph) -> DiagramGraph:
    """``graph`` with the fields :func:`check_reference` derives from it rebuilt: the difficulty
    tier and the prompt (what ``sciflow prompt FILE --write`` saves after a hand edit)."""
    graph = dataclasses.replace(graph, meta={**graph.meta, "difficulty": difficulty(graph)}, prompt=None)
    return dataclasses.replace(graph, prompt=build_prompt(graph))


def is_reference(graph: DiagramGraph) -> bool:
    """A graph belongs to the reference set when its ``meta.origin`` names it."""
    origin = graph.meta.get("origin")
    return isinstance(origin, str) and origin.startswith(REFERENCE_SET)


def check_reference(graph: DiagramGraph) -> list[str]:
    """Problems of one reference graph, each one line (empty: it passes; module docstring)."""
    meta: dict[str, Any] = dict(graph.meta)
    problems = [f"meta.{k} is missing" for k in REQUIRED_META if k not in meta]
    if meta.get("area") is not None and meta.get("area") not in AREAS:
        problems.append(f"meta.area {meta['area']!r} is not one of {', '.join(AREAS)}")
    if meta.get("layout") is not None and meta.get("layout") not in LAYOUTS:
        problems.append(f"meta.layout {meta['layout']!r} is not one of {', '.join(LAYOUTS)}")
    if not any(meta.get(k) for k in ("arxiv", "doi", "reference")):
        problems.append("the paper has no identifier: give meta.arxiv, meta.doi or meta.reference")
    title, citation = meta.get("title"), meta.get("citation")
    if isinstance(title, str) and isinstance(citation, str) and title.lower() not in citation.lower():
        problems.append("meta.citation does not name the paper (it must contain meta.title)")
    if "notes" in meta and not (isinstance(meta["notes"], list) and all(isinstance(x, str) for x in meta["notes"])):
        problems.append("meta.notes must be a list of strings")
    description = meta.get("description")
    if isinstance(description, str):
        sentences = description.count(". ") + 1
        if not 3 <= sentences <= 6:
            problems.append(f"meta.description has about {sentences} sentences, want 3-6")
    tier = difficulty(graph)
    if "difficulty" in meta and meta["difficulty"] != tier:
        problems.append(f"meta.difficulty is {meta['difficulty']!r} but the graph's tier is {tier!r}")
    if graph.prompt is None:
        problems.append("no prompt: write the one sciflow.bench.prompts.build_prompt gives")
    elif "title" in meta:
        expected = build_prompt(dataclasses.replace(graph, prompt=None))
        if graph.prompt != expected:
            problems.append("the prompt does not match the graph (rebuild it: sciflow prompt FILE --write)")
    touched = {x for e in graph.edges for x in (e.source, e.target)}
    problems += [f"node {n.id} ({n.label!r}) has no edge" for n in graph.nodes if n.id not in touched]
    seen: dict[str, str] = {}
    for n in graph.nodes:
        if n.label in seen:
            problems.append(f"label {n.label!r} is used by nodes {seen[n.label]} and {n.id}: add a suffix")
        seen.setdefault(n.label, n.id)
    return problems
