"""One-to-one semantic node matching.

Definition
----------
For a predicted label ``p`` and a reference label ``r``::

    fold(s)        = NFKC(s), lower-cased, Unicode punctuation replaced by spaces,
                     whitespace collapsed (symbols such as "⊕" are kept)
    string_sim     = rapidfuzz normalized Indel similarity of fold(p) and fold(r), in [0, 1]
                     (1.0 when both fold to the empty string)
    semantic_sim   = cosine of the sentence embeddings of fold(p) and fold(r), clipped to [0, 1]
                     and rounded to 6 decimals (see :mod:`sciflow.embedding`)
    sim            = w * string_sim + (1 - w) * semantic_sim        (w = matching.string_weight)

With the ``none`` embedder ``sim = string_sim`` (a labelled fallback).

The matching is the assignment that maximises the total similarity over pairs with
``sim >= threshold`` (``scipy.optimize.linear_sum_assignment`` on those pairs only), so
every node is matched at most once: a prediction that draws "Encoder" three times gets
one match, not three. Pairs below the threshold are never matched.

Ties (e.g. duplicated labels) are broken, in this order, by (1) structural support: how
many of the node's in- and out-neighbours have an above-threshold counterpart among the
candidate's in-/out-neighbours (added as ``1e-6`` per neighbour, far below any label
difference); (2) a canonical order of nodes by label and neighbourhood (a few rounds of
Weisfeiler-Lehman refinement), never by node id or file order. Node ids and the order of
nodes and edges therefore never change the matching's score.

Example
-------
>>> from sciflow.graph import DiagramGraph
>>> ref = DiagramGraph.from_dict({"id": "r", "nodes": [{"id": "a", "label": "Image Encoder"}], "edges": []})
>>> pred = DiagramGraph.from_dict({"id": "p", "nodes": [{"id": "x", "label": "image-encoder"}], "edges": []})
>>> m = match_nodes(pred, ref, MatchingConfig(embedder="none"))
>>> [(p.pred_id, p.ref_id, p.similarity) for p in m.pairs]
[('x', 'a', 1.0)]
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
from rapidfuzz.distance import Indel
from rapidfuzz.process import cdist
from scipy.optimize import linear_sum_assignment

from sciflow.config import MatchingConfig
from sciflow.embedding import LabelEmbedder, get_embedder
from sciflow.graph import DiagramGraph

STRUCTURE_EPS = 1e-6
WL_ROUNDS = 3


@lru_cache(maxsize=65536)
def fold(label: str) -> str:
    """Fold case, punctuation and whitespace.

    >>> fold("  Image-Encoder\\n(ViT) ")
    'image encoder vit'
    >>> fold("⊕")
    '⊕'
    """
    s = unicodedata.normalize("NFKC", label).lower()
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
) -> NodeMatching:
    """Optimal one-to-one matching of ``pred`` nodes to ``ref`` nodes (see module docstring)."""
    config = config or MatchingConfig()
    embedder = embedder or get_embedder(config.embedder)
    p_order = canonical_order(pred)
    r_order = canonical_order(ref)
    p_nodes = [pred.nodes[i] for i in p_order]
    r_nodes = [ref.nodes[i] for i in r_order]
    sim, s_str, s_sem = similarity_matrices(
        [n.label for n in p_nodes], [n.label for n in r_nodes], config, embedder
    )
    pairs: list[MatchedPair] = []
    if p_nodes and r_nodes:
        allowed = sim >= config.threshold
        support = _structural_support(pred, ref, p_nodes, r_nodes, allowed)
        gain = np.where(allowed, sim + STRUCTURE_EPS * support, 0.0)
        rows, cols = linear_sum_assignment(gain, maximize=True)
        for i, j in zip(rows, cols, strict=True):
            if not allowed[i, j]:
                continue
            pairs.append(
                MatchedPair(
                    pred_id=p_nodes[i].id,
                    ref_id=r_nodes[j].id,
                    pred_label=p_nodes[i].label,
                    ref_label=r_nodes[j].label,
                    similarity=float(sim[i, j]),
                    string_similarity=float(s_str[i, j]),
                    semantic_similarity=None if s_sem is None else float(s_sem[i, j]),
                )
            )
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
    )


def _structural_support(
    pred: DiagramGraph, ref: DiagramGraph, p_nodes: list, r_nodes: list, allowed: np.ndarray
) -> np.ndarray:
    """support[i, j] = #out-neighbours of p_i with an allowed partner among out-neighbours
    of r_j, plus the same for in-neighbours."""
    pi = {n.id: k for k, n in enumerate(p_nodes)}
    ri = {n.id: k for k, n in enumerate(r_nodes)}
    p_out: list[list[int]] = [[] for _ in p_nodes]
    p_in: list[list[int]] = [[] for _ in p_nodes]
    for e in pred.edges:
        p_out[pi[e.source]].append(pi[e.target])
        p_in[pi[e.target]].append(pi[e.source])
    r_out: list[list[int]] = [[] for _ in r_nodes]
    r_in: list[list[int]] = [[] for _ in r_nodes]
    for e in ref.edges:
        r_out[ri[e.source]].append(ri[e.target])
        r_in[ri[e.target]].append(ri[e.source])
    support = np.zeros(allowed.shape)
    if not pred.edges or not ref.edges:
        return support
    for i in range(len(p_nodes)):
        for j in range(len(r_nodes)):
            if not allowed[i, j]:
                continue
            s = 0
            for pn, rn in ((p_out[i], r_out[j]), (p_in[i], r_in[j])):
                if pn and rn:
                    s += int(allowed[np.ix_(pn, rn)].any(axis=1).sum())
            support[i, j] = s
    return support


def canonical_order(graph: DiagramGraph) -> list[int]:
    """Indices of ``graph.nodes`` in an order that depends on labels and structure only.

    Nodes are keyed by their folded label refined by ``WL_ROUNDS`` rounds of
    Weisfeiler-Lehman hashing over in- and out-neighbours; the raw label breaks the
    remaining ties, then node position (only between nodes that no label or
    neighbourhood distinguishes).
    """
    idx = {n.id: k for k, n in enumerate(graph.nodes)}
    outs: list[list[int]] = [[] for _ in graph.nodes]
    ins: list[list[int]] = [[] for _ in graph.nodes]
    for e in graph.edges:
        outs[idx[e.source]].append(idx[e.target])
        ins[idx[e.target]].append(idx[e.source])
    colour = [fold(n.label) for n in graph.nodes]
    for _ in range(WL_ROUNDS):
        colour = [
            _digest(
                colour[k]
                + "|o:" + ",".join(sorted(colour[t] for t in outs[k]))
                + "|i:" + ",".join(sorted(colour[s] for s in ins[k]))
            )
            for k in range(len(graph.nodes))
        ]
    return sorted(
        range(len(graph.nodes)),
        key=lambda k: (fold(graph.nodes[k].label), graph.nodes[k].label, colour[k]),
    )


def _digest(s: str) -> str:
    return hashlib.blake2b(s.encode("utf-8"), digest_size=8).hexdigest()
