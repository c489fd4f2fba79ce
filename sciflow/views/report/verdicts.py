"""The verdicts shown beside an item: the critique (``sciflow score --critique``) and the
structural claims checked on the item's figure.

A results folder's ``claims/`` holds one claims result per item, the JSON written by
``sciflow claims FIGURE --claims FILE.jsonl -o RESULTS/claims/`` (or ``--text``), named
``<item id>.json`` (:func:`sciflow.claims.report.save_report`); :func:`load_claims_results`
reads them, and :func:`claims_part` shows, per item, every claim checked with its verdict and
explanation, the failed ones first (refuted, then not enough information, then supported; claim
order within each). These are read only, never recomputed: the report shows what was checked.

>>> doc = {"item": "toy", "counts": {"supported": 1, "refuted": 1, "not_enough_info": 0}, "results": [
...     {"verdict": "supported", "explanation": "Supported: yes.", "claim": {"id": "c1", "type": "direct",
...      "source": "A", "target": "B"}},
...     {"verdict": "refuted", "explanation": "Refuted: no.", "claim": {"id": "c2", "type": "direct",
...      "source": "B", "target": "A"}}]}
>>> [r["claim"]["id"] for r in ordered_results(doc)]
['c2', 'c1']
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CLAIMS_DIR = "claims"
_ORDER = {"refuted": 0, "not_enough_info": 1, "supported": 2}
_WORDS = {"refuted": "refuted", "not_enough_info": "not enough information", "supported": "supported"}


def load_claims_results(run_dir: Path) -> dict[str, dict[str, Any]]:
    """``item id -> claims result`` from ``run_dir/claims/*.json`` (the file stem is the item id);
    an unreadable file, or one that is not a claims result, is skipped with a warning."""
    folder = Path(run_dir) / CLAIMS_DIR
    out: dict[str, dict[str, Any]] = {}
    if not folder.is_dir():
        return out
    for f in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(f.read_text("utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            log.warning("%s: unreadable claims result (%s); ignored", f, exc)
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
            log.warning("%s: not a claims result (no results list); ignored", f)
            continue
        out[f.stem] = doc
    return out


def ordered_results(doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The claim results of ``doc``, failed first (refuted, not enough information, supported)."""
    rows = [r for r in doc.get("results", []) if isinstance(r, Mapping)]
    return sorted(rows, key=lambda r: _ORDER.get(str(r.get("verdict")), 3))


def _describe(r: Mapping[str, Any]) -> str:
    """The claim as a sentence (the result's ``description``), else its JSON object."""
    if isinstance(r.get("description"), str):
        return r["description"]
    return json.dumps(r.get("claim") or {}, ensure_ascii=False)


def claims_part(doc: Mapping[str, Any]) -> str:
    """The claims checked on one item: a head line with the counts and a table, failed first."""
    rows = ordered_results(doc)
    counts = doc.get("counts") or {}
    n_failed = sum(str(r.get("verdict")) != "supported" for r in rows)
    head = (f"<p><strong>claims: {n_failed} of {len(rows)} failed</strong> · "
            f"{int(counts.get('refuted', 0))} refuted, {int(counts.get('not_enough_info', 0))} not enough "
            f"information, {int(counts.get('supported', 0))} supported")
    rel = doc.get("parse_reliability")
    if isinstance(rel, (int, float)):
        head += f" · parse reliability {rel:.2f}"
    head += "</p>"
    body = "".join(
        f'<tr class="claim-{escape(str(r.get("verdict")))}"><td>{escape(_WORDS.get(str(r.get("verdict")), "?"))}</td>'
        f'<td>{escape(str((r.get("claim") or {}).get("id", "")))}</td>'
        f"<td>{escape(_describe(r))}</td><td>{escape(str(r.get('explanation', '')))}</td></tr>"
        for r in rows)
    return (f'<div class="claims">{head}<table class="claims"><thead><tr><th>verdict</th><th>id</th><th>claim</th>'
            f"<th>explanation</th></tr></thead><tbody>{body}</tbody></table></div>")


def critique_part(crit: Mapping[str, Any]) -> str:
    """The critique written by ``sciflow score --critique``: verdict, explanation, edits."""
    verdict = "pass" if crit.get("passed") else "fail"
    items = "".join(f"<li>{escape(str(f.get('message', '')))}</li>" for f in crit.get("findings", []))
    edits = "".join(f"<li><code>{escape(str(i.get('text') or i.get('op', '')))}</code></li>"
                    for i in crit.get("instructions", []))
    return (f'<div class="critique"><p><strong>critique: {verdict}</strong> · {escape(str(crit.get("summary", "")))}'
            "</p>" + (f"<p>explanation</p><ol>{items}</ol>" if items else "")
            + (f"<p>edit instructions</p><ol>{edits}</ol>" if edits else "") + "</div>")
