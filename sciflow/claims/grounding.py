"""Grounding: which node of the diagram does a claim's name mean?

The names of one claim are matched to the diagram's nodes with the metrics' one-to-one matcher
(:func:`sciflow.metrics.matching.match_nodes`: folded labels, string + semantic similarity,
``matching.threshold``), the names playing the reference: two names of one claim never land
on the same node. Then each name is checked, never guessed:

- **unmatched**: no node reaches the threshold (the closest is reported);
- **ambiguous**: another node, not taken by another name of the claim, is as good: its label
  folds to the same text as the chosen node's (a repeated label), or its similarity is within
  ``claims.ambiguity_margin`` of the chosen one. A name that folds exactly to one node's label
  and to no other's is never ambiguous;
- **sibling veto**: a node whose label differs from the name only in a number or a one-letter
  index (``"Stage 2"`` for "Stage 4", ``"conv3"`` for "conv2", ``"h_i"`` for "h_j") is a different
  member of a numbered series, never the named one: it is neither chosen nor a rival (the
  name is unmatched when only such a node fits);
- **word veto**: a node whose label shares a word with the name but has another word where the
  name has a different one (``"Noisy Latent z_T"`` for "Denoised Latent z_{t-1}": "latent" is
  shared, "noisy" stands where "denoised" is) names another component of the same kind, never
  the named one: it is neither chosen nor a rival (:func:`replaces_word`). Words are folded
  tokens of at least :data:`MIN_WORD` letters; two words are the same when their string
  similarity reaches :data:`SAME_WORD_SIMILARITY` (an OCR misreading: "Attcntion"). A word only
  missing on one side (OCR dropped it, or the label adds one) vetoes nothing, and indices,
  symbols and one-letter tokens are left to the sibling veto and the matcher;
- **merged**: the chosen node's label is not the name but joins it with other components
  (``"Encoder / Decoder"`` for "Encoder": parts split at ``/ | & + ;`` or " and ", one part
  folding to the name, or equal to it letters-and-digits only (:func:`compact`: ``"xj"`` for
  "x̃_j", the OCR having dropped the accent and the underscore), or within string similarity
  :data:`MERGE_PART_SIMILARITY` of it): the box draws several components as one, so what it shows
  of this one cannot be told;
- **grounded** otherwise.

Group names are grounded the same way on the labelled groups.

>>> from sciflow.format.graph import DiagramGraph
>>> from sciflow.config import MatchingConfig
>>> g = DiagramGraph.from_dict({"id": "g", "nodes": [{"id": "a", "label": "Linear"},
...     {"id": "b", "label": "Linear"}, {"id": "c", "label": "Softmax"}], "edges": []})
>>> out = ground_names(["linear", "SoftMax", "Decoder"], g, MatchingConfig(embedder="none"))
>>> [(x.name, x.status, x.node) for x in out.values()]
[('linear', 'ambiguous', None), ('SoftMax', 'grounded', 'c'), ('Decoder', 'unmatched', None)]
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sciflow.config import MatchingConfig
from sciflow.format.graph import DiagramGraph, Node
from sciflow.metrics.matching import fold, match_nodes, similarity_matrices, string_similarity
from sciflow.models.embedding import LabelEmbedder, get_embedder

DEFAULT_MARGIN = 0.05
MERGE_SEPARATORS = re.compile(r"\s*(?:/|\||&|\+|;)\s*|\s+and\s+", re.I)
MERGE_PART_SIMILARITY = 0.9
MIN_WORD = 3
SAME_WORD_SIMILARITY = 0.75
_DIGITS = re.compile(r"\d+")


def compact(label: str) -> str:
    """``label`` folded to its letters and digits, accents dropped: how an OCR that loses
    accents, sub- and superscript marks and punctuation may read it.

    >>> compact("x̃_j"), compact("X J"), compact("Σ")
    ('xj', 'xj', 'σ')
    """
    s = unicodedata.normalize("NFKD", fold(label))
    return "".join(ch for ch in s if ch.isalnum() and not unicodedata.combining(ch))


def replaces_word(name: str, label: str) -> bool:
    """Whether ``label`` shares a word with ``name`` but has a different word in place of one
    of the name's (module docstring: the word veto).

    >>> replaces_word("Denoised Latent z_{t-1}", "Noisy Latent z_T"), replaces_word("Local Model 1", "Local SGD 1")
    (True, True)
    >>> replaces_word("Attention Block", "Attcntion Block"), replaces_word("Denoised Latent", "Latent")
    (False, False)
    >>> replaces_word("Output", "Decoder / Output"), replaces_word("Encoder", "Decoder")
    (False, False)
    >>> replaces_word("Encoder E", "Encoder ℰ")
    False
    """
    a = [w for w in fold(name).split() if len(w) >= MIN_WORD and w.isalpha()]
    b = [w for w in fold(label).split() if len(w) >= MIN_WORD and w.isalpha()]
    if not a or not b:
        return False
    sims = string_similarity(a, b)
    same = sims >= SAME_WORD_SIMILARITY
    if not same.any():
        return False  # nothing shared: whether they name the same thing is the matcher's call
    return bool((~same.any(axis=1)).any() and (~same.any(axis=0)).any())


def siblings(name: str, label: str) -> bool:
    """Whether ``label`` names another member of the series ``name`` belongs to: the same
    words, differing only in numbers or one-letter indices (:data:`_DIGITS`).

    >>> siblings("Stage 4", "Stage 2"), siblings("conv2 5x5", "conv3 5x5"), siblings("h_j", "h_i")
    (True, True, True)
    >>> siblings("Stage 4", "stage-4"), siblings("Encoder", "Decoder"), siblings("w(t-1)", "w(t+1)")
    (False, False, False)
    >>> siblings("GAE Â_t", "GAE A_t"), siblings("Σ Subtractor", "∑ Subtractor"), siblings("N(0, I)", "N(0, 1)")
    (False, False, False)
    """
    a, b = fold(name).split(), fold(label).split()
    if len(a) != len(b) or a == b:
        return False
    for x, y in zip(a, b, strict=True):
        if x == y:
            continue
        same_stem = _DIGITS.sub("", x) == _DIGITS.sub("", y) and _DIGITS.findall(x) != _DIGITS.findall(y)
        if not (same_stem or _index_letters(x, y)):
            return False
    return True


def _index_letters(x: str, y: str) -> bool:
    """Two different one-letter indices (``i``/``j``, ``β``/``γ``), not one letter with and
    without an accent (``Â``/``A``) nor symbols (``Σ``/``∑``, ``~``/``∼``)."""
    if len(x) != 1 or len(y) != 1 or not (x.isalpha() and y.isalpha()):
        return False

    def bare(c: str) -> str:
        return "".join(ch for ch in unicodedata.normalize("NFKD", c) if not unicodedata.combining(ch))

    return bare(x) != bare(y)


def merged_with(name: str, label: str) -> list[str]:
    """The other parts of ``label`` when it draws ``name`` merged with other components, else ``[]``.

    >>> merged_with("Decoder", "Encoder / Decoder"), merged_with("Add & Norm", "Add & Norm"), merged_with("Norm", "Nor")
    (['Encoder'], [], [])
    >>> merged_with("Sample-and-Hold", "Analog Input / Sample-and-Hold"), merged_with("x̃_j", "xj/hj")
    (['Analog Input'], ['hj'])
    """
    if fold(name) == fold(label):
        return []
    parts = [p for p in MERGE_SEPARATORS.split(label) if fold(p)]
    if len(parts) < 2:
        return []
    sims = string_similarity([name], parts)[0]
    key = compact(name)
    same = [k for k, p in enumerate(parts) if key and compact(p) == key]
    best = same[0] if same else int(sims.argmax())
    if same or fold(parts[best]) == fold(name) or sims[best] >= MERGE_PART_SIMILARITY:
        return [p for k, p in enumerate(parts) if k != best]
    return []


@dataclass(frozen=True)
class Grounding:
    """One name's grounding. ``candidates``: ``(id, label, similarity)`` of the tied nodes
    (ambiguous) or of the closest node (unmatched), best first."""

    name: str
    status: str  # "grounded" | "ambiguous" | "merged" | "unmatched"
    node: str | None = None
    label: str | None = None
    similarity: float | None = None
    candidates: tuple[tuple[str, str, float], ...] = ()

    @property
    def ok(self) -> bool:
        return self.status == "grounded"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "node": self.node, "label": self.label,
                "similarity": self.similarity,
                "candidates": [{"id": i, "label": lab, "similarity": s} for i, lab, s in self.candidates]}

    def reason(self) -> str:
        """Why the name is not grounded, as a clause (empty when it is)."""
        if self.status == "ambiguous":
            tied = ", ".join(f'"{lab}" ({i})' for i, lab, _ in self.candidates)
            return f'"{self.name}" is ambiguous: it fits {tied} equally well'
        if self.status == "merged":
            i, lab, _ = self.candidates[0]
            return f'"{self.name}" is drawn merged with other components in the box "{lab}" ({i})'
        if self.status == "unmatched":
            near = f' (closest: "{self.candidates[0][1]}", similarity {self.candidates[0][2]:.2f})' \
                if self.candidates else ""
            return f'no component matches "{self.name}"{near}'
        return ""


def _other(name: str, label: str) -> bool:
    """A node that is never the named component: a sibling, or a replaced word (vetoes)."""
    return siblings(name, label) or replaces_word(name, label)


def _ground(names: Sequence[str], items: Sequence[Node], config: MatchingConfig, embedder: LabelEmbedder | None,
            margin: float) -> dict[str, Grounding]:
    distinct: list[str] = []
    for n in names:
        if n not in distinct:
            distinct.append(n)
    if not distinct:
        return {}
    embedder = embedder or get_embedder(config.embedder)
    graph = DiagramGraph(id="diagram", nodes=tuple(items))
    query = DiagramGraph(id="claim", nodes=tuple(Node(f"q{k}", n) for k, n in enumerate(distinct)))
    matching = match_nodes(graph, query, config, embedder)
    chosen = {p.ref_id: p.pred_id for p in matching.pairs}
    taken = set(chosen.values())
    out: dict[str, Grounding] = {}
    if not items:
        return {n: Grounding(n, "unmatched") for n in distinct}
    sim, _, _ = similarity_matrices([x.label for x in items], distinct, config, embedder)
    for j, name in enumerate(distinct):
        col = [(float(sim[i, j]), i) for i in range(len(items))]
        ranked = sorted(col, key=lambda x: (-x[0], items[x[1]].id))
        node_id = chosen.get(f"q{j}")
        if node_id is not None and _other(name, next(x.label for x in items if x.id == node_id)):
            node_id = None  # another member of the series, or another component of the kind
        ranked = [(s2, k) for s2, k in ranked if not _other(name, items[k].label)] or ranked
        if node_id is None:
            best = ranked[0]
            out[name] = Grounding(name, "unmatched", candidates=((items[best[1]].id, items[best[1]].label,
                                                                 round(best[0], 6)),))
            continue
        i = next(k for k, x in enumerate(items) if x.id == node_id)
        s = float(sim[i, j])
        exact = [k for k, x in enumerate(items) if fold(x.label) == fold(name)]
        if exact == [i]:
            out[name] = Grounding(name, "grounded", node_id, items[i].label, round(s, 6))
            continue
        own = fold(items[i].label)
        rivals = [k for s2, k in ranked if k != i and items[k].id not in taken - {node_id}
                  and (fold(items[k].label) == own or s2 >= s - margin)]
        if rivals:
            tied = [i] + rivals
            out[name] = Grounding(name, "ambiguous", candidates=tuple(
                (items[k].id, items[k].label, round(float(sim[k, j]), 6)) for k in tied))
        elif merged_with(name, items[i].label):
            out[name] = Grounding(name, "merged", candidates=((node_id, items[i].label, round(s, 6)),))
        else:
            out[name] = Grounding(name, "grounded", node_id, items[i].label, round(s, 6))
    return out


def ground_names(names: Sequence[str], graph: DiagramGraph, config: MatchingConfig | None = None,
                 embedder: LabelEmbedder | None = None, margin: float = DEFAULT_MARGIN) -> dict[str, Grounding]:
    """Ground the names of one claim on ``graph``'s nodes (module docstring), keyed by name."""
    return _ground(names, graph.nodes, config or MatchingConfig(), embedder, margin)


def ground_group(name: str, graph: DiagramGraph, config: MatchingConfig | None = None,
                 embedder: LabelEmbedder | None = None, margin: float = DEFAULT_MARGIN) -> Grounding:
    """Ground a group name on ``graph``'s labelled groups (the grounding's ``node`` is the group id).

    >>> from sciflow.format.graph import DiagramGraph
    >>> from sciflow.config import MatchingConfig
    >>> g = DiagramGraph.from_dict({"id": "g", "groups": [{"id": "g1", "label": "Encoder"}],
    ...     "nodes": [{"id": "a", "label": "Attention", "group": "g1"}], "edges": []})
    >>> ground_group("encoder", g, MatchingConfig(embedder="none")).node
    'g1'
    """
    groups = [Node(g.id, g.label) for g in graph.groups if g.label]
    return _ground([name], groups, config or MatchingConfig(), embedder, margin)[name]
