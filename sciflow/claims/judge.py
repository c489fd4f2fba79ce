"""Claims from free-form sentences through the optional judge (an OpenAI-compatible endpoint).

The judge is the project's client (:class:`sciflow.models.judge.ChatJudge`, configured in
``[text.judge]``), asked with a pinned, versioned template to translate the sentences into
claims of sciflow's format; its answer must be a JSON array of claim objects (or JSON lines),
every one of which is validated like a claim file's line (:func:`sciflow.claims.model.validate_claim`).
Anything else is a :class:`~sciflow.models.judge.JudgeError`, never a silent guess. Every claim
it makes carries ``origin = {"backend": "judge", model, base_url, template_version,
template_sha256}``, so every output that used it says so. Checking the claims stays
deterministic: the judge only reads the sentences.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sciflow.claims.model import KINDS, Claim, ClaimFormatError
from sciflow.config import JudgeConfig
from sciflow.format.jsonio import JSONError, parse_json
from sciflow.models.judge import ChatJudge, JudgeError, template_sha256

CLAIM_TEMPLATE_VERSION = "claims-1"

CLAIM_TEMPLATE = """Translate statements about a scientific framework diagram into structural claims.
Each claim is a JSON object with "type" and "kind" and components named by their label as the text names them:
- {{"type": "direct", "kind": "edge", "source": A, "target": B}}: A feeds B directly
- {{"type": "parallel", "kind": "fan_in", "sources": [A, B], "target": C, "exactly": false}}: A and B both feed C
- {{"type": "parallel", "kind": "fan_out", "source": A, "targets": [B, C]}}: A feeds both B and C
- {{"type": "sequential", "kind": "chain", "path": [A, B, C]}}: A feeds B, which feeds C
- {{"type": "sequential", "kind": "reaches", "source": A, "target": D}}: a path leads from A to D
- {{"type": "sequential", "kind": "via", "source": A, "via": B, "target": D}}: A reaches D through B
- {{"type": "sequential", "kind": "only_through", "source": A, "via": B, "target": D}}: every path from A to D passes B
- {{"type": "sequential", "kind": "before", "first": B, "then": C}}: B comes before C
- {{"type": "analytical", "kind": "count", "of": "sources" | "sinks" | "nodes" | "edges", "count": N}}
- {{"type": "analytical", "kind": "count", "of": "inputs" | "outputs", "component": C, "count": N}}
- {{"type": "analytical", "kind": "cycle"}} (optionally "component": X): a feedback loop exists
- {{"type": "analytical", "kind": "sink" | "source", "component": C}}
- {{"type": "analytical", "kind": "longest_path", "steps": K}}
- {{"type": "analytical", "kind": "in_group", "component": X, "group": G}}
Add "negated": true for a statement that denies the relation. Use only these kinds.

STATEMENTS:
{text}

Answer with only a JSON array of claim objects, one or more per statement."""


def judge_description(config: JudgeConfig) -> dict[str, Any]:
    """What a judge-made claim records about its maker (no key, ever)."""
    return {"backend": "judge", "model": config.model, "base_url": config.base_url,
            "template_version": CLAIM_TEMPLATE_VERSION, "template_sha256": template_sha256(CLAIM_TEMPLATE)}


def parse_judge_answer(answer: str, origin: dict[str, Any], text: str, id_prefix: str = "j") -> list[Claim]:
    """The claims of a judge's answer: the first JSON array in it, or JSON lines.

    >>> cs = parse_judge_answer('Sure: [{"type": "direct", "kind": "edge", "source": "A", "target": "B"}]',
    ...                         {"backend": "judge"}, "A goes into B")
    >>> cs[0].describe(), cs[0].origin["backend"], cs[0].id
    ('"A" feeds "B"', 'judge', 'j1')
    """
    m = re.search(r"\[.*\]", answer, flags=re.S)
    try:
        if m:
            items = parse_json(m.group(0), source="judge answer")
        else:
            items = [parse_json(line, source="judge answer") for line in answer.splitlines() if line.strip()]
    except JSONError as exc:
        raise JudgeError(f"judge answer holds no JSON array of claims: {exc}; answer {answer[:120]!r}") from None
    if not isinstance(items, list) or not items:
        raise JudgeError(f"judge answer holds no claims: {answer[:120]!r}")
    out: list[Claim] = []
    for k, obj in enumerate(items, 1):
        if not isinstance(obj, dict):
            raise JudgeError(f"judge claim {k} is not a JSON object: {json.dumps(obj)[:80]}")
        obj = {key: v for key, v in obj.items() if key in (
            "type", "kind", "negated", "source", "target", "sources", "targets", "exactly", "path", "via", "first",
            "then", "component", "group", "of", "count", "steps")}
        if obj.get("type") in KINDS and obj.get("kind") not in KINDS[obj["type"]]:
            obj.pop("kind", None)  # let a missing/odd kind fall back to the type's default, or fail below
        try:
            out.append(Claim.from_dict({"id": f"{id_prefix}{k}", **obj, "text": text, "origin": origin},
                                       where=f"{k} of the judge's answer"))
        except ClaimFormatError as exc:
            raise JudgeError(str(exc)) from None
    return out


def claims_from_judge(text: str, config: JudgeConfig) -> list[Claim]:
    """Ask the judge to read ``text`` into claims (module docstring)."""
    judge = ChatJudge(config)
    answer = judge.chat([{"role": "user", "content": CLAIM_TEMPLATE.format(text=text)}])
    return parse_judge_answer(answer, judge_description(config), text)
