"""Text-level score: 0.3 coverage + 0.3 faithfulness + 0.4 alignment (SciFlow-Bench, App. A.2).

Inputs: the predicted graph, its reference, and optionally other text read in the image
(``extra_texts``, e.g. OCR lines the parser did not turn into nodes). The *prompt* is the
reference's structured prompt: its ``components`` (else the reference node labels), its
``relations`` (else the reference edges as label pairs) and its ``text`` (else the
components and relations written out).

Definitions
-----------
- **coverage** = matched components / |components|, with the one-to-one node matcher of
  the graph level (:func:`sciflow.metrics.matching.match_nodes`) between the components and
  the predicted node labels. No components: coverage is 1 when the prediction is empty too,
  else 0.
- **faithfulness** = supported texts / |predicted texts|. The predicted texts are the node
  labels, the edge labels and ``extra_texts`` (empty strings dropped). A text is supported
  when its similarity to some component reaches the matching threshold (many texts may lean
  on one component; duplicates are the graph level's business), or when its folded form
  occurs in the folded prompt text (e.g. an edge label the prompt mentions). A prediction
  with no text at all scores 0: it conveys nothing of the prompt.
- **alignment** (``deterministic`` backend) =
  ``relation_weight * relation_recall + embedding_weight * text_similarity``, where
  relation_recall is the edge recall of the prediction against the prompt's relations
  graph (directed, with the graph level's skip-path rule), and text_similarity is the
  cosine of MiniLM embeddings of the serialized prediction (components and relations,
  sorted, so ids and order never matter) and the prompt text, computed over chunks so that
  nothing is truncated. With the ``none`` embedder, text_similarity is the rapidfuzz
  token-set ratio instead and the result is labelled a fallback.
  The ``judge`` backend asks a configured OpenAI-compatible endpoint instead
  (:mod:`sciflow.judge`); the call is made by the caller and passed in as ``judge_alignment``.
- **text score** = coverage_w * coverage + faithfulness_w * faithfulness + alignment_w * alignment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from sciflow.config import MatchingConfig, TextConfig
from sciflow.embedding import LabelEmbedder, get_embedder
from sciflow.graph import DiagramGraph, Edge, Node
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.matching import fold, match_nodes, similarity_matrices


@dataclass(frozen=True)
class TextLevelResult:
    score: float
    coverage: float
    faithfulness: float
    alignment: float
    relation_recall: float
    text_similarity: float | None
    covered: tuple[str, ...]
    uncovered: tuple[str, ...]
    unsupported_texts: tuple[str, ...]
    alignment_backend: str
    fallback: bool
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "coverage": self.coverage,
            "faithfulness": self.faithfulness,
            "alignment": self.alignment,
            "relation_recall": self.relation_recall,
            "text_similarity": self.text_similarity,
            "covered_components": list(self.covered),
            "uncovered_components": list(self.uncovered),
            "unsupported_texts": list(self.unsupported_texts),
            "alignment_backend": self.alignment_backend,
            "fallback": self.fallback,
            **self.details,
        }


def prompt_graph(ref: DiagramGraph) -> DiagramGraph:
    """The prompt as a graph: its components as nodes and relations as edges (falling back
    to the reference's own nodes and edges when the prompt lists none)."""
    p = ref.prompt
    if p is None or not p.components:
        return DiagramGraph(id=ref.id, nodes=ref.nodes, edges=ref.edges)
    labels = list(dict.fromkeys(p.components))
    ids = {lab: f"c{i}" for i, lab in enumerate(labels)}
    edges = tuple(dict.fromkeys(Edge(ids[a], ids[b]) for a, b in p.relations if a in ids and b in ids))
    return DiagramGraph(id=ref.id, nodes=tuple(Node(ids[lab], lab) for lab in labels), edges=edges)


def serialize(graph: DiagramGraph) -> str:
    """Order- and id-independent text form of a graph: sorted components, sorted relations.

    >>> from sciflow.graph import DiagramGraph
    >>> g = DiagramGraph.from_dict({"id": "g", "nodes": [{"id": "b", "label": "Decoder"},
    ...     {"id": "a", "label": "Encoder"}], "edges": [{"source": "a", "target": "b"}]})
    >>> print(serialize(g))
    Components: Decoder; Encoder
    Relations:
    Encoder -> Decoder
    """
    lab = {n.id: n.label for n in graph.nodes}
    comps = "; ".join(sorted(n.label for n in graph.nodes))
    rels = sorted(f"{lab[e.source]} -> {lab[e.target]}" for e in graph.edges)
    return "\n".join([f"Components: {comps}", "Relations:", *rels])


def prompt_text(ref: DiagramGraph) -> str:
    if ref.prompt is not None and ref.prompt.text.strip():
        return ref.prompt.text
    return serialize(prompt_graph(ref))


def text_level(
    pred: DiagramGraph,
    ref: DiagramGraph,
    config: TextConfig | None = None,
    matching: MatchingConfig | None = None,
    extra_texts: Sequence[str] = (),
    embedder: LabelEmbedder | None = None,
    judge_alignment: float | None = None,
) -> TextLevelResult:
    """Text-level comparison of a prediction with the reference's prompt (module docstring)."""
    config = config or TextConfig()
    matching = matching or MatchingConfig()
    embedder = embedder or get_embedder(matching.embedder)
    pg = prompt_graph(ref)
    ptext = prompt_text(ref)

    # coverage: one-to-one, like the graph level
    m = match_nodes(pred, pg, matching, embedder)
    covered_ids = {p.ref_id for p in m.pairs}
    covered = tuple(n.label for n in pg.nodes if n.id in covered_ids)
    uncovered = tuple(n.label for n in pg.nodes if n.id not in covered_ids)
    if pg.nodes:
        coverage = len(covered) / len(pg.nodes)
    else:
        coverage = 1.0 if not pred.nodes else 0.0

    # faithfulness: every text read must be supported by the prompt
    texts = [t for t in [*(n.label for n in pred.nodes), *(e.label or "" for e in pred.edges), *extra_texts]
             if t.strip()]
    folded_prompt = f" {fold(ptext)} "
    unsupported: list[str] = []
    if texts:
        comp_labels = [n.label for n in pg.nodes]
        sim = similarity_matrices(texts, comp_labels, matching, embedder)[0] if comp_labels else None
        for i, t in enumerate(texts):
            by_component = sim is not None and bool((sim[i] >= matching.threshold).any())
            if not by_component and f" {fold(t)} " not in folded_prompt:
                unsupported.append(t)
        faithfulness = 1.0 - len(unsupported) / len(texts)
    else:
        faithfulness = 0.0

    # alignment
    relation_recall = graph_level(pred, pg, matching, embedder=embedder).edge_recall
    fallback = embedder.is_fallback
    if config.alignment_backend == "judge":
        if judge_alignment is None:
            raise ValueError("alignment_backend is 'judge' but no judge_alignment was given")
        text_sim: float | None = None
        alignment = judge_alignment
    else:
        text_sim = embedder.text_similarity(serialize(pred), ptext)
        if text_sim is None:  # no embedding model: string fallback
            text_sim = fuzz.token_set_ratio(fold(serialize(pred)), fold(ptext)) / 100.0
        alignment = config.relation_weight * relation_recall + config.embedding_weight * text_sim
    score = config.coverage * coverage + config.faithfulness * faithfulness + config.alignment * alignment
    return TextLevelResult(
        score=score,
        coverage=coverage,
        faithfulness=faithfulness,
        alignment=alignment,
        relation_recall=relation_recall,
        text_similarity=text_sim,
        covered=covered,
        uncovered=uncovered,
        unsupported_texts=tuple(sorted(unsupported)),
        alignment_backend=config.alignment_backend,
        fallback=fallback,
        details={"n_texts": len(texts), "n_components": len(pg.nodes), "n_relations": len(pg.edges)},
    )
