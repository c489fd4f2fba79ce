"""Critique output formats: JSON, readable text, and the tagged form of verifier models.

Tagged form (SciGen-Verifier's template, without ``<think>``)::

    <answer>no</answer>
    <explanation>
    The diagram does not match the reference: 2 errors (1 reversed arrow, 1 misspelled label).
    1. Reversed arrow: the arrow between "Loss" at [..] and "Decoder" at [..] points the wrong way: ...
    2. Misspelled label: the box at [..] reads "Encodr" instead of "Encoder".
    </explanation>
    <edit>
    1. Reverse the arrow from "Loss" to "Decoder" so that it points from "Decoder" to "Loss" (region [..]).
    2. Change the label "Encodr" to "Encoder" (region [..]).
    </edit>

The explanation's first line is the summary; finding ``k`` is the line ``k. Heading: ...``
(``Heading (minor):`` for a non-blocking one) and its edits are the ``<edit>`` lines numbered
``k`` (a label swap has two). ``<edit>None.</edit>`` when there is nothing to edit.
:func:`parse_tagged` reads it back: ``parse_tagged(to_tagged(c)) == c``. It is lenient with
model output: tags in any case, a missing ``<answer>`` tag answered by the first standalone
yes/no (true/false, correct/incorrect), unnumbered or bulleted lines, curly quotes; edit lines it
cannot parse are kept in ``Critique.unparsed``.
"""

from __future__ import annotations

import json
import re

from sciflow.critic.critique import HEADINGS, Critique, Finding, summarize
from sciflow.critic.instructions import Instruction, InstructionError, parse_instruction

FORMATS = ("json", "text", "tagged")


def to_tagged(c: Critique) -> str:
    edits = [f"{k}. {i.text}" for k, f in enumerate(c.findings, 1) for i in f.instructions]
    edit = "\n".join(edits) if edits else "None."
    return (f"<answer>{c.answer}</answer>\n<explanation>\n{c.explanation}\n</explanation>\n"
            f"<edit>\n{edit}\n</edit>")


def to_text(c: Critique) -> str:
    head = f"{c.item_id or 'diagram'}: {'PASS' if c.passed else 'FAIL'}"
    if c.score is not None:
        head += f" (graph score {c.score:.3f})"
    lines = [head, c.summary]
    for k, f in enumerate(c.findings, 1):
        lines.append(f"  {k}. [{f.heading.lower()}{'' if f.blocking else ', minor'}] {f.message}")
        for i in f.instructions:
            lines.append(f"     fix: {i.text}")
    of = f" of {c.claims_checked}" if c.claims_checked is not None else ""
    if c.failed_claims:
        lines.append(f"Claims the diagram fails ({len(c.failed_claims)}{of}):")
        lines += [f"  - [{x['verdict'].replace('_', ' ')}] {x['claim']}: {x['explanation']}" for x in c.failed_claims]
    elif c.claims_checked is not None:
        lines.append(f"Claims: all {c.claims_checked} supported.")
    return "\n".join(lines)


def to_json(c: Critique) -> str:
    return json.dumps(c.to_dict(), indent=2, ensure_ascii=False)


def format_critique(c: Critique, fmt: str = "text") -> str:
    """``fmt`` one of :data:`FORMATS`."""
    if fmt == "json":
        return to_json(c)
    if fmt == "text":
        return to_text(c)
    if fmt == "tagged":
        return to_tagged(c)
    raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def _tag(text: str, name: str) -> str | None:
    m = re.search(rf"<{name}>(.*?)(?:</{name}>|(?=<[a-z]+>)|\Z)", text, re.S | re.I)
    return m.group(1).strip() if m else None


_YES = {"yes", "true", "correct", "pass", "passed"}
_NO = {"no", "false", "incorrect", "fail", "failed", "wrong"}
_NUM = re.compile(r"^\s*(\d+)[.)]\s*(.*)$")
_BULLET = re.compile(r"^\s*[-*•]\s*")
_HEAD = re.compile(r"^(" + "|".join(re.escape(h) for h in HEADINGS.values()) + r")( \(minor\))?:\s*(.*)$", re.I)


def _answer(text: str) -> bool:
    ans = _tag(text, "answer")
    words = re.findall(r"[a-z]+", (ans if ans is not None else re.sub(r"<[^>]*>", " ", text)).lower())
    for w in words:
        if w in _YES:
            return True
        if w in _NO:
            return False
    raise ValueError("no yes/no judgement found")


def parse_tagged(text: str) -> Critique:
    """Read a tagged critique (ours or a verifier model's) back into a :class:`Critique`.

    Findings are rebuilt from the numbered explanation lines whose heading names a kind; an
    explanation line without a known heading, or a model's free text, keeps its sentence in
    the summary. Raises ``ValueError`` when no yes/no judgement can be found.
    """
    passed = _answer(text)
    expl = _tag(text, "explanation")
    edit = _tag(text, "edit")
    if expl is None and edit is None:
        expl = re.sub(r"<[^>]*>.*?</[^>]*>", "", text, flags=re.S).strip()
    summary_lines: list[str] = []
    found: list[tuple[str, str, str, bool]] = []  # (number, kind, message, blocking)
    kind_of = {h.lower(): k for k, h in HEADINGS.items()}
    for raw in (expl or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        num = _NUM.match(line)
        body = num.group(2) if num else _BULLET.sub("", line)
        head = _HEAD.match(body)
        if head:
            found.append((num.group(1) if num else str(len(found) + 1), kind_of[head.group(1).lower()],
                          head.group(3), head.group(2) is None))
        else:
            summary_lines.append(line)
    edits: dict[str, list[Instruction]] = {}
    loose: list[Instruction] = []
    unparsed: list[str] = []
    if edit and edit.strip().rstrip(".").lower() not in ("none", "n/a", ""):
        for raw in edit.splitlines():
            line = raw.strip()
            if not line:
                continue
            num = _NUM.match(line)
            try:
                ins = parse_instruction(num.group(2) if num else line)
            except InstructionError:
                unparsed.append(line)
                continue
            if num:
                edits.setdefault(num.group(1), []).append(ins)
            else:
                loose.append(ins)
    findings = []
    rest = iter(loose)
    for n, kind, msg, blocking in found:
        ins = edits.pop(n, [])
        if not ins:  # unnumbered edits pair with findings in order
            nxt = next(rest, None)
            ins = [nxt] if nxt is not None else []
        findings.append(Finding(kind, msg, tuple(ins), blocking))
    leftover = [i for n in sorted(edits, key=int) for i in edits[n]] + list(rest)
    for ins in leftover:  # edits without an explained finding: keep them under the kind their op implies
        findings.append(Finding(_KIND_OF_OP[ins.op], ins.text, (ins,), True))
    summary = " ".join(summary_lines) if summary_lines else summarize(passed, findings)
    return Critique(passed, summary, tuple(findings), unparsed=tuple(unparsed))


_KIND_OF_OP: dict[str, str] = {
    "add_node": "missing_node",
    "split_node": "merged_node",
    "remove_node": "hallucinated_node",
    "reverse_edge": "reversed_edge",
    "add_edge": "missing_edge",
    "remove_edge": "unsupported_edge",
    "relabel": "misspelled_label",
}

