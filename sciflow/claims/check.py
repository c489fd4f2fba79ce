"""Checking claims: a verdict per claim, with the grounded nodes, the relations used, the pixel
regions of the evidence and a one-sentence explanation.

Verdicts: ``supported``, ``refuted``, ``not_enough_info``. A claim is **not enough
information** when

- the parse is flagged unreliable: ``meta["parse_reliability"]`` below
  ``claims.min_parse_reliability`` (a graph without that field is not flagged);
- a name is ambiguous, or drawn merged into another component's box
  (:mod:`sciflow.claims.grounding`), whatever the input;
- a name matches no component *of a parse* (open world: the parser may have missed it);
- a count over the whole diagram (its sources, sinks, nodes or arrows; not one component's
  inputs or outputs) would be **supported** on a parse that shows signs of a missing or extra
  box or arrow: any of the reliability signals :data:`COMPLETENESS_SIGNALS` in
  ``meta["reliability_signals"]`` (:mod:`sciflow.agents.reliability`) above zero
  (:func:`incomplete`). Such a count is decided by every node's degree, so one missed arrow or
  one stray box changes it, and two such errors can cancel out and give the claimed number by
  chance; a supported verdict certifies the diagram, so it waits for a parse without those
  signs. A count that differs from the claim stays **refuted** on such a parse (the diagram is
  sent for review, not certified: the cheaper mistake). Claims about one path (a cycle, the
  longest path) and local claims are decided by the nodes and arrows they name, and are not
  held back. Arrow *direction* signals (``both_heads``, ``weak_heads``) hold nothing back: a
  firm-looking head read on the wrong arrow is seen by no signal (a known limit);
- the graph cannot answer (a longest-path search over too many loops).

A graph that is not a parse (a reference, a hand-written graph: no ``meta["parser"]``) is the
whole truth (closed world): a claim naming a component it does not have is refuted. Otherwise
the claim's rule (:mod:`sciflow.claims.rules`) decides, and ``negated`` swaps supported and
refuted.

>>> from sciflow.format.graph import DiagramGraph
>>> from sciflow.claims.model import Claim
>>> from sciflow.config import load_config
>>> cfg = load_config(overrides={"matching": {"embedder": "none"}})
>>> g = DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "Image Encoder"},
...     {"id": "b", "label": "Fusion"}, {"id": "c", "label": "Decoder"}],
...     "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]})
>>> r = check_claim(Claim.from_dict({"type": "direct", "source": "image encoder", "target": "decoder"}), g, config=cfg)
>>> r.verdict
'refuted'
>>> r.explanation
'Refuted: there is no arrow from "Image Encoder" to "Decoder", only the path "Image Encoder" → "Fusion" → "Decoder".'

"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sciflow.claims.evidence import Regions
from sciflow.claims.grounding import Grounding, ground_group, ground_names
from sciflow.claims.model import Claim
from sciflow.claims.rules import RULES
from sciflow.claims.structure import Structure
from sciflow.config import Config
from sciflow.format.graph import DiagramGraph
from sciflow.models.embedding import LabelEmbedder, get_embedder

log = logging.getLogger(__name__)

SUPPORTED, REFUTED, NEI = "supported", "refuted", "not_enough_info"
VERDICTS = (SUPPORTED, REFUTED, NEI)
WORDS = {SUPPORTED: "Supported", REFUTED: "Refuted", NEI: "Not enough information"}
_ROLE_FIELDS = ("source", "target", "via", "first", "then", "component")
#: reliability signals that say a box or an arrow may be missing or extra, and how to say so
COMPLETENESS_SIGNALS = {
    "dangling_ends": "connectors attached at one end only",
    "headless": "connectors without an arrowhead (no arrow read)",
    "isolated": "boxes no arrow touches",
    "single_agent": "boxes found by one agent only",
    "text_unassigned": "texts read into no box",
}


@dataclass(frozen=True)
class ClaimResult:
    """The verdict on one claim and its evidence."""

    claim: Claim
    verdict: str
    explanation: str
    grounding: tuple[Grounding, ...] = ()
    nodes: tuple[str, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()
    absent: tuple[tuple[str, str], ...] = ()
    regions: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim.to_dict(),
            "description": self.claim.describe(),
            "verdict": self.verdict,
            "explanation": self.explanation,
            "grounding": [g.to_dict() for g in self.grounding],
            "nodes": list(self.nodes),
            "relations": [list(e) for e in self.edges],
            "absent_relations": [list(e) for e in self.absent],
            "regions": list(self.regions),
        }


@dataclass(frozen=True)
class ClaimReport:
    """Every claim's result on one diagram. ``closed_world``: absent components refute;
    ``reliability``: the parse's ``parse_reliability`` (None: not given); ``regions_note``:
    what pixel evidence the input has; ``claims_from``: how the claims were made."""

    item: str
    input_kind: str  # "graph" | "parse" | "image"
    results: tuple[ClaimResult, ...]
    closed_world: bool
    regions_note: str
    reliability: float | None = None
    reliability_threshold: float | None = None
    matcher: Mapping[str, Any] = field(default_factory=dict)
    claims_from: Mapping[str, Any] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {v: sum(r.verdict == v for r in self.results) for v in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item, "input": self.input_kind, "closed_world": self.closed_world,
            "parse_reliability": self.reliability, "min_parse_reliability": self.reliability_threshold,
            "regions_note": self.regions_note, "matcher": dict(self.matcher), "claims_from": dict(self.claims_from),
            "counts": self.counts(), "results": [r.to_dict() for r in self.results],
        }


def _sentence(verdict: str, fact: str) -> str:
    return f"{WORDS[verdict]}: {fact.rstrip('.')}."


def is_parse(graph: DiagramGraph) -> bool:
    """Whether ``graph`` came from a parser (its ``meta`` names one)."""
    return bool(graph.meta.get("parser"))


def unreliable(graph: DiagramGraph, threshold: float) -> str:
    """Why the parse is not to be trusted (empty when it is, or when it says nothing)."""
    r = graph.meta.get("parse_reliability")
    if isinstance(r, (int, float)) and not isinstance(r, bool) and r < threshold:
        return f"the parse is flagged unreliable (parse reliability {r:.2f} < {threshold:.2f})"
    return ""


def incomplete(graph: DiagramGraph) -> str:
    """Why the parse may miss or add a box or an arrow (empty when its signals show none, or
    when it has no signals): the shares of :data:`COMPLETENESS_SIGNALS` above zero."""
    sig = graph.meta.get("reliability_signals")
    if not isinstance(sig, Mapping):
        return ""
    parts = [f"{what} ({float(sig[k]):.0%})" for k, what in COMPLETENESS_SIGNALS.items()
             if isinstance(sig.get(k), (int, float)) and not isinstance(sig.get(k), bool) and sig[k] > 0]
    return "; ".join(parts)


def whole_graph_count(claim: Claim) -> bool:
    """Whether ``claim`` counts something over the whole diagram (not one component's arrows)."""
    return claim.kind == "count" and claim.component is None


def check_claim(
    claim: Claim,
    graph: DiagramGraph,
    *,
    config: Config | None = None,
    embedder: LabelEmbedder | None = None,
    closed_world: bool | None = None,
    regions: Regions | None = None,
    structure: Structure | None = None,
) -> ClaimResult:
    """Check one claim on ``graph`` (module docstring). ``closed_world`` defaults to "not a
    parse"; ``regions`` (default: the graph's own boxes, if any) gives the pixel evidence."""
    config = config or Config()
    cc = config.claims
    closed = (not is_parse(graph)) if closed_world is None else closed_world
    regions = regions or Regions.from_graph(graph)
    why = unreliable(graph, cc.min_parse_reliability)
    if why:
        return ClaimResult(claim, NEI, _sentence(NEI, why))
    embedder = embedder or get_embedder(config.matching.embedder)
    grounded = ground_names(claim.names, graph, config.matching, embedder, cc.ambiguity_margin)
    found = list(grounded.values())
    if claim.group is not None:
        found.append(ground_group(claim.group, graph, config.matching, embedder, cc.ambiguity_margin))
    bad = [g for g in found if not g.ok]
    box_nodes = tuple(g.node for g in found if g.ok and g.node in {n.id for n in graph.nodes})
    if any(g.status in ("ambiguous", "merged") for g in bad) or (bad and not closed):
        reason = "; ".join(g.reason() for g in bad)
        if not closed and any(g.status == "unmatched" for g in bad):
            reason = reason.replace("no component matches", "the parse has no component matching", 1)
        return ClaimResult(claim, NEI, _sentence(NEI, reason), tuple(found), box_nodes,
                           regions=tuple(regions.of(box_nodes, (), graph)))
    if bad:  # closed world: the component is not in the diagram
        names = ", ".join(json.dumps(g.name, ensure_ascii=False) for g in bad)
        what = "group" if all(g.name == claim.group and claim.group is not None for g in bad) else "component"
        verdict = SUPPORTED if claim.negated else REFUTED
        return ClaimResult(claim, verdict, _sentence(verdict, f"the diagram has no {what} {names}"), tuple(found),
                           box_nodes, regions=tuple(regions.of(box_nodes, (), graph)))
    ids = {name: g.node for name, g in grounded.items()}
    args: dict[str, Any] = {f: ids[getattr(claim, f)] for f in _ROLE_FIELDS if getattr(claim, f)}
    for f in ("sources", "targets", "path"):
        if getattr(claim, f):
            args[f] = [ids[x] for x in getattr(claim, f)]
    if claim.group is not None:
        args["group"] = found[-1].node
    args.update(exactly=claim.exactly, of=claim.of, count=claim.count, steps=claim.steps,
                budget=cc.longest_path_budget)
    finding = RULES[claim.kind](structure or Structure(graph), args)
    if finding.holds is None:
        verdict = NEI
    else:
        verdict = SUPPORTED if finding.holds != claim.negated else REFUTED
    doubt = incomplete(graph) if verdict == SUPPORTED and whole_graph_count(claim) and not closed else ""
    if doubt:
        fact = (f"{finding.fact.rstrip('.')}, but a count over the whole diagram needs every box and arrow, and the "
                f"parse shows signs of a missing or extra one, which may cancel out: {doubt}")
        return ClaimResult(claim, NEI, _sentence(NEI, fact), tuple(found), finding.nodes, finding.edges,
                           finding.absent, tuple(regions.of(finding.nodes, finding.edges, graph, finding.absent)))
    return ClaimResult(claim, verdict, _sentence(verdict, finding.fact), tuple(found), finding.nodes, finding.edges,
                       finding.absent, tuple(regions.of(finding.nodes, finding.edges, graph, finding.absent)))


def check_graph(
    graph: DiagramGraph,
    claims: Sequence[Claim],
    *,
    config: Config | None = None,
    embedder: LabelEmbedder | None = None,
    closed_world: bool | None = None,
    regions: Regions | None = None,
    input_kind: str | None = None,
    claims_from: Mapping[str, Any] | None = None,
) -> ClaimReport:
    """Check every claim on one graph; a :class:`ClaimReport`."""
    config = config or Config()
    embedder = embedder or get_embedder(config.matching.embedder)
    closed = (not is_parse(graph)) if closed_world is None else closed_world
    regions = regions or Regions.from_graph(graph)
    structure = Structure(graph)
    results = tuple(check_claim(c, graph, config=config, embedder=embedder, closed_world=closed, regions=regions,
                                structure=structure) for c in claims)
    r = graph.meta.get("parse_reliability")
    log.debug("claims on %s: %s", graph.id, ", ".join(f"{x.claim.id}={x.verdict}" for x in results))
    return ClaimReport(
        item=graph.id, input_kind=input_kind or ("parse" if is_parse(graph) else "graph"), results=results,
        closed_world=closed, regions_note=regions.note,
        reliability=float(r) if isinstance(r, (int, float)) and not isinstance(r, bool) else None,
        reliability_threshold=config.claims.min_parse_reliability,
        matcher={"embedder": embedder.name, "fallback": embedder.is_fallback,
                 "threshold": config.matching.threshold, "string_weight": config.matching.string_weight,
                 "ambiguity_margin": config.claims.ambiguity_margin},
        claims_from=dict(claims_from or {"backend": "file"}),
    )


def failed_claims(report: ClaimReport) -> list[ClaimResult]:
    """The claims a diagram fails: refuted, or not enough information."""
    return [r for r in report.results if r.verdict != SUPPORTED]
