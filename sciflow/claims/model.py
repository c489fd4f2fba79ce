"""The claim format: one JSON object per line (``.jsonl``), validated against the JSON Schema
shipped in ``sciflow/format/schema/claim.schema.json``.

Four reasoning types (SciVer's subsets) and their kinds; components are named by label:

=============  ================  ===========================================  ==========================
type           kind              fields                                       supported when
=============  ================  ===========================================  ==========================
direct         ``edge``          source, target                               an arrow source -> target
parallel       ``fan_in``        sources (>= 2), target [, exactly]           every source -> target
                                                                              (exactly: and no other
                                                                              input)
parallel       ``fan_out``       source, targets (>= 2) [, exactly]           source -> every target
sequential     ``chain``         path (>= 3)                                  each feeds the next
sequential     ``reaches``       source, target                               a directed path
sequential     ``via``           source, via, target                          a path through via
sequential     ``only_through``  source, via, target                          a path, and every path
                                                                              passes via
sequential     ``before``        first, then                                  first reaches then, and
                                                                              then never reaches first
analytical     ``count``         of, count [, component]                      the count is exact
analytical     ``cycle``         [component]                                  a feedback loop (through
                                                                              component)
analytical     ``source``        component                                    no input, >= 1 output
analytical     ``sink``          component                                    no output, >= 1 input
analytical     ``longest_path``  steps                                        longest simple path has
                                                                              that many arrows
analytical     ``in_group``      component, group                             inside the group (or a
                                                                              group nested in it)
=============  ================  ===========================================  ==========================

``negated: true`` asserts the opposite ("A does not feed B"). ``count`` counts ``sources``
(nodes with no input and at least one output), ``sinks`` (the reverse), ``nodes``, ``edges``,
or the ``inputs`` / ``outputs`` of ``component``.

>>> c = Claim.from_dict({"type": "direct", "source": "Image Encoder", "target": "Fusion"})
>>> c.kind, c.names, c.describe()
('edge', ('Image Encoder', 'Fusion'), '"Image Encoder" feeds "Fusion"')
>>> Claim.from_dict({"type": "parallel", "sources": ["A", "B"], "target": "C", "exactly": True}).describe()
'"A" and "B" feed "C", and nothing else does'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from sciflow.format.jsonio import JSONError, parse_json

TYPES = ("direct", "parallel", "sequential", "analytical")
KINDS: dict[str, tuple[str, ...]] = {
    "direct": ("edge",),
    "parallel": ("fan_in", "fan_out"),
    "sequential": ("chain", "reaches", "via", "only_through", "before"),
    "analytical": ("count", "cycle", "source", "sink", "longest_path", "in_group"),
}
#: the fields each kind needs
REQUIRED: dict[str, tuple[str, ...]] = {
    "edge": ("source", "target"),
    "fan_in": ("sources", "target"),
    "fan_out": ("source", "targets"),
    "chain": ("path",),
    "reaches": ("source", "target"),
    "via": ("source", "via", "target"),
    "only_through": ("source", "via", "target"),
    "before": ("first", "then"),
    "count": ("of", "count"),
    "cycle": (),
    "source": ("component",),
    "sink": ("component",),
    "longest_path": ("steps",),
    "in_group": ("component", "group"),
}
COUNTABLE = ("sources", "sinks", "nodes", "edges", "inputs", "outputs")
_NAME_FIELDS = ("source", "target", "via", "first", "then", "component")
_LIST_FIELDS = ("sources", "targets", "path")


class ClaimFormatError(ValueError):
    """A claim that cannot be read. The message is one line naming the file and line."""


@dataclass(frozen=True)
class Claim:
    """One structural claim (see the module docstring for the fields of each kind)."""

    type: str
    kind: str
    id: str = ""
    negated: bool = False
    source: str | None = None
    target: str | None = None
    sources: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    exactly: bool = False
    path: tuple[str, ...] = ()
    via: str | None = None
    first: str | None = None
    then: str | None = None
    component: str | None = None
    group: str | None = None
    of: str | None = None
    count: int | None = None
    steps: int | None = None
    text: str | None = None
    label: str | None = None
    origin: Mapping[str, Any] = field(default_factory=dict, compare=False)
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    # ------------------------------------------------------------------ reading
    @classmethod
    def from_dict(cls, data: Any, where: str = "claim") -> Claim:
        """Validate one parsed JSON object; :class:`ClaimFormatError` names ``where``."""
        problems = validate_claim(data)
        if problems:
            raise ClaimFormatError(f"invalid claim {where}: {problems[0]}")
        kind = data.get("kind") or default_kind(data)
        return cls(
            type=data["type"], kind=kind, id=str(data.get("id", "")), negated=bool(data.get("negated", False)),
            source=data.get("source"), target=data.get("target"), sources=tuple(data.get("sources", ())),
            targets=tuple(data.get("targets", ())), exactly=bool(data.get("exactly", False)),
            path=tuple(data.get("path", ())), via=data.get("via"), first=data.get("first"), then=data.get("then"),
            component=data.get("component"), group=data.get("group"), of=data.get("of"), count=data.get("count"),
            steps=data.get("steps"), text=data.get("text"), label=data.get("label"),
            origin=dict(data.get("origin", {})), meta=dict(data.get("meta", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON object (unset fields left out); ``Claim.from_dict(c.to_dict()) == c``."""
        out: dict[str, Any] = {"id": self.id} if self.id else {}
        out["type"], out["kind"] = self.type, self.kind
        if self.negated:
            out["negated"] = True
        for name in _NAME_FIELDS[:2] + ("sources", "targets", "path") + _NAME_FIELDS[2:] + ("group", "of"):
            v = getattr(self, name)
            if v:
                out[name] = list(v) if isinstance(v, tuple) else v
        if self.exactly:
            out["exactly"] = True
        for name in ("count", "steps"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        for name in ("text", "label"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.origin:
            out["origin"] = dict(self.origin)
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    # ------------------------------------------------------------------ names
    @property
    def names(self) -> tuple[str, ...]:
        """The component names, in role order, each once (groups are not components)."""
        seen: list[str] = []
        for name in ("source", "sources", "first", "path", "via", "then", "target", "targets", "component"):
            v = getattr(self, name)
            for x in (v if isinstance(v, tuple) else (v,) if v else ()):
                if x not in seen:
                    seen.append(x)
        return tuple(seen)

    def describe(self) -> str:
        """The claim as a short sentence (quoted names)."""
        q = _q
        k = self.kind
        if k == "edge":
            s = f"{q(self.source)} feeds {q(self.target)}"
        elif k == "fan_in":
            s = f"{_and(self.sources)} feed {q(self.target)}" + (", and nothing else does" if self.exactly else "")
        elif k == "fan_out":
            s = f"{q(self.source)} feeds {_and(self.targets)}" + (", and nothing else" if self.exactly else "")
        elif k == "chain":
            s = " → ".join(q(x) for x in self.path)
        elif k == "reaches":
            s = f"{q(self.source)} reaches {q(self.target)}"
        elif k == "via":
            s = f"{q(self.source)} reaches {q(self.target)} through {q(self.via)}"
        elif k == "only_through":
            s = f"{q(self.source)} reaches {q(self.target)} only through {q(self.via)}"
        elif k == "before":
            s = f"{q(self.first)} comes before {q(self.then)} on every path"
        elif k == "count":
            if self.of in ("inputs", "outputs"):
                s = f"{q(self.component)} has exactly {self.count} {self.of}"
            else:
                s = f"the diagram has exactly {self.count} {self.of}"
        elif k == "cycle":
            s = "the diagram has a feedback loop" + (f" through {q(self.component)}" if self.component else "")
        elif k in ("source", "sink"):
            s = f"{q(self.component)} is a {k}"
        elif k == "longest_path":
            s = f"the longest path has {self.steps} steps"
        else:
            s = f"{q(self.component)} is inside the group {q(self.group)}"
        return f"not: {s}" if self.negated else s


def _q(x: str | None) -> str:
    return json.dumps(x, ensure_ascii=False)


def _and(xs: Iterable[str]) -> str:
    xs = [_q(x) for x in xs]
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def default_kind(data: Mapping[str, Any]) -> str | None:
    """The kind a claim without ``kind`` has: ``edge`` for direct, ``fan_in``/``fan_out`` for
    parallel by its fields, ``chain`` for a sequential claim with a ``path``; else ``None``."""
    t = data.get("type")
    if t == "direct":
        return "edge"
    if t == "parallel":
        return "fan_in" if "sources" in data else "fan_out" if "targets" in data else None
    if t == "sequential" and "path" in data:
        return "chain"
    return None


@lru_cache(maxsize=1)
def claim_schema() -> dict[str, Any]:
    """The JSON Schema of one claim (shipped in the package)."""
    text = resources.files("sciflow").joinpath("format/schema/claim.schema.json").read_text("utf-8")
    return parse_json(text, source="claim.schema.json")


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    return jsonschema.validators.validator_for(claim_schema())(claim_schema())


def validate_claim(data: Any) -> list[str]:
    """The problems of one claim object, each ``<json path>: <reason>`` (empty: valid).

    >>> validate_claim({"type": "direct", "source": "A"})
    ["$: a direct claim of kind 'edge' needs 'target'"]
    >>> validate_claim({"type": "sequential", "kind": "edge", "source": "A", "target": "B"})
    ["$.kind: 'edge' is not a kind of sequential claim (chain, reaches, via, only_through, before)"]
    """
    problems = []
    for err in sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        msg = err.message if err.validator != "additionalProperties" else err.message.replace(
            "Additional properties are not allowed", "unknown field")
        problems.append(f"{path}: {msg[:200]}")
    if problems or not isinstance(data, dict):
        return problems or ["$: a claim is a JSON object"]
    t = data["type"]
    kind = data.get("kind") or default_kind(data)
    if kind is None:
        return [f"$: a {t} claim needs 'kind' ({', '.join(KINDS[t])})"]
    if kind not in KINDS[t]:
        return [f"$.kind: {kind!r} is not a kind of {t} claim ({', '.join(KINDS[t])})"]
    missing = [f for f in REQUIRED[kind] if f not in data]
    if kind == "count" and data.get("of") in ("inputs", "outputs") and "component" not in data:
        missing.append("component")
    if missing:
        return [f"$: a {t} claim of kind {kind!r} needs {', '.join(repr(m) for m in missing)}"]
    return []


def load_claims(path: str | Path) -> list[Claim]:
    """Read a ``.jsonl`` claim file (blank lines skipped). A claim without ``id`` gets
    ``c<line>``. Raises :class:`ClaimFormatError` naming the file and line of the first bad one,
    ``OSError`` for a file that cannot be read."""
    path = Path(path)
    return parse_claims(path.read_text("utf-8-sig"), source=str(path))


def parse_claims(text: str, source: str = "<claims>") -> list[Claim]:
    """Claims from JSON-lines text (see :func:`load_claims`).

    >>> [c.id for c in parse_claims('{"type": "analytical", "kind": "cycle"}\\n\\n{"id": "x", "type": "direct", '
    ...     '"source": "A", "target": "B"}')]
    ['c1', 'x']
    >>> parse_claims('{"type": "direct", "source": "A"', source="my.jsonl")
    Traceback (most recent call last):
    ...
    sciflow.claims.model.ClaimFormatError: my.jsonl line 1: not valid JSON: Expecting ',' delimiter at line 1 column 33
    """
    claims: list[Claim] = []
    ids: set[str] = set()
    for k, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source} line {k}"
        try:
            data = parse_json(line, source=where)
        except JSONError as exc:
            raise ClaimFormatError(f"{where}: {exc}") from None
        if isinstance(data, dict) and "id" not in data:
            data = {"id": f"c{k}", **data}
        try:
            claim = Claim.from_dict(data, where)
        except ClaimFormatError as exc:
            raise ClaimFormatError(str(exc).replace(f"invalid claim {where}: ", f"{where}: ", 1)) from None
        if claim.id in ids:
            raise ClaimFormatError(f"{where}: duplicate claim id {claim.id!r}")
        ids.add(claim.id)
        claims.append(claim)
    return claims


def dump_claims(claims: Iterable[Claim]) -> str:
    """JSON lines of ``claims`` (one object per line, ending with a newline)."""
    return "".join(json.dumps(c.to_dict(), ensure_ascii=False) + "\n" for c in claims)
