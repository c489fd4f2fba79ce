"""``check_claims``: claims (a file, objects or sentences) against a diagram (an image or a graph).

>>> from sciflow.format.graph import DiagramGraph
>>> from sciflow.config import load_config
>>> g = DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "Image Encoder"},
...     {"id": "b", "label": "Fusion Module"}, {"id": "c", "label": "Decoder"}],
...     "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}]})
>>> report = check_claims(g, text="The image encoder feeds the fusion module, which feeds the decoder.",
...                       config=load_config(overrides={"matching": {"embedder": "none"}}))
>>> [(r.claim.kind, r.verdict) for r in report.results], report.regions_note
([('chain', 'supported')], 'the input is a graph without pixel positions: no pixel regions')
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sciflow.claims.check import ClaimReport, check_graph
from sciflow.claims.evidence import Regions, parse_with_regions
from sciflow.claims.grammar import GRAMMAR_VERSION, claims_from_text
from sciflow.claims.model import Claim, load_claims
from sciflow.config import Config, load_config
from sciflow.format.graph import DiagramGraph, load_graph

log = logging.getLogger(__name__)


class ClaimsInputError(ValueError):
    """No claims were given, or both a claim file and sentences were."""


def load_diagram(source: str | Path | DiagramGraph, config: Config | None = None,
                 parser: Any = None) -> tuple[DiagramGraph, Regions, str]:
    """``(graph, regions, input kind)`` of a graph, a graph file (``.json``) or an image
    (parsed, with the pixel regions of its nodes and arrows)."""
    if isinstance(source, DiagramGraph):
        return source, Regions.from_graph(source), "parse" if source.meta.get("parser") else "graph"
    path = Path(source)
    if path.suffix.lower() == ".json":
        g = load_graph(path)
        return g, Regions.from_graph(g), "parse" if g.meta.get("parser") else "graph"
    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    graph, regions = parse_with_regions(path, config, parser)
    return graph, regions, "image"


def resolve_claims(
    claims: str | Path | Iterable[Claim | Mapping[str, Any]] | None = None,
    text: str | None = None,
    *,
    judge: bool = False,
    config: Config | None = None,
) -> tuple[list[Claim], dict[str, Any]]:
    """The claims to check and how they were made (``{"backend": "file" | "objects" |
    "grammar" | "judge", ...}``)."""
    config = config or Config()
    if (claims is None) == (text is None):
        raise ClaimsInputError("give either claims (a .jsonl file or claim objects) or text, not "
                               + ("both" if claims is not None else "neither"))
    if text is not None:
        if judge:
            from sciflow.claims.judge import claims_from_judge, judge_description

            return claims_from_judge(text, config.text.judge), judge_description(config.text.judge)
        return claims_from_text(text), {"backend": "grammar", "version": GRAMMAR_VERSION}
    if isinstance(claims, (str, Path)):
        return load_claims(claims), {"backend": "file", "path": str(claims)}
    out = [c if isinstance(c, Claim) else Claim.from_dict({"id": f"c{k}", **c}, where=f"#{k}")
           for k, c in enumerate(claims or (), 1)]
    return out, {"backend": "objects"}


def check_claims(
    diagram: str | Path | DiagramGraph,
    claims: str | Path | Iterable[Claim | Mapping[str, Any]] | None = None,
    *,
    text: str | None = None,
    judge: bool = False,
    config: Config | str | Path | None = None,
    parser: Any = None,
    closed_world: bool | None = None,
) -> ClaimReport:
    """Check ``claims`` (a ``.jsonl`` path, :class:`Claim` objects or dicts) or the claims of
    ``text`` (the grammar, or the judge with ``judge=True``) against ``diagram``: an image
    (parsed), a graph file or a :class:`DiagramGraph`. ``config``: a Config or a TOML path.

    A parse (image, or a graph whose meta names a parser) is an open world: a component it
    lacks makes a claim "not enough information"; any other graph is the whole truth
    (``closed_world`` overrides)."""
    cfg = config if isinstance(config, Config) else load_config(config)
    todo, made_by = resolve_claims(claims, text, judge=judge, config=cfg)
    graph, regions, kind = load_diagram(diagram, cfg, parser)
    return check_graph(graph, todo, config=cfg, closed_world=closed_world, regions=regions, input_kind=kind,
                       claims_from=made_by)
