"""One-to-one semantic node matching.

Definition
----------
For a predicted label ``p`` and a reference label ``r``::

    fold(s)        = NFKC(s), lower-cased, Unicode punctuation replaced by spaces,
                     whitespace collapsed (symbols such as "⊕" are kept)
    string_sim     = rapidfuzz normalized Indel similarity of fold(p) and fold(r), in [0, 1]
                     (1.0 when both fold to the empty string)
    semantic_sim   = cosine of the sentence embeddings of fold(p) and fold(r), clipped to [0, 1]
                     and rounded to 6 decimals (see :mod:`sciflow.models.embedding`)
    sim            = w * string_sim + (1 - w) * semantic_sim        (w = matching.string_weight)

With the ``none`` embedder ``sim = string_sim`` (a labelled fallback).

The matching is the assignment that maximises the total similarity over pairs with
``sim >= threshold`` (``scipy.optimize.linear_sum_assignment`` on those pairs only), so
every node is matched at most once: a prediction that draws "Encoder" three times gets
one match, not three. Pairs below the threshold are never matched.

Ties (repeated labels)
~~~~~~~~~~~~~~~~~~~~~~
``sim`` depends on the folded labels only, so nodes whose labels fold alike have identical
rows (columns) of the similarity matrix, and permuting the partners of such nodes never
changes the total similarity. The **tie space** of a pair of graphs is the set of
assignments reached from the optimal one by permuting nodes within each class of equal
folded labels, on either side; it contains every assignment with the same number of pairs
between each predicted label and each reference label. The matching returned is the one
in the tie space that maximises an ``objective`` (the graph level passes its edge score;
by default, the number of predicted edges ``u -> v`` whose partners form a reference edge):

- **exact** when the tie space has at most ``EXACT_LIMIT`` members (the product of the
  class sizes' factorials on both sides): every member is evaluated;
- **iterated** otherwise: from the optimal assignment, the best improving swap of two
  partners within one class is applied until none improves the objective (a fixpoint).
  Every step raises the objective strictly, so there are at most as many steps as the
  objective has distinct values (for the graph level: ``(|pred edges| + 1) ** 2``).

Why the result is a function of the graphs and not of their files: the rows and columns of
the similarity matrix are put in a canonical order (folded label, raw label, then a few
rounds of Weisfeiler-Lehman refinement over in- and out-neighbours); nodes still tied after
that have identical rows, so the matrix, the optimal class counts and hence the tie space
are the same for any ids and any node or edge order. In the exact regime the maximum of
the objective over the tie space is therefore invariant, and so is every score computed
from it; only which of several equally good partners is listed may follow the file order.

Example
-------
>>> from sciflow.format.graph import DiagramGraph
>>> ref = DiagramGraph.from_dict({"id": "r", "nodes": [{"id": "a", "label": "Image Encoder"}], "edges": []})
>>> pred = DiagramGraph.from_dict({"id": "p", "nodes": [{"id": "x", "label": "image-encoder"}], "edges": []})
>>> m = match_nodes(pred, ref, MatchingConfig(embedder="none"))
>>> [(p.pred_id, p.ref_id, p.similarity) for p in m.pairs]
[('x', 'a', 1.0)]
"""

from __future__ import annotations

import hashlib
import itertools
import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist
from scipy.optimize import linear_sum_assignment

from sciflow.config import MatchingConfig
from sciflow.format.graph import DiagramGraph
from sciflow.models.embedding import LabelEmbedder, get_embedder

WL_ROUNDS = 3
EXACT_LIMIT = 5040  # largest tie space searched exhaustively (7!)

Objective = Callable[[Mapping[str, str]], Any]
"""Scores an assignment (predicted id -> reference id); larger is better, compared with ``>``."""


#: symbols drawn with the same glyph as a letter or a hyphen, which NFKC leaves apart: a
#: reader (and the OCR) cannot tell N-ary summation from capital sigma, increment from delta,
#: the minus sign from a hyphen or the multiplication sign from an x in a label
CONFUSABLES = str.maketrans({"∑": "σ", "∏": "π", "∆": "δ", "−": "-", "×": "x", "∗": "*", "⋅": "·"})


