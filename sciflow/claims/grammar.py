"""Claims from plain sentences: a small deterministic grammar, and a refusal for the rest.

The text is cut into sentences at ``.``, ``;``, ``!`` or ``?`` followed by a space (or the end);
each sentence must fit one rule below as a whole (case does not matter; a leading "the", "a"
or "an" is dropped from every name). ``X``, ``Y``, ``Z`` are component names; a name with
"and" or a comma in it is written in double quotes (``"Add and Norm" feeds "FFN"``); a list is
``X and Y`` or ``X, Y and Z``; ``N`` is a number (digits or one..twenty).

===============================================================  =============================
sentence                                                         claim
===============================================================  =============================
X feeds / feeds into / is fed into / is fed to / flows into /     direct X -> Y
is followed by / connects to / is connected to / sends to /
goes to / passes to / outputs to Y
X does not feed / doesn't feed / does not connect to /            direct X -> Y, negated
is not fed into / is not followed by / is not connected to Y
Y is fed by / receives from / takes input from X                 direct X -> Y
X and Y [both] feed Z (any feed verb, plural); Z is fed by X     parallel fan_in
and Y; Z receives from X and Y
only X and Y feed Z; Z receives only from X and Y                parallel fan_in, exactly
X feeds [both] Y and Z; X feeds only Y and Z (exactly)           parallel fan_out
X feeds Y, which feeds Z[, which feeds W ...]                    sequential chain
X passes through Y to [reach] Z; X reaches Z through / via Y     sequential via
X reaches Z only through / only via Y                            sequential only_through
X reaches / leads to / eventually feeds Z; X does not reach Z    sequential reaches
X comes before / precedes / happens before Y; Y comes after X     sequential before
there is a feedback loop / cycle / loop [through X];             analytical cycle
the diagram has a feedback loop; there is no feedback loop
there are / the diagram has [exactly] N inputs / sources /       analytical count
outputs / sinks / components / nodes / arrows / edges
X has [exactly] N inputs / outputs                                analytical count of X
X is a sink / an output / a source / an input [not: negated]      analytical sink / source
the longest path has N steps / arrows / hops                      analytical longest_path
X is [inside / in / within] [the] G group; X belongs to [the] G   analytical in_group
===============================================================  =============================

A sentence that fits no rule is refused with :class:`GrammarError`, naming it; the judge
backend (:mod:`sciflow.claims.judge`) reads free-form sentences instead.

>>> [c.describe() for c in claims_from_text("The image encoder feeds the fusion module, which feeds the decoder.")]
['"image encoder" → "fusion module" → "decoder"']
>>> [c.describe() for c in claims_from_text("The text encoder and the image encoder both feed the fusion module.")]
['"text encoder" and "image encoder" feed "fusion module"']
>>> claims_from_text("The decoder is rather elegant.")
Traceback (most recent call last):
...
sciflow.claims.grammar.GrammarError: cannot read sentence 1 ("The decoder is rather elegant."): it fits no rule ...
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sciflow.claims.model import Claim

GRAMMAR_VERSION = 1

_NUMBERS = {w: i for i, w in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"))}
_NUM = r"(?P<n>\d+|" + "|".join(_NUMBERS) + r")"
_FEED1 = (r"(?:feeds(?: into)?|is fed (?:into|to)|flows into|is followed by|connects to|is connected to|"
          r"sends (?:its output |data )?to|goes (?:in)?to|passes (?:its output )?to|outputs to|is passed to)")
_FEEDN = (r"(?:(?:both |all )?(?:feed(?: into)?|are fed (?:into|to)|flow into|connect to|are connected to|"
          r"send (?:their outputs? |data )?to|go (?:in)?to|pass (?:their outputs? )?to|output to|are passed to))")
_NOFEED = (r"(?:(?:does not|doesn't|does not directly|do not|don't) (?:feed(?: into)?|connect to|flow into|send to|"
           r"go to|pass to)|(?:is|are) not (?:fed (?:into|to)|followed by|connected to|passed to))")
_FEDBY = r"(?:is fed by|receives (?:input |its input |inputs )?from|takes (?:its )?input from|is fed from)"
_REACH = r"(?:reaches|leads to|eventually feeds|eventually reaches|is upstream of)"
_BEFORE = r"(?:comes before|precedes|happens before|is computed before|runs before|appears before)"
_AFTER = r"(?:comes after|happens after|is computed after|runs after|appears after)"
_LOOP = r"(?:(?:a )?feedback loops?|(?:a )?cycles?|(?:a )?loops?)"
_DIAGRAM = r"(?:the diagram|the figure|the graph|it)"
_COUNTED = {"inputs": "sources", "input": "sources", "sources": "sources", "source": "sources",
            "outputs": "sinks", "output": "sinks", "sinks": "sinks", "sink": "sinks",
            "components": "nodes", "component": "nodes", "nodes": "nodes", "node": "nodes", "boxes": "nodes",
            "arrows": "edges", "arrow": "edges", "edges": "edges", "edge": "edges"}


class GrammarError(ValueError):
    """A sentence that no rule of the grammar reads (one line, naming the sentence)."""


def _n(m: re.Match[str]) -> int:
    v = m.group("n").lower()
    return int(v) if v.isdigit() else _NUMBERS[v]


Builder = Callable[[re.Match[str], Callable[[str], str], Callable[[str], list[str]]], list[dict[str, Any]]]
RULES: list[tuple[re.Pattern[str], Builder]] = []


def _rule(pattern: str) -> Callable[[Builder], Builder]:
    def deco(fn: Builder) -> Builder:
        RULES.append((re.compile("^" + pattern + "$", re.I), fn))
        return fn

    return deco


# ------------------------------------------------------------------ analytical (tried first)
@_rule(rf"(?:there (?:is|exists)|{_DIAGRAM} (?:has|contains)) (?:at least one )?{_LOOP}(?: through (?P<x>.+))?")
def _cycle(m, name, names):
    return [{"type": "analytical", "kind": "cycle", **({"component": name(m["x"])} if m["x"] else {})}]


@_rule(rf"(?:there (?:is|are) no|{_DIAGRAM} (?:has|contains) no) {_LOOP}(?: through (?P<x>.+))?")
def _no_cycle(m, name, names):
    return [{"type": "analytical", "kind": "cycle", "negated": True,
             **({"component": name(m["x"])} if m["x"] else {})}]


@_rule(rf"(?:there (?:is|are)|{_DIAGRAM} (?:has|shows)) (?:exactly )?{_NUM} (?P<what>{'|'.join(_COUNTED)})")
def _count(m, name, names):
    return [{"type": "analytical", "kind": "count", "of": _COUNTED[m["what"].lower()], "count": _n(m)}]


@_rule(rf"(?P<x>.+?) (?:has|takes|receives) (?:exactly )?{_NUM} (?P<what>inputs?|outputs?)")
def _degree(m, name, names):
    what = "inputs" if m["what"].lower().startswith("in") else "outputs"
    return [{"type": "analytical", "kind": "count", "of": what, "count": _n(m), "component": name(m["x"])}]


@_rule(r"the longest path (?:has|is|takes) " + _NUM + r" (?:steps?|arrows?|hops?)(?: long)?")
def _longest(m, name, names):
    return [{"type": "analytical", "kind": "longest_path", "steps": _n(m)}]


@_rule(r"(?P<x>.+?) is (?P<neg>not )?(?:a|an|the|the final) (?P<role>sink|output|source|input)")
def _end(m, name, names):
    kind = "sink" if m["role"].lower() in ("sink", "output") else "source"
    return [{"type": "analytical", "kind": kind, "component": name(m["x"]), "negated": bool(m["neg"])}]


@_rule(r"(?P<x>.+?) (?:is|lies|sits) (?P<neg>not )?(?:inside|within|in|part of) (?P<g>.+?) group")
def _in_group(m, name, names):
    return [{"type": "analytical", "kind": "in_group", "component": name(m["x"]), "group": name(m["g"]),
             "negated": bool(m["neg"])}]


@_rule(r"(?P<x>.+?) (?P<neg>does not belong|doesn't belong|belongs) to (?P<g>.+?)(?: group)?")
def _belongs(m, name, names):
    return [{"type": "analytical", "kind": "in_group", "component": name(m["x"]), "group": name(m["g"]),
             "negated": m["neg"].lower() != "belongs"}]


# ------------------------------------------------------------------ sequential
@_rule(r"(?P<a>.+?) passes through (?P<b>.+?) (?:to reach|to|before reaching|on its way to) (?P<c>.+)")
def _passes(m, name, names):
    return [{"type": "sequential", "kind": "via", "source": name(m["a"]), "via": name(m["b"]), "target": name(m["c"])}]


@_rule(rf"(?P<a>.+?) {_REACH} (?P<c>.+?) only (?:through|via) (?P<b>.+)")
def _only(m, name, names):
    return [{"type": "sequential", "kind": "only_through", "source": name(m["a"]), "via": name(m["b"]),
             "target": name(m["c"])}]


@_rule(rf"(?P<a>.+?) {_REACH} (?P<c>.+?) (?:through|via) (?P<b>.+)")
def _via(m, name, names):
    return [{"type": "sequential", "kind": "via", "source": name(m["a"]), "via": name(m["b"]), "target": name(m["c"])}]


@_rule(r"(?P<a>.+?) (?:does not|doesn't|never) (?:reach|lead to)(?:es)? (?P<c>.+)")
def _no_reach(m, name, names):
    return [{"type": "sequential", "kind": "reaches", "source": name(m["a"]), "target": name(m["c"]), "negated": True}]


@_rule(rf"(?P<a>.+?) {_REACH} (?P<c>.+)")
def _reach(m, name, names):
    return [{"type": "sequential", "kind": "reaches", "source": name(m["a"]), "target": name(m["c"])}]


@_rule(rf"(?P<a>.+?) {_BEFORE} (?P<c>.+?)(?: on every path)?")
def _before(m, name, names):
    return [{"type": "sequential", "kind": "before", "first": name(m["a"]), "then": name(m["c"])}]


@_rule(rf"(?P<c>.+?) {_AFTER} (?P<a>.+?)(?: on every path)?")
def _after(m, name, names):
    return [{"type": "sequential", "kind": "before", "first": name(m["a"]), "then": name(m["c"])}]


# ------------------------------------------------------------------ direct and parallel
@_rule(rf"(?P<a>.+?) {_NOFEED} (?P<b>.+)")
def _no_feed(m, name, names):
    return [{"type": "direct", "kind": "edge", "source": s, "target": t, "negated": True}
            for s in names(m["a"]) for t in names(m["b"])]


@_rule(rf"only (?P<a>.+?) {_FEEDN} (?P<b>.+)")
def _only_fan_in(m, name, names):
    return [_fan_in(names(m["a"]), name(m["b"]), exactly=True)]


@_rule(r"(?P<b>.+?) (?:is fed only by|receives (?:inputs? )?only from|takes inputs? only from) (?P<a>.+)")
def _only_fed_by(m, name, names):
    return [_fan_in(names(m["a"]), name(m["b"]), exactly=True)]


@_rule(rf"(?P<b>.+?) {_FEDBY} (?P<a>.+)")
def _fed_by(m, name, names):
    srcs = names(m["a"])
    if len(srcs) == 1:
        return [{"type": "direct", "kind": "edge", "source": srcs[0], "target": name(m["b"])}]
    return [_fan_in(srcs, name(m["b"]))]


@_rule(rf"(?P<a>.+?) {_FEEDN} (?P<b>.+)")
def _fan_in_rule(m, name, names):
    srcs = names(m["a"])
    if len(srcs) < 2:
        raise GrammarError("a plural verb needs two or more components before it")
    tgts = names(m["b"])
    if len(tgts) > 1:
        raise GrammarError("several components feeding several others is not one claim; split the sentence")
    return [_fan_in(srcs, tgts[0])]


@_rule(rf"(?P<a>.+?) {_FEED1} (?P<only>only )?(?:both )?(?P<b>.+)")
def _feed(m, name, names):
    srcs, tgts = names(m["a"]), names(m["b"])
    if len(srcs) > 1 and len(tgts) == 1:  # "X and Y feeds Z": the verb's number is not checked
        return [_fan_in(srcs, tgts[0])]
    if len(srcs) > 1:
        raise GrammarError("several components feeding several others is not one claim; split the sentence")
    if len(tgts) == 1:
        return [{"type": "direct", "kind": "edge", "source": name(m["a"]), "target": tgts[0]}]
    return [{"type": "parallel", "kind": "fan_out", "source": name(m["a"]), "targets": tgts,
             **({"exactly": True} if m["only"] else {})}]


def _fan_in(srcs: list[str], target: str, exactly: bool = False) -> dict[str, Any]:
    if len(srcs) == 1:
        return {"type": "direct", "kind": "edge", "source": srcs[0], "target": target} if not exactly else \
            {"type": "analytical", "kind": "count", "of": "inputs", "count": 1, "component": target}
    return {"type": "parallel", "kind": "fan_in", "sources": srcs, "target": target,
            **({"exactly": True} if exactly else {})}


# ------------------------------------------------------------------ sentences
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')
_ARTICLE = re.compile(r"^(?:the|a|an|both|its|their)\s+", re.I)
_WHICH = re.compile(r",?\s+which\s+(?:in turn\s+|then\s+)?", re.I)


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.;!?])\s+", " ".join(text.split()))
    return [p for p in parts if p.strip(" .;!?")]


def _parse(sentence: str) -> list[dict[str, Any]]:
    quoted: list[str] = []

    def hide(m: re.Match[str]) -> str:
        quoted.append(m.group(1) or m.group(2))
        return f"\x00{len(quoted) - 1}\x00"

    body = _QUOTED.sub(hide, sentence).strip().rstrip(".;!?").strip()

    def name(raw: str) -> str:
        s = raw.strip().strip(",")
        while _ARTICLE.match(s):
            s = _ARTICLE.sub("", s, count=1)
        s = re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], s).strip()
        if not s:
            raise GrammarError("an empty component name")
        return s

    def names(raw: str) -> list[str]:
        parts = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", raw.strip())
        return [name(p) for p in parts if p.strip()]

    clauses = _WHICH.split(body)
    if len(clauses) > 1:  # X feeds Y, which feeds Z ...
        return _chain(clauses, name)
    for pattern, build in RULES:
        m = pattern.match(body)
        if m:
            return build(m, name, names)
    raise GrammarError("it fits no rule")


def _chain(clauses: list[str], name: Callable[[str], str]) -> list[dict[str, Any]]:
    first = re.match(rf"^(?P<a>.+?) (?P<neg>{_NOFEED}|{_FEED1}) (?P<b>.+)$", clauses[0], re.I)
    if not first:
        raise GrammarError("a 'which' chain must start with 'X feeds Y'")
    path, negs = [name(first["a"]), name(first["b"])], [bool(re.match(_NOFEED, first["neg"], re.I))]
    for c in clauses[1:]:
        m = re.match(rf"^(?P<neg>{_NOFEED}|{_FEED1}|{_FEEDN}) (?P<b>.+)$", c, re.I)
        if not m:
            raise GrammarError(f"cannot read the chain step {c!r}")
        path.append(name(m["b"]))
        negs.append(bool(re.match(_NOFEED, m["neg"], re.I)))
    if not any(negs):
        return [{"type": "sequential", "kind": "chain", "path": path}]
    return [{"type": "direct", "kind": "edge", "source": a, "target": b, **({"negated": True} if n else {})}
            for a, b, n in zip(path, path[1:], negs, strict=False)]


def claims_from_text(text: str, id_prefix: str = "t") -> list[Claim]:
    """The claims of every sentence of ``text`` (module docstring), ids ``t1, t2, ...``.
    Raises :class:`GrammarError` naming the first sentence it cannot read."""
    out: list[Claim] = []
    for k, sentence in enumerate(_sentences(text), 1):
        try:
            objs = _parse(sentence)
        except GrammarError as exc:
            shown = sentence if len(sentence) <= 120 else sentence[:117] + "..."
            detail = str(exc)
            raise GrammarError(
                f"cannot read sentence {k} (\"{shown}\"): "
                + ("it fits no rule of the claim grammar" if detail == "it fits no rule" else detail)
                + " (see README, Structural claims); rephrase it, or use --judge for free-form sentences") from None
        for obj in objs:
            obj = {k2: v for k2, v in obj.items() if not (k2 == "negated" and v is False)}
            out.append(Claim.from_dict({"id": f"{id_prefix}{len(out) + 1}", **obj, "text": sentence,
                                        "origin": {"backend": "grammar", "version": GRAMMAR_VERSION}}))
    if not out:
        raise GrammarError("no sentence to read")
    return out
