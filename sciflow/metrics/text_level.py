"""Text-level score: 0.3 coverage + 0.3 faithfulness + 0.4 alignment (SciFlow-Bench, App. A.2).

Inputs: the predicted graph, its reference, and optionally other text read in the image
(``extra_texts``: OCR lines the parser did not turn into a node or an arrow label, such as
titles, captions and legends; ``sciflow score`` passes the parser's ``meta["free_texts"]``).
The *prompt* is the reference's structured prompt: its ``components`` (else the reference
node labels), its ``relations`` (else the reference edges as label pairs) and its ``text``.
The *prompt graph* holds the components as nodes (repeated components stay separate
nodes) and the relations as edges; when the components and relations are exactly the
reference's own labels and edges, it is the reference graph itself.

Definitions (metric version 2)
------------------------------
- **coverage** = matched components / |components|, with the one-to-one node matcher of
  the graph level (:func:`sciflow.metrics.matching.match_nodes`) between the prompt graph
  and the prediction. No components: coverage is 1 when the prediction is empty too, else 0.
- **faithfulness** = supported statements / statements. The statements are every node
  label, every arrow label, every extra text (empty strings dropped) and every predicted
  arrow. Support:

  - a node label is supported when the coverage matching pairs its node with a component;
    an unmatched node whose label reaches the matching threshold against some component
    is a *duplicate* (the component is drawn already) and is unsupported; any other
    unmatched node is supported only when the prompt mentions it;
  - an arrow label or extra text is supported when it reaches the threshold against some
    component (a legend may repeat a name) or the prompt mentions it;
  - an arrow ``u -> v`` is supported when both ends are matched and their components form
    a prompt relation: reversed, invented and duplicated relations are not.

  *Mentions*: the folded text occurs, on word boundaries, in the folded prompt text with
  the structured template's own words removed, or in an arrow or group label of the
  reference (``Title:``, the instruction sentence,
  ``Components (n):``, ``Groups``, ``Relations``, ``(group: …)``, ``->``, ``Layout:``), so
  "Components" or "Relations" are never support. A prediction with no statement scores 0.
- **alignment** (``deterministic`` backend) =
  ``relation_weight * relation_F1 + embedding_weight * text_similarity``. relation_F1 is the
  graph level's edge F1 of the prediction against the prompt graph (directed, with its
  rules for skipped boxes), so it has relation precision beside relation recall.
  text_similarity is the cosine of MiniLM embeddings of the serialized prediction and the
  serialized prompt graph (:func:`serialize`: sorted components and relations, so ids and
  order never matter, and a perfect copy gives exactly the same text), over chunks so that
  nothing is truncated. With the ``none`` embedder it is the rapidfuzz token-set ratio
  instead and the result is labelled a fallback. The ``judge`` backend asks a configured
  OpenAI-compatible endpoint instead (:mod:`sciflow.models.judge`); the call is made by the caller
  and passed in as ``judge_alignment``.
- **text score** = coverage_w * coverage + faithfulness_w * faithfulness + alignment_w * alignment.

Changed in version 2: relation precision (was recall alone); duplicated boxes and arrows
cost faithfulness (every copy leaned on one component before, so a diagram drawn twice
scored like the original); arrows are statements; template words are not support; the
text similarity compares like with like (the serialized prompt graph, not the prompt's
prose), so a perfect copy scores 1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from sciflow.config import Config, MatchingConfig, TextConfig
from sciflow.format.graph import DiagramGraph, Edge, Node
from sciflow.format.prompt_template import INSTRUCTION
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.matching import fold, similarity_matrices
from sciflow.models.embedding import LabelEmbedder, get_embedder


@dataclass(frozen=True)
class TextLevelResult:
    score: float
    coverage: float
    faithfulness: float
    alignment: float
    relation_recall: float
    relation_precision: float
    relation_f1: float
    text_similarity: float | None
    covered: tuple[str, ...]
    uncovered: tuple[str, ...]
    unsupported_texts: tuple[str, ...]
    duplicate_texts: tuple[str, ...]
    unsupported_relations: tuple[str, ...]
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
            "relation_precision": self.relation_precision,
            "relation_f1": self.relation_f1,
            "text_similarity": self.text_similarity,
            "covered_components": list(self.covered),
            "uncovered_components": list(self.uncovered),
            "unsupported_texts": list(self.unsupported_texts),
            "duplicate_texts": list(self.duplicate_texts),
            "unsupported_relations": list(self.unsupported_relations),
            "alignment_backend": self.alignment_backend,
            "fallback": self.fallback,
            **self.details,
        }


def prompt_graph(ref: DiagramGraph) -> DiagramGraph:
    """The prompt as a graph: its components as nodes (repeats kept) and its relations as
    edges; the reference itself when the prompt lists exactly its labels and edges, or
    lists no components.

    A relation between repeated component labels joins their first occurrences (a prompt
    made by :func:`sciflow.bench.prompts.build_prompt` always takes the first branch).
    """
    p = ref.prompt
    if p is None or not p.components:
        return DiagramGraph(id=ref.id, nodes=ref.nodes, edges=ref.edges)
    lab = {n.id: n.label for n in ref.nodes}
    same_nodes = sorted(p.components) == sorted(lab.values())
    same_edges = sorted(map(tuple, p.relations)) == sorted((lab[e.source], lab[e.target]) for e in ref.edges)
    if same_nodes and same_edges:
        return DiagramGraph(id=ref.id, nodes=ref.nodes, edges=ref.edges)
    nodes = tuple(Node(f"c{i}", label) for i, label in enumerate(p.components))
    first: dict[str, str] = {}
    for n in nodes:
        first.setdefault(n.label, n.id)
    edges = tuple(dict.fromkeys(Edge(first[a], first[b]) for a, b in p.relations if a in first and b in first))
    return DiagramGraph(id=ref.id, nodes=nodes, edges=edges)


_TEMPLATE_LINE = re.compile(r"^\s*(?:(?:components|groups|relations)\s*(?:\(\d+\))?\s*:.*)$", re.IGNORECASE)
_TEMPLATE_PREFIX = re.compile(r"^\s*(?:title|layout)\s*:\s*|^\s*-\s+", re.IGNORECASE)
_TEMPLATE_INNER = re.compile(r"\((?:group|inside):\s*([^)]*)\)|->", re.IGNORECASE)


def prompt_content(text: str) -> str:
    """The prompt text without the structured template's own words (module docstring).

    >>> prompt_content("Title: Toy\\nComponents (2):\\n- Encoder (group: Backbone)\\n"
    ...                "Relations: none\\nLayout: left-to-right")
    'Toy\\nEncoder Backbone\\nleft-to-right'
    """
    lines = []
    for line in text.replace(INSTRUCTION, "").splitlines():
        if _TEMPLATE_LINE.match(line):
            continue
        line = _TEMPLATE_PREFIX.sub("", line)
        line = _TEMPLATE_INNER.sub(lambda m: f" {m.group(1) or ' '} ", line)
        if line.strip():
            lines.append(" ".join(line.split()))
    return "\n".join(lines)


def free_texts(graph: DiagramGraph) -> tuple[str, ...]:
    """The strings of ``graph.meta["free_texts"]`` (written by the parser's Graph Architect;
    a graph file may carry them too); anything that is not a list of strings counts as none."""
    texts = graph.meta.get("free_texts") if isinstance(graph.meta, Mapping) else None
    if not isinstance(texts, list):
        return ()
    return tuple(t for t in texts if isinstance(t, str))


def serialize(graph: DiagramGraph) -> str:
    """Order- and id-independent text form of a graph: sorted components, sorted relations.

    >>> from sciflow.format.graph import DiagramGraph
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
    config: TextConfig | Config | None = None,
    matching: MatchingConfig | None = None,
    extra_texts: Sequence[str] | None = None,
    embedder: LabelEmbedder | None = None,
    judge_alignment: float | None = None,
) -> TextLevelResult:
    """Text-level comparison of a prediction with the reference's prompt (module docstring).

    ``extra_texts`` defaults to the prediction's own ``meta["free_texts"]`` (what the parser
    read outside nodes and arrow labels); pass ``()`` to leave free text out. ``config`` is the
    ``[text]`` table or a whole :class:`~sciflow.config.Config` (its ``text`` and, unless
    ``matching`` is given, its ``matching``)."""
    if isinstance(config, Config):
        matching = matching or config.matching
        config = config.text
    if extra_texts is None:
        extra_texts = free_texts(pred)
    config = config or TextConfig()
    matching = matching or MatchingConfig()
    embedder = embedder or get_embedder(matching.embedder)
    pg = prompt_graph(ref)
    # the prompt's content, and the reference's own arrow and group labels
    own = [e.label for e in ref.edges if e.label] + [g.label for g in ref.groups if g.label]
    mentioned = " " + " \n ".join(fold(t) for t in [prompt_content(prompt_text(ref)), *own]) + " "

    # coverage and relations: the graph level's matching against the prompt graph
    g = graph_level(pred, pg, matching, embedder=embedder)
    to_comp = g.matching.pred_to_ref
    covered_ids = set(to_comp.values())
    covered = tuple(n.label for n in pg.nodes if n.id in covered_ids)
    uncovered = tuple(n.label for n in pg.nodes if n.id not in covered_ids)
    if pg.nodes:
        coverage = len(covered) / len(pg.nodes)
    else:
        coverage = 1.0 if not pred.nodes else 0.0

    # faithfulness: every statement must be supported by the prompt
    comp_labels = [n.label for n in pg.nodes]

    def near_component(texts: list[str]) -> list[bool]:
        if not texts or not comp_labels:
            return [False] * len(texts)
        sim = similarity_matrices(texts, comp_labels, matching, embedder)[0]
        return [bool(row.any()) for row in sim >= matching.threshold]

    def is_mentioned(t: str) -> bool:
        f = fold(t)
        return bool(f) and f" {f} " in mentioned

    unsupported: list[str] = []
    duplicates: list[str] = []
    labels = [n for n in pred.nodes if n.label.strip()]
    free_nodes = [n for n in labels if n.id not in to_comp]
    for n, near in zip(free_nodes, near_component([n.label for n in free_nodes]), strict=True):
        if near:
            duplicates.append(n.label)
        elif not is_mentioned(n.label):
            unsupported.append(n.label)
    texts = [t for t in [*(e.label or "" for e in pred.edges), *extra_texts] if t.strip()]
    for t, near in zip(texts, near_component(texts), strict=True):
        if not near and not is_mentioned(t):
            unsupported.append(t)
    relations = {(e.source, e.target) for e in pg.edges}
    pred_label = {n.id: n.label for n in pred.nodes}
    arrows = list(dict.fromkeys((e.source, e.target) for e in pred.edges))
    unsupported_relations = [f"{pred_label[u]} -> {pred_label[v]}" for u, v in arrows
                             if (to_comp.get(u), to_comp.get(v)) not in relations]
    n_texts = len(labels) + len(texts)
    n_statements = n_texts + len(arrows)
    bad = len(unsupported) + len(duplicates) + len(unsupported_relations)
    faithfulness = 1.0 - bad / n_statements if n_statements else 0.0

    # alignment
    fallback = embedder.is_fallback
    if config.alignment_backend == "judge":
        if judge_alignment is None:
            raise ValueError("alignment_backend is 'judge' but no judge_alignment was given")
        text_sim: float | None = None
        alignment = judge_alignment
    else:
        target = serialize(pg)
        text_sim = embedder.text_similarity(serialize(pred), target)
        if text_sim is None:  # no embedding model: string fallback
            text_sim = fuzz.token_set_ratio(fold(serialize(pred)), fold(target)) / 100.0
        alignment = config.relation_weight * g.edge_f1 + config.embedding_weight * text_sim
    score = config.coverage * coverage + config.faithfulness * faithfulness + config.alignment * alignment
    return TextLevelResult(
        score=score,
        coverage=coverage,
        faithfulness=faithfulness,
        alignment=alignment,
        relation_recall=g.edge_recall,
        relation_precision=g.edge_precision,
        relation_f1=g.edge_f1,
        text_similarity=text_sim,
        covered=covered,
        uncovered=uncovered,
        unsupported_texts=tuple(sorted(unsupported)),
        duplicate_texts=tuple(sorted(duplicates)),
        unsupported_relations=tuple(sorted(unsupported_relations)),
        alignment_backend=config.alignment_backend,
        fallback=fallback,
        details={"n_statements": n_statements, "n_texts": n_texts,
                 "n_components": len(pg.nodes), "n_relations": len(pg.edges)},
    )