@lru_cache(maxsize=65536)
def fold(label: str) -> str:
    """Fold case, punctuation, whitespace and the symbols of :data:`CONFUSABLES`.

    >>> fold("  Image-Encoder\\n(ViT) ")
    'image encoder vit'
    >>> fold("⊕")
    '⊕'
    >>> fold("∑") == fold("Σ"), fold("∆V_BE") == fold("ΔV_BE"), fold("3×3 conv, t−1") == fold("3x3 Conv, t-1")
    (True, True, True)
    """
    s = unicodedata.normalize("NFKC", label).lower().translate(CONFUSABLES)
    s = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in s)
    return " ".join(s.split())


def string_similarity(a: Sequence[str], b: Sequence[str]) -> np.ndarray:
    """Matrix of normalized Indel similarities of the folded labels, in [0, 1]."""
    if not a or not b:
        return np.zeros((len(a), len(b)))
    fa = [fold(x) for x in a]
    fb = [fold(x) for x in b]
    sim = cdist(fa, fb, scorer=Indel.normalized_similarity, dtype=np.float64)
    # rapidfuzz scores two empty strings 0; identical (empty) labels are a perfect match.
    for i, x in enumerate(fa):
        if not x:
            for j, y in enumerate(fb):
                if not y:
                    sim[i, j] = 1.0
    return np.asarray(sim, dtype=np.float64)


@dataclass(frozen=True)
class MatchedPair:
    pred_id: str
    ref_id: str
    pred_label: str
    ref_label: str
    similarity: float
    string_similarity: float
    semantic_similarity: float | None


@dataclass(frozen=True)
class NodeMatching:
    """A one-to-one matching. ``pairs`` are sorted by reference label then id."""

    pairs: tuple[MatchedPair, ...]
    unmatched_pred: tuple[str, ...]
    unmatched_ref: tuple[str, ...]
    threshold: float
    string_weight: float
    embedder: str
    fallback: bool
    tie_break: str = "none"  # "none" (no repeated labels) | "exact" | "iterated"
    tie_candidates: int = 1  # assignments evaluated by the tie break

    @property
    def pred_to_ref(self) -> dict[str, str]:
        return {p.pred_id: p.ref_id for p in self.pairs}

    def to_dict(self) -> dict:
        return {
            "pairs": [asdict(p) for p in self.pairs],
            "unmatched_pred": list(self.unmatched_pred),
            "unmatched_ref": list(self.unmatched_ref),
            "threshold": self.threshold,
            "string_weight": self.string_weight,
            "embedder": self.embedder,
            "fallback": self.fallback,
            "tie_break": self.tie_break,
            "tie_candidates": self.tie_candidates,
        }


