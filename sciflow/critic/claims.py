"""The critic and structural claims: a critique that lists the claims a diagram fails.

The claims are checked on the same parsed graph the critique compares with the reference
(:mod:`sciflow.claims`), so both speak of the same boxes and arrows. Failed claims (refuted, or
not enough information) are listed under ``failed_claims`` in every critique format but do
not change the judgement: the judgement stays the comparison with the reference.

>>> from sciflow.format.graph import DiagramGraph, load_graph
>>> from sciflow.config import MatchingConfig, load_config
>>> ref = DiagramGraph.from_dict({"id": "r", "nodes": [{"id": "a", "label": "Encoder"},
...     {"id": "b", "label": "Decoder"}], "edges": [{"source": "a", "target": "b"}]})
>>> pred = DiagramGraph.from_dict({"id": "r", "nodes": [{"id": "x", "label": "Encoder"},
...     {"id": "y", "label": "Decoder"}], "edges": [{"source": "y", "target": "x"}]})
>>> cfg = load_config(overrides={"matching": {"embedder": "none"}})
>>> c = critique_with_claims(pred, ref, text="The encoder feeds the decoder.", config=cfg)
>>> c.passed, [x["verdict"] for x in c.failed_claims]
(False, ['refuted'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from sciflow.claims import Claim, ClaimReport, check_graph
from sciflow.claims.check import failed_claims
from sciflow.claims.evidence import Regions
from sciflow.claims.inputs import load_diagram, resolve_claims
from sciflow.config import Config
from sciflow.critic.critique import Critique, CritiqueRule, critique
from sciflow.format.graph import DiagramGraph, load_graph
from sciflow.models.embedding import get_embedder


def failed_claim_rows(report: ClaimReport) -> tuple[dict[str, Any], ...]:
    """One plain row per failed claim: id, claim sentence, verdict, explanation, regions."""
    return tuple({"id": r.claim.id, "claim": r.claim.describe(), "verdict": r.verdict, "explanation": r.explanation,
                  "regions": list(r.regions)} for r in failed_claims(report))


def with_claims(c: Critique, report: ClaimReport) -> Critique:
    """``c`` listing the claims of ``report`` that the diagram fails."""
    return replace(c, failed_claims=failed_claim_rows(report))


def critique_with_claims(
    pred: str | Path | DiagramGraph,
    ref: str | Path | DiagramGraph,
    claims: str | Path | Iterable[Claim | Mapping[str, Any]] | None = None,
    *,
    text: str | None = None,
    config: Config | None = None,
    regions: Regions | None = None,
    parser: Any = None,
) -> Critique:
    """:func:`sciflow.critic.critique` of ``pred`` against ``ref``, listing the claims (a
    ``.jsonl`` path, claim objects, or sentences in ``text``) that ``pred`` fails. ``pred`` may
    be an image (parsed once, with the pixel regions of its boxes and arrows) or a graph file."""
    config = config or Config()
    if not isinstance(pred, DiagramGraph):
        pred, found, _kind = load_diagram(pred, config, parser)
        regions = regions or found
    if not isinstance(ref, DiagramGraph):
        ref = load_graph(ref)
    embedder = get_embedder(config.matching.embedder)
    c = critique(pred, ref, rule=CritiqueRule.from_config(config), matching=config.matching, embedder=embedder)
    todo, made_by = resolve_claims(claims, text, config=config)
    report = check_graph(pred, todo, config=config, embedder=embedder, regions=regions, claims_from=made_by)
    return with_claims(c, report)
