"""The critic and structural claims: a critique that lists the claims a diagram fails.

The claims are checked on the same parsed graph the critique compares with the reference
(:mod:`sciflow.claims`), so both speak of the same boxes and arrows; an image is parsed once.
Failed claims (refuted first, then not enough information, each in claim order) are listed
under ``failed_claims`` (with ``claims_checked``, how many were checked) in the text and JSON
critiques, but do not change the judgement: the judgement stays the comparison with the
reference, computed exactly as :func:`sciflow.critic.critique_input` does
(``sciflow critique IMAGE|GRAPH --ref REF --claims FILE.jsonl`` or ``--text "..."``).

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
from sciflow.claims.check import REFUTED, failed_claims
from sciflow.claims.evidence import Regions
from sciflow.claims.inputs import load_diagram, resolve_claims
from sciflow.config import Config
from sciflow.critic.critique import Critique, CritiqueRule, critique_from_result
from sciflow.format.graph import DiagramGraph, load_graph
from sciflow.metrics.graph_level import graph_level
from sciflow.models.embedding import get_embedder


def failed_claim_rows(report: ClaimReport) -> tuple[dict[str, Any], ...]:
    """One plain row per failed claim: id, claim sentence, verdict, explanation, regions."""
    failed = sorted(failed_claims(report), key=lambda r: r.verdict != REFUTED)  # stable: claim order within
    return tuple({"id": r.claim.id, "claim": r.claim.describe(), "verdict": r.verdict, "explanation": r.explanation,
                  "regions": list(r.regions)} for r in failed)


def with_claims(c: Critique, report: ClaimReport) -> Critique:
    """``c`` listing the claims of ``report`` that the diagram fails."""
    return replace(c, failed_claims=failed_claim_rows(report), claims_checked=len(report.results))


def critique_with_claims(
    pred: str | Path | DiagramGraph,
    ref: str | Path | DiagramGraph,
    claims: str | Path | Iterable[Claim | Mapping[str, Any]] | None = None,
    *,
    text: str | None = None,
    judge: bool = False,
    config: Config | None = None,
    regions: Regions | None = None,
    parser: Any = None,
) -> Critique:
    """:func:`sciflow.critic.critique` of ``pred`` against ``ref``, listing the claims (a
    ``.jsonl`` path, claim objects, or sentences in ``text``) that ``pred`` fails. ``pred`` may
    be an image (parsed once, with the pixel regions of its boxes and arrows) or a graph file.
    ``judge``: ``text`` is read by the judge (:mod:`sciflow.claims.judge`), not the grammar."""
    config = config or Config()
    todo, made_by = resolve_claims(claims, text, judge=judge, config=config)  # a bad claim fails before any parse
    if not isinstance(pred, DiagramGraph):
        pred, found, _kind = load_diagram(pred, config, parser)
        regions = regions or found
    if not isinstance(ref, DiagramGraph):
        ref = load_graph(ref)
    embedder = get_embedder(config.matching.embedder)
    result = graph_level(pred, ref, matching=config.matching, weights=config.graph, embedder=embedder)
    c = critique_from_result(pred, ref, result, CritiqueRule.from_config(config.critique))
    report = check_graph(pred, todo, config=config, embedder=embedder, regions=regions, claims_from=made_by)
    return with_claims(c, report)
