"""Prompts given to diagram generators, built from a canonical graph.

Two prompt styles, as compared in SciFlow-Bench's ablation:

* :func:`structured_prompt` -- the structured visual prompt: a fixed template listing
  the title, every component (with its group), the groups, every directed relation
  ``A -> B`` in edge order, and a layout hint. Everything a generator needs to draw the
  exact graph, and nothing else.
* :func:`naive_prompt` -- the method description (``meta["description"]``) alone.

:func:`build_prompt` packs the structured prompt into :class:`sciflow.format.graph.Prompt`
(the ``prompt`` field of a reference graph). All functions are pure and deterministic;
bump :data:`PROMPT_VERSION` whenever the template text changes.

Template (sections always present, in this order)::

    Title: <meta.title, or the graph id>
    Draw a scientific framework diagram with exactly the components and directed arrows listed below.
    Components (<n>):
    - <label>                      one line per node, in node order;
    - <label> (group: <group>)     ... with its group's label when it has one
    Groups (<n>):                  or "Groups: none"
    - <label>                      one line per group, in group order;
    - <label> (inside: <parent>)   ... with its parent group's label when nested
    Relations (<n>):               or "Relations: none"
    - <source label> -> <target label>   one line per edge, in edge order
    Layout: <meta.layout, or left-to-right>

Example
-------
>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({
...     "id": "toy",
...     "nodes": [{"id": "n1", "label": "Encoder", "group": "g1"}, {"id": "n2", "label": "Decoder"}],
...     "edges": [{"source": "n1", "target": "n2"}],
...     "groups": [{"id": "g1", "label": "Backbone"}],
...     "meta": {"title": "Toy", "description": "An encoder feeds a decoder."},
... })
>>> print(structured_prompt(g))
Title: Toy
Draw a scientific framework diagram with exactly the components and directed arrows listed below.
Components (2):
- Encoder (group: Backbone)
- Decoder
Groups (1):
- Backbone
Relations (1):
- Encoder -> Decoder
Layout: left-to-right
>>> naive_prompt(g)
'An encoder feeds a decoder.'
>>> build_prompt(g).relations
(('Encoder', 'Decoder'),)
"""

from __future__ import annotations

import logging

from sciflow.format.graph import DiagramGraph, Group, Prompt
from sciflow.format.prompt_template import DEFAULT_LAYOUT, INSTRUCTION, PROMPT_VERSION

log = logging.getLogger(__name__)


__all__ = ["DEFAULT_LAYOUT", "INSTRUCTION", "PROMPT_VERSION", "build_prompt", "naive_prompt", "structured_prompt"]


def _group_name(group: Group) -> str:
    return group.label if group.label else group.id


def layout_hint(graph: DiagramGraph) -> str:
    """``meta["layout"]`` when it is a non-empty string, else ``"left-to-right"``."""
    layout = graph.meta.get("layout")
    return layout if isinstance(layout, str) and layout.strip() else DEFAULT_LAYOUT


def structured_prompt(graph: DiagramGraph) -> str:
    """The structured visual prompt for ``graph`` (template in the module docstring).

    >>> from sciflow.format.graph import DiagramGraph
    >>> g = DiagramGraph.from_dict({"id": "one", "nodes": [{"id": "a", "label": "A"}],
    ...                             "edges": []})
    >>> print(structured_prompt(g))
    Title: one
    Draw a scientific framework diagram with exactly the components and directed arrows listed below.
    Components (1):
    - A
    Groups: none
    Relations: none
    Layout: left-to-right
    """
    groups = {g.id: g for g in graph.groups}
    labels = {n.id: n.label for n in graph.nodes}
    title = graph.meta.get("title")
    lines = [f"Title: {title if isinstance(title, str) and title.strip() else graph.id}"]
    lines.append(INSTRUCTION)

    lines.append(f"Components ({len(graph.nodes)}):" if graph.nodes else "Components: none")
    for n in graph.nodes:
        if n.group is not None and n.group in groups:
            lines.append(f"- {n.label} (group: {_group_name(groups[n.group])})")
        else:
            lines.append(f"- {n.label}")

    lines.append(f"Groups ({len(graph.groups)}):" if graph.groups else "Groups: none")
    for g in graph.groups:
        if g.parent is not None and g.parent in groups:
            lines.append(f"- {_group_name(g)} (inside: {_group_name(groups[g.parent])})")
        else:
            lines.append(f"- {_group_name(g)}")

    lines.append(f"Relations ({len(graph.edges)}):" if graph.edges else "Relations: none")
    lines.extend(f"- {labels[e.source]} -> {labels[e.target]}" for e in graph.edges)

    lines.append(f"Layout: {layout_hint(graph)}")
    return "\n".join(lines)


def naive_prompt(graph: DiagramGraph) -> str:
    """The naive prompt: the method description ``meta["description"]``, verbatim.

    Raises :class:`ValueError` when the graph has no non-empty string description.

    >>> from sciflow.format.graph import DiagramGraph
    >>> naive_prompt(DiagramGraph(id="x"))
    Traceback (most recent call last):
    ...
    ValueError: graph 'x' has no meta["description"]; a naive prompt needs the method description
    """
    desc = graph.meta.get("description")
    if not isinstance(desc, str) or not desc.strip():
        raise ValueError(
            f"graph {graph.id!r} has no meta[\"description\"]; "
            "a naive prompt needs the method description"
        )
    return desc


def build_prompt(graph: DiagramGraph) -> Prompt:
    """The :class:`~sciflow.format.graph.Prompt` for ``graph``: ``text`` is :func:`structured_prompt`,
    ``components`` the node labels in node order, ``relations`` the (source, target) label
    pairs in edge order, ``layout`` :func:`layout_hint`.

    >>> from sciflow.format.graph import DiagramGraph
    >>> g = DiagramGraph.from_dict({
    ...     "id": "t", "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
    ...     "edges": [{"source": "a", "target": "b"}], "meta": {"layout": "top-to-bottom"}})
    >>> p = build_prompt(g)
    >>> p.components, p.relations, p.layout
    (('A', 'B'), (('A', 'B'),), 'top-to-bottom')
    """
    labels = {n.id: n.label for n in graph.nodes}
    return Prompt(
        text=structured_prompt(graph),
        components=tuple(n.label for n in graph.nodes),
        relations=tuple((labels[e.source], labels[e.target]) for e in graph.edges),
        layout=layout_hint(graph),
    )
