"""The prompt's directed relations, read from its text, and where the drawing puts their boxes.

The image level gets the prompt as text (:func:`sciflow.metrics.text_level.prompt_text`): the
structured prompt lists ``Relations (k):`` then ``- A -> B`` lines; the serialized form
(:func:`~sciflow.metrics.text_level.serialize`) ``Relations:`` then ``A -> B`` lines. These are
what the offline image terms compare the drawing with, so that they see the reference: a drawing
whose arrows all run backwards, or whose labels sit in the wrong boxes, no longer reads as
the correct one.

- :func:`prompt_relations`: the ``(A, B)`` label pairs of the lines after a line starting with
  ``Relations`` (case-insensitive), up to the first line without ``" -> "``; a leading ``- ``
  is dropped. A prompt without such a section has none (a naive prompt).
- :func:`locate`: for each prompt label, the drawn node it names: the node whose folded label
  (:func:`sciflow.metrics.matching.fold`) is most similar to it (rapidfuzz normalized Indel
  similarity, ties to the lower node id), when that similarity is at least ``min_sim`` (0.8:
  an OCR slip or two still finds its box). Each drawn node serves at most one prompt label
  (labels are taken longest first, then alphabetically).
- :func:`relation_agreement`: the F1 between the prompt's relations and the drawn edges read
  through :func:`locate` (an edge ``u -> v`` agrees with ``A -> B`` when ``u`` is A's node and
  ``v`` is B's); both empty gives None (nothing to compare).

>>> prompt_relations("Components (2):\\n- Encoder\\n- Decoder\\nRelations (1):\\n- Encoder -> Decoder\\nLayout: x")
[('Encoder', 'Decoder')]
"""

from __future__ import annotations

import re

from rapidfuzz.distance import Indel

from sciflow.format.graph import DiagramGraph, Node
from sciflow.metrics.matching import fold

_ARROW = " -> "
_HEADER = re.compile(r"^\s*relations\b", re.IGNORECASE)


def prompt_relations(prompt: str) -> list[tuple[str, str]]:
    """The prompt's ``(source label, target label)`` pairs, in order (module docstring)."""
    out: list[tuple[str, str]] = []
    inside = False
    for line in (prompt or "").splitlines():
        if not inside:
            inside = bool(_HEADER.match(line))
            continue
        text = line.strip()
        if text.startswith("- "):
            text = text[2:]
        if _ARROW not in text:
            if text:
                break
            continue
        a, b = text.split(_ARROW, 1)
        if a.strip() and b.strip():
            out.append((a.strip(), b.strip()))
    return out


def locate(labels: list[str], graph: DiagramGraph, min_sim: float = 0.8) -> dict[str, Node]:
    """Prompt label -> the drawn node it names (module docstring); unnamed labels are absent."""
    nodes = sorted(graph.nodes, key=lambda n: n.id)
    folded = [fold(n.label) for n in nodes]
    used: set[str] = set()
    out: dict[str, Node] = {}
    for lab in sorted(set(labels), key=lambda s: (-len(s), s)):
        f = fold(lab)
        best, best_sim = None, min_sim
        for n, fn in zip(nodes, folded, strict=True):
            if n.id in used:
                continue
            sim = Indel.normalized_similarity(f, fn)
            if sim > best_sim or (best is None and sim >= best_sim):
                best, best_sim = n, sim
        if best is not None:
            out[lab] = best
            used.add(best.id)
    return out


def relation_agreement(relations: list[tuple[str, str]], graph: DiagramGraph) -> float | None:
    """F1 of the drawn edges against the prompt's relations (module docstring)."""
    drawn = {(e.source, e.target) for e in graph.edges if e.source != e.target}
    if not relations and not drawn:
        return None
    where = locate([x for r in relations for x in r], graph)
    want = {(where[a].id, where[b].id) for a, b in relations if a in where and b in where}
    hit = len(want & drawn)
    p = hit / len(drawn) if drawn else 0.0
    r = hit / len(set(relations)) if relations else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0