def similarity_matrices(
    pred_labels: Sequence[str],
    ref_labels: Sequence[str],
    config: MatchingConfig,
    embedder: LabelEmbedder | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(sim, string_sim, semantic_sim)`` matrices of shape (len(pred), len(ref))."""
    embedder = embedder or get_embedder(config.embedder)
    s_str = string_similarity(pred_labels, ref_labels)
    s_sem = embedder.similarity([fold(x) for x in pred_labels], [fold(x) for x in ref_labels])
    if s_sem is None:
        return s_str, s_str, None
    w = config.string_weight
    return w * s_str + (1.0 - w) * s_sem, s_str, s_sem


def match_nodes(
    pred: DiagramGraph,
    ref: DiagramGraph,
    config: MatchingConfig | None = None,
    embedder: LabelEmbedder | None = None,
    objective: Objective | None = None,
) -> NodeMatching:
    """Optimal one-to-one matching of ``pred`` nodes to ``ref`` nodes (see module docstring).

    ``objective`` ranks the assignments of the tie space (default: :func:`edge_agreement`).
    """
    config = config or MatchingConfig()
    embedder = embedder or get_embedder(config.embedder)
    p_order, r_order = canonical_order(pred), canonical_order(ref)
    p_nodes = [pred.nodes[i] for i in p_order]
    r_nodes = [ref.nodes[i] for i in r_order]
    sim, s_str, s_sem = similarity_matrices(
        [n.label for n in p_nodes], [n.label for n in r_nodes], config, embedder
    )
    chosen: list[tuple[int, int]] = []
    method, evaluated = "none", 1
    if p_nodes and r_nodes:
        allowed = sim >= config.threshold
        rows, cols = linear_sum_assignment(np.where(allowed, sim, 0.0), maximize=True)
        chosen = [(int(i), int(j)) for i, j in zip(rows, cols, strict=True) if allowed[i, j]]
        if objective is None:
            objective = edge_agreement(pred, ref)
        p_col, r_col = wl_colours(pred), wl_colours(ref)
        chosen, method, evaluated = best_in_tie_space(
            chosen, [fold(n.label) for n in p_nodes], [fold(n.label) for n in r_nodes],
            lambda pairs: objective({p_nodes[i].id: r_nodes[j].id for i, j in pairs}),
            [p_col[i] for i in p_order], [r_col[j] for j in r_order],
        )
    pairs = [
        MatchedPair(
            pred_id=p_nodes[i].id,
            ref_id=r_nodes[j].id,
            pred_label=p_nodes[i].label,
            ref_label=r_nodes[j].label,
            similarity=float(sim[i, j]),
            string_similarity=float(s_str[i, j]),
            semantic_similarity=None if s_sem is None else float(s_sem[i, j]),
        )
        for i, j in chosen
    ]
    pairs.sort(key=lambda p: (p.ref_label, p.ref_id))
    matched_p = {p.pred_id for p in pairs}
    matched_r = {p.ref_id for p in pairs}
    return NodeMatching(
        pairs=tuple(pairs),
        unmatched_pred=tuple(n.id for n in p_nodes if n.id not in matched_p),
        unmatched_ref=tuple(n.id for n in r_nodes if n.id not in matched_r),
        threshold=config.threshold,
        string_weight=config.string_weight,
        embedder=embedder.name,
        fallback=embedder.is_fallback,
        tie_break=method,
        tie_candidates=evaluated,
    )


def edge_agreement(pred: DiagramGraph, ref: DiagramGraph) -> Objective:
    """The default tie-break objective: how many predicted edges ``u -> v`` have partners
    ``a -> b`` that are a reference edge.

    >>> from sciflow.format.graph import DiagramGraph
    >>> g = DiagramGraph.from_dict({"id": "g", "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
    ...     "edges": [{"source": "a", "target": "b"}]})
    >>> edge_agreement(g, g)({"a": "a", "b": "b"}), edge_agreement(g, g)({"a": "b", "b": "a"})
    (1, 0)
    """
    ref_edges = {(e.source, e.target) for e in ref.edges}
    pred_edges = [(e.source, e.target) for e in pred.edges]

    def agreement(m: Mapping[str, str]) -> int:
        return sum((m.get(u), m.get(v)) in ref_edges for u, v in pred_edges)

    return agreement


def _classes(keys: Sequence[str]) -> dict[str, list[int]]:
    """Indices grouped by key, in first-occurrence order."""
    groups: dict[str, list[int]] = {}
    for k, key in enumerate(keys):
        groups.setdefault(key, []).append(k)
    return groups


def _distinct_permutations(items: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Every distinct ordering of ``items`` (equal items are interchangeable), in a fixed
    order; the work is proportional to the number of distinct orderings.

    >>> _distinct_permutations([None, 1, None])
    [(1, None, None), (None, 1, None), (None, None, 1)]
    """
    values = sorted(set(items), key=lambda x: (x is None, x))
    counts = {v: 0 for v in values}
    for x in items:
        counts[x] += 1
    out: list[tuple[Any, ...]] = []

    def extend(prefix: list[Any]) -> None:
        if len(prefix) == len(items):
            out.append(tuple(prefix))
            return
        for v in values:
            if counts[v]:
                counts[v] -= 1
                prefix.append(v)
                extend(prefix)
                prefix.pop()
                counts[v] += 1

    extend([])
    return out


def tie_space_size(pairs: Sequence[tuple[int, int]], p_keys: Sequence[str], r_keys: Sequence[str]) -> int:
    """Number of distinct assignments in the tie space of ``pairs``: for each predicted
    class, the ways to choose which members go to which reference class (a multinomial);
    for each reference class with ``u`` members left unmatched, ``|class|! / u!``.

    >>> tie_space_size([(0, 0), (1, 1), (2, 2)], ["layer"] * 3, ["layer"] * 3)  # a 3-cycle of "Layer"
    6
    """
    partner = dict(pairs)
    size = 1
    for members in _classes(p_keys).values():
        slots = [r_keys[partner[i]] if i in partner else None for i in members]
        counts: dict[Any, int] = {}
        for x in slots:
            counts[x] = counts.get(x, 0) + 1
        size *= math.factorial(len(slots)) // math.prod(math.factorial(c) for c in counts.values())
    matched_r = {j for _, j in pairs}
    for members in _classes(r_keys).values():
        unmatched = sum(j not in matched_r for j in members)
        size *= math.factorial(len(members)) // math.factorial(unmatched)
    return size


def best_in_tie_space(
    pairs: list[tuple[int, int]],
    p_keys: Sequence[str],
    r_keys: Sequence[str],
    score: Callable[[list[tuple[int, int]]], Any],
    p_colours: Sequence[str] | None = None,
    r_colours: Sequence[str] | None = None,
) -> tuple[list[tuple[int, int]], str, int]:
    """The member of the tie space of ``pairs`` (module docstring) with the highest ``score``,
    the method used ("none", "exact" or "iterated") and how many members were scored.

    ``p_keys`` / ``r_keys`` are the class keys (folded labels) of the predicted / reference
    indices. Among equal scores the first member in enumeration order is kept. The iterated
    search starts from ``pairs`` re-paired by Weisfeiler-Lehman colour inside each block of
    pairs between two classes, so that structurally alike nodes start together.
    """
    size = tie_space_size(pairs, p_keys, r_keys)
    if size <= 1:
        return sorted(pairs), "none", 1
    if size <= EXACT_LIMIT:
        return _exact(pairs, p_keys, r_keys, score)
    if p_colours is not None and r_colours is not None:
        pairs = _colour_aligned(pairs, p_keys, r_keys, p_colours, r_colours)
    return _iterated(pairs, p_keys, r_keys, score)


def _colour_aligned(
    pairs: list[tuple[int, int]], p_keys: Sequence[str], r_keys: Sequence[str],
    p_colours: Sequence[str], r_colours: Sequence[str],
) -> list[tuple[int, int]]:
    blocks: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for i, j in pairs:
        blocks.setdefault((p_keys[i], r_keys[j]), []).append((i, j))
    out: list[tuple[int, int]] = []
    for block in blocks.values():
        ps = sorted((i for i, _ in block), key=lambda i: (p_colours[i], i))
        rs = sorted((j for _, j in block), key=lambda j: (r_colours[j], j))
        out += zip(ps, rs, strict=True)
    return sorted(out)


def _exact(
    pairs: list[tuple[int, int]], p_keys: Sequence[str], r_keys: Sequence[str],
    score: Callable[[list[tuple[int, int]]], Any],
) -> tuple[list[tuple[int, int]], str, int]:
    """Score every distinct member of the tie space: first the predicted side's choices of
    which members go to which reference class, then every arrangement of each reference
    class's members among the predicted nodes sent to it (and the unmatched slots)."""
    partner = dict(pairs)
    p_classes = list(_classes(p_keys).values())
    r_classes = list(_classes(r_keys).values())
    # predicted side: members of a class exchange partners; only the reference class reached matters
    p_choices = []
    for members in p_classes:
        slots = [partner.get(i) for i in members]
        by_class: dict[Any, list[Any]] = {}
        for t in slots:
            by_class.setdefault(None if t is None else r_keys[t], []).append(t)
        options = []
        for arrangement in _distinct_permutations([None if t is None else r_keys[t] for t in slots]):
            pools = {k: list(v) for k, v in by_class.items()}
            options.append([(i, pools[c].pop(0)) for i, c in zip(members, arrangement, strict=True)])
        p_choices.append(options)
    best, best_score, evaluated = sorted(pairs), None, 0
    for choice in itertools.product(*p_choices):
        base = {i: t for option in choice for i, t in option if t is not None}
        r_to_p = {j: i for i, j in base.items()}
        r_choices = []
        for members in r_classes:
            slots = [r_to_p.get(j) for j in members]
            r_choices.append([list(zip(members, arr, strict=True)) for arr in _distinct_permutations(slots)])

        for rchoice in itertools.product(*r_choices):
            # every reference index lies in one class, so rchoice is the whole assignment
            cand = sorted((i, j) for option in rchoice for j, i in option if i is not None)
            evaluated += 1
            s = score(cand)
            if best_score is None or s > best_score:
                best, best_score = cand, s
    return best, "exact", evaluated


def _iterated(
    pairs: list[tuple[int, int]], p_keys: Sequence[str], r_keys: Sequence[str],
    score: Callable[[list[tuple[int, int]]], Any],
) -> tuple[list[tuple[int, int]], str, int]:
    """Steepest ascent over swaps of two partners within one class, to a fixpoint."""
    p_classes = [c for c in _classes(p_keys).values() if len(c) > 1]
    r_classes = [c for c in _classes(r_keys).values() if len(c) > 1]
    current, current_score, evaluated = sorted(pairs), score(sorted(pairs)), 1
    while True:
        best_move, best_score = None, current_score
        p_of = {i for i, _ in current}
        r_of = {j for _, j in current}
        moves: list[list[tuple[int, int]]] = []
        for c in p_classes:  # two predicted nodes exchange partners (or one takes the other's)
            for x, y in itertools.combinations(c, 2):
                if x in p_of or y in p_of:
                    swap = {x: y, y: x}
                    moves.append(sorted((swap.get(i, i), j) for i, j in current))
        for c in r_classes:
            for x, y in itertools.combinations(c, 2):
                if x in r_of or y in r_of:
                    swap = {x: y, y: x}
                    moves.append(sorted((i, swap.get(j, j)) for i, j in current))
        for cand in moves:
            evaluated += 1
            s = score(cand)
            if s > best_score:
                best_move, best_score = cand, s
        if best_move is None:
            return current, "iterated", evaluated
        current, current_score = best_move, best_score


def wl_colours(graph: DiagramGraph) -> list[str]:
    """Weisfeiler-Lehman colours of ``graph.nodes``: the folded label refined over in- and
    out-neighbours until the partition stops changing (at most ``len(nodes)`` rounds, at
    least ``WL_ROUNDS``). Equal structure gives equal colours in any two graphs."""
    idx = {n.id: k for k, n in enumerate(graph.nodes)}
    outs: list[list[int]] = [[] for _ in graph.nodes]
    ins: list[list[int]] = [[] for _ in graph.nodes]
    for e in graph.edges:
        outs[idx[e.source]].append(idx[e.target])
        ins[idx[e.target]].append(idx[e.source])
    colour = [fold(n.label) for n in graph.nodes]
    classes = len(set(colour))
    for r in range(max(WL_ROUNDS, len(graph.nodes))):
        colour = [
            _digest(
                colour[k]
                + "|o:" + ",".join(sorted(colour[t] for t in outs[k]))
                + "|i:" + ",".join(sorted(colour[s] for s in ins[k]))
            )
            for k in range(len(graph.nodes))
        ]
        now = len(set(colour))
        if r + 1 >= WL_ROUNDS and now == classes:
            break
        classes = now
    return colour


def canonical_order(graph: DiagramGraph) -> list[int]:
    """Indices of ``graph.nodes`` in an order that depends on labels and structure only.

    Nodes are keyed by their folded label, the raw label, then their Weisfeiler-Lehman
    colour (:func:`wl_colours`); node position decides only between nodes that no label
    or neighbourhood distinguishes.
    """
    colour = wl_colours(graph)
    return sorted(
        range(len(graph.nodes)),
        key=lambda k: (fold(graph.nodes[k].label), graph.nodes[k].label, colour[k]),
    )


def _digest(s: str) -> str:
    return hashlib.blake2b(s.encode("utf-8"), digest_size=8).hexdigest()
