"""Claim reports for people (text) and programs (JSON).

The text form: a head line with the counts, what the input gives (pixels or not, the parse's
reliability), who made the claims (``JUDGE`` in capitals when the judge read them), then per
claim its verdict, the claim, the one-sentence explanation, the grounding, the relations used
and the pixel regions. The JSON form is :meth:`sciflow.claims.check.ClaimReport.to_dict`;
:func:`save_report` writes it to a file, or to ``<folder>/<item>.json``: the claims result file
that the HTML report shows beside an item when it lies in ``<results folder>/claims/``
(:mod:`sciflow.views.report.verdicts`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from sciflow.claims.check import NEI, ClaimReport, ClaimResult

FORMATS = ("text", "json")


def _box(b: Any) -> str:
    return "[" + ", ".join(f"{v:.0f}" for v in b) + "]"


def _made_by(made: dict[str, Any]) -> str:
    backend = made.get("backend", "file")
    if backend == "judge":
        return (f"JUDGE (model {made.get('model')!s} at {made.get('base_url')!s}, template "
                f"{made.get('template_version')}): the sentences were read by a language model")
    if backend == "grammar":
        return f"the claim grammar (version {made.get('version')})"
    if backend == "file":
        return f"the claim file {made.get('path', '')}".rstrip()
    return str(backend)


def result_lines(k: int, r: ClaimResult) -> list[str]:
    """The text lines of one claim's result."""
    verdict = r.verdict.replace("_", " ")
    judge = " (read by the judge)" if r.claim.origin.get("backend") == "judge" else ""
    lines = [f"{k:>2}. [{verdict}] {r.claim.id}: {r.claim.describe()}{judge}", f"    {r.explanation}"]
    if r.claim.text:
        lines.append(f"    from: \"{r.claim.text}\"")
    shown = []
    for g in r.grounding:
        if g.ok:
            shown.append(f"\"{g.name}\" = {g.node} \"{g.label}\" ({g.similarity:.2f})")
        else:
            shown.append(f"\"{g.name}\" {g.status}")
    if shown:
        lines.append("    grounded: " + "; ".join(shown))
    if r.edges:
        lines.append("    relations: " + ", ".join(f"{u} → {v}" for u, v in r.edges))
    if r.absent:
        lines.append("    looked for, absent: " + ", ".join(f"{u} → {v}" for u, v in r.absent))
    regions = []
    for reg in r.regions:
        if reg["kind"] == "node":
            regions.append(f"{reg['id']} {_box(reg['bbox'])}")
        elif reg["kind"] == "absent_edge":
            regions.append(f"{reg['source']}→{reg['target']} (absent) {_box(reg['bbox'])}")
        else:
            n = sum(len(p) for p in reg["polylines"])
            tail = f", polyline of {n} points" if n else ""
            regions.append(f"{reg['source']}→{reg['target']} {_box(reg['bbox'])}{tail}")
    if regions:
        lines.append("    regions: " + "; ".join(regions))
    return lines


def to_text(report: ClaimReport) -> str:
    c = report.counts()
    n = len(report.results)
    head = (f"{report.item}: {n} claim{'s' if n != 1 else ''}: {c['supported']} supported, {c['refuted']} refuted, "
            f"{c[NEI]} not enough information")
    rel = "" if report.reliability is None else \
        f", parse reliability {report.reliability:.2f} (threshold {report.reliability_threshold:.2f})"
    world = "closed world: a component it lacks refutes" if report.closed_world else \
        "open world: a component the parse lacks is not enough information"
    lines = [head, f"input: {report.input_kind}{rel}; {world}", f"pixels: {report.regions_note}",
             f"claims from: {_made_by(dict(report.claims_from))}"]
    if report.matcher.get("fallback"):
        lines.append(f"grounding: string similarity only (embedder {report.matcher.get('embedder')}, a fallback)")
    for k, r in enumerate(report.results, 1):
        lines += result_lines(k, r)
    return "\n".join(lines)


def format_report(report: ClaimReport, fmt: str = "text") -> str:
    """``fmt``: ``text`` or ``json``.

    >>> from sciflow.claims import check_graph, parse_claims
    >>> from sciflow.config import load_config
    >>> from sciflow.format.graph import DiagramGraph
    >>> g = DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}],
    ...     "edges": [{"source": "a", "target": "b"}]})
    >>> rep = check_graph(g, parse_claims('{"type": "direct", "source": "B", "target": "A"}'),
    ...                   config=load_config(overrides={"matching": {"embedder": "none"}}))
    >>> print(format_report(rep).splitlines()[0])
    toy: 1 claim: 0 supported, 1 refuted, 0 not enough information
    >>> json.loads(format_report(rep, "json"))["results"][0]["verdict"]
    'refuted'
    """
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)
    if fmt == "text":
        return to_text(report)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def save_report(report: ClaimReport, out: str | Path) -> Path:
    """Write the JSON form of ``report`` to ``out`` (a ``.json`` file), or to ``out/<item>.json``
    when ``out`` is a folder or has no ``.json`` suffix; returns the path written."""
    out = Path(out)
    if out.is_dir() or out.suffix.lower() != ".json":
        out = out / (re.sub(r"[^\w.\-]+", "_", report.item).strip("._") + ".json" if report.item else "claims.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(format_report(report, "json") + "\n", "utf-8")
    return out
