"""Graph-level score: 0.6 edge-F1 + 0.4 node-F1 (SciFlow-Bench, Appendix A.1), correct by construction.

Definition
----------
1. Nodes are matched one-to-one (:func:`sciflow.metrics.matching.match_nodes`).
   node precision = matched / |pred nodes|, node recall = matched / |ref nodes|.
2. Edges are directed and compared through the matching. A predicted edge ``u -> v`` with
   ``u`` matched to ``a`` and ``v`` matched to ``b`` is **correct** when

   - ``a -> b`` is a reference edge (*direct*), or
   - the reference has a directed path ``a ⇝ b`` whose intermediate nodes are all
     unmatched: the diagram skipped them (*skip path*). The reference edges on the
     shortest such paths count as recovered.

   Otherwise it is an error, classified as *unmatched endpoint* (``u`` or ``v`` has no
   reference counterpart), *reversed* (the reference supports ``b -> a`` directly or by a
   skip path, but not ``a -> b``) or *unsupported*.
   edge precision = correct predicted edges / |pred edges|;
   edge recall = distinct reference edges recovered / |ref edges|. A reference edge is
   credited at most once (the recovered edges form a set), and parallel predicted edges
   between the same two nodes are one edge, so both lie in [0, 1].
3. F1 = 2PR / (P + R) (0 when P + R = 0).
   graph score = edge_weight * edge-F1 + node_weight * node-F1 (defaults 0.6 / 0.4).

Empty cases: when both graphs have no nodes (resp. no edges), node (resp. edge) precision,
recall and F1 are 1; when exactly one side is empty they are 0.

Example
-------
>>> from sciflow.graph import DiagramGraph
>>> from sciflow.config import MatchingConfig
>>> chain = DiagramGraph.from_dict({"id": "r", "nodes": [{"id": k, "label": k} for k in "ABC"],
...     "edges": [{"source": "A", "target": "B"}, {"source": "B", "target": "C"}]})
>>> skip = DiagramGraph.from_dict({"id": "p", "nodes": [{"id": k, "label": k} for k in "AC"],
...     "edges": [{"source": "A", "target": "C"}]})
>>> r = graph_level(skip, chain, matching=MatchingConfig(embedder="none"))
>>> (r.edge_precision, r.edge_recall, round(r.node_f1, 4), round(r.score, 4))
(1.0, 1.0, 0.8, 0.92)
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any

from sciflow.config import GraphWeights, MatchingConfig
from sciflow.embedding import LabelEmbedder
from sciflow.graph import DiagramGraph
from sciflow.metrics.matching import NodeMatching, match_nodes


@dataclass(frozen=True)
class EdgeVerdict:
    """One predicted edge, in predicted ids and labels, with the reference edges it recovers."""

    source: str
    target: str
    source_label: str
    target_label: str
    verdict: str  # "direct" | "skip_path" | "reversed" | "unmatched_endpoint" | "unsupported"
    ref_edges: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class GraphLevelResult:
    node_precision: float
    node_recall: float
    node_f1: float
    edge_precision: float
    edge_recall: float
    edge_f1: float
    score: float
    matching: NodeMatching
    edges: tuple[EdgeVerdict, ...]
    missing_edges: tuple[tuple[str, str], ...]  # reference ids
    ref_labels: dict[str, str] = field(repr=False, default_factory=dict)
    weights: GraphWeights = field(default_factory=GraphWeights)

    # Diagnostics as data --------------------------------------------------
    @property
    def correct_edges(self) -> list[EdgeVerdict]:
        return [e for e in self.edges if e.verdict in ("direct", "skip_path")]

    def edges_with(self, verdict: str) -> list[EdgeVerdict]:
        return [e for e in self.edges if e.verdict == verdict]

    def diagnostics(self) -> dict[str, Any]:
        m = self.matching
        lab = self.ref_labels

        def edge(e: EdgeVerdict) -> dict[str, Any]:
            return {"source": e.source, "target": e.target, "source_label": e.source_label,
                    "target_label": e.target_label}

        return {
            "matched_nodes": [asdict(p) for p in m.pairs],
            "missing_nodes": [{"id": i, "label": lab[i]} for i in m.unmatched_ref],
            "hallucinated_nodes": list(m.unmatched_pred),
            "missing_edges": [
                {"source": a, "target": b, "source_label": lab[a], "target_label": lab[b]}
                for a, b in self.missing_edges
            ],
            "reversed_edges": [edge(e) for e in self.edges_with("reversed")],
            "unsupported_edges": [edge(e) for e in self.edges_with("unsupported")],
            "unmatched_endpoint_edges": [edge(e) for e in self.edges_with("unmatched_endpoint")],
            "skip_path_credits": [
                {**edge(e), "ref_edges": [list(x) for x in e.ref_edges]}
                for e in self.edges_with("skip_path")
            ],
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "node_precision": self.node_precision,
            "node_recall": self.node_recall,
            "node_f1": self.node_f1,
            "edge_precision": self.edge_precision,
            "edge_recall": self.edge_recall,
            "edge_f1": self.edge_f1,
            "weights": asdict(self.weights),
            "matching": {
                "threshold": self.matching.threshold,
                "string_weight": self.matching.string_weight,
                "embedder": self.matching.embedder,
                "fallback": self.matching.fallback,
            },
            "diagnostics": self.diagnostics(),
        }


def prf(tp_pred: int, n_pred: int, tp_ref: int, n_ref: int) -> tuple[float, float, float]:
    """Precision, recall and F1 with the documented empty cases.

    ``tp_pred`` counts correct predictions, ``tp_ref`` recovered references (they differ
    for edges, where one skip-path edge recovers several reference edges).

    >>> prf(0, 0, 0, 0), prf(0, 0, 0, 3), prf(2, 4, 2, 2)
    ((1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (0.5, 1.0, 0.6666666666666666))
    """
    if n_pred == 0 and n_ref == 0:
        return 1.0, 1.0, 1.0
    if n_pred == 0 or n_ref == 0:
        return 0.0, 0.0, 0.0
    p = tp_pred / n_pred
    r = tp_ref / n_ref
    f = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    return p, r, f


def skip_path_edges(
    ref_succ: dict[str, list[str]], a: str, b: str, passable: set[str]
) -> tuple[tuple[str, str], ...]:
    """Reference edges lying on a shortest directed path ``a ⇝ b`` of length >= 2 whose
    intermediate nodes are all in ``passable``; empty when there is none.

    The union over all shortest such paths is returned, so the result never depends on
    node order or ids.

    >>> succ = {"a": ["x", "y"], "x": ["b"], "y": ["b"], "b": []}
    >>> skip_path_edges(succ, "a", "b", {"x"})
    (('a', 'x'), ('x', 'b'))
    """
    if a == b:
        return ()
    dist = {a: 0}
    queue = deque([a])
    while queue:
        x = queue.popleft()
        if x != a and x not in passable:
            continue  # only a and unmatched nodes may be passed through
        for y in ref_succ.get(x, ()):
            if y not in dist and (y == b or y in passable):
                dist[y] = dist[x] + 1
                queue.append(y)
    if b not in dist or dist[b] < 2:
        return ()
    # Backward distances to b inside the same passable subgraph.
    pred: dict[str, list[str]] = {}
    for x, ys in ref_succ.items():
        for y in ys:
            pred.setdefault(y, []).append(x)
    back = {b: 0}
    queue = deque([b])
    while queue:
        y = queue.popleft()
        for x in pred.get(y, ()):
            if x not in back and (x == a or x in passable):
                back[x] = back[y] + 1
                if x != a:
                    queue.append(x)
    total = dist[b]
    on_path = [
        (x, y)
        for x, ys in ref_succ.items()
        if x in dist
        for y in ys
        if y in back and dist[x] + 1 + back[y] == total
    ]
    return tuple(sorted(on_path))


def graph_level(
    pred: DiagramGraph,
    ref: DiagramGraph,
    matching: MatchingConfig | None = None,
    weights: GraphWeights | None = None,
    embedder: LabelEmbedder | None = None,
) -> GraphLevelResult:
    """Graph-level comparison of a predicted graph with its reference (see module docstring)."""
    weights = weights or GraphWeights()
    m = match_nodes(pred, ref, matching, embedder)
    to_ref = m.pred_to_ref
    pred_label = {n.id: n.label for n in pred.nodes}
    ref_label = {n.id: n.label for n in ref.nodes}
    ref_edges = {(e.source, e.target) for e in ref.edges}
    ref_succ: dict[str, list[str]] = {n.id: [] for n in ref.nodes}
    for e in ref.edges:
        ref_succ[e.source].append(e.target)
    passable = set(m.unmatched_ref)

    def support(a: str, b: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        if (a, b) in ref_edges:
            return "direct", ((a, b),)
        path = skip_path_edges(ref_succ, a, b, passable)
        return ("skip_path", path) if path else ("", ())

    verdicts: list[EdgeVerdict] = []
    recovered: set[tuple[str, str]] = set()
    for e in pred.edges:
        a, b = to_ref.get(e.source), to_ref.get(e.target)
        if a is None or b is None:
            kind, credited = "unmatched_endpoint", ()
        else:
            kind, credited = support(a, b)
            if not kind:
                kind = "reversed" if support(b, a)[0] else "unsupported"
        recovered.update(credited)
        verdicts.append(
            EdgeVerdict(e.source, e.target, pred_label[e.source], pred_label[e.target], kind, credited)
        )
    verdicts.sort(key=lambda v: (v.source_label, v.target_label, v.source, v.target))

    n_correct = sum(v.verdict in ("direct", "skip_path") for v in verdicts)
    ep, er, ef = prf(n_correct, len(pred.edges), len(recovered), len(ref_edges))
    n_match = len(m.pairs)
    np_, nr, nf = prf(n_match, len(pred.nodes), n_match, len(ref.nodes))
    missing = tuple(sorted(ref_edges - recovered, key=lambda x: (ref_label[x[0]], ref_label[x[1]], x)))
    return GraphLevelResult(
        node_precision=np_,
        node_recall=nr,
        node_f1=nf,
        edge_precision=ep,
        edge_recall=er,
        edge_f1=ef,
        score=weights.edge_weight * ef + weights.node_weight * nf,
        matching=m,
        edges=tuple(verdicts),
        missing_edges=missing,
        ref_labels=ref_label,
        weights=weights,
    )
