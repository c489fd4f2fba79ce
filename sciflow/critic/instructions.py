"""The edit-instruction language: machine-readable graph edits, their sentences, and an editor.

An :class:`Instruction` is ``{"op": OP, "args": {...}, "region": [x0, y0, x1, y1] | None}``.
Boxes are named by their labels. The box an instruction *acts on* (``relabel``'s ``from``,
``remove_node``'s and ``split_node``'s ``label``) is named by the label it shows now; every
other name (arrow endpoints, the connections of new boxes) is the label the box has **after**
the relabel instructions of the same list are applied. ``region`` is where in the image the
edit happens (pixels of the prediction), ``None`` when the prediction has no boxes.

===============  =====================================================  =========================================
op               args                                                   sentence
===============  =====================================================  =========================================
``add_edge``     ``source``, ``target``                                 Add an arrow from "A" to "B".
``remove_edge``  ``source``, ``target`` (the arrow as drawn)            Remove the arrow from "A" to "B".
``reverse_edge`` ``source``, ``target`` (the arrow as drawn now)        Reverse the arrow from "B" to "A" so that
                                                                        it points from "A" to "B".
``add_node``     ``label``, ``sources``, ``targets``, ``replaces``      Add a box labelled "X" with arrows from "A"
                 (arrows the new box makes redundant: shortcuts)        into it and from it to "B", replacing the
                                                                        arrow from "A" to "B".
``remove_node``  ``label``                                              Remove the box "X" and its arrows.
``relabel``      ``from``, ``to``                                       Change the label "Encodr" to "Encoder".
``split_node``   ``label``, ``into`` (labels), ``edges`` (label pairs:  Split the box "A / B" into "A" and "B",
                 every arrow the parts need)                            with the arrows "X" → "A", "A" → "B".
===============  =====================================================  =========================================

Labels are written as JSON string literals, so any label survives the round trip
sentence → :func:`parse_instruction` → instruction; a region is appended as
``(region [x0, y0, x1, y1])``.

:func:`apply_instructions` is the deterministic editor: it resolves every instruction against
the *input* graph first and then applies them together (node edits, then arrow removals and
reversals, then arrow additions), so the order of a list never matters and swapped labels are
fixed by two relabels. ``Instruction.hints`` (name → node id, not part of equality or of the
sentence) pin a name to a node when labels are ambiguous; without hints a name resolves to the
box whose final label equals it (exactly, else after folding), the one nearest the region
when several do, else the first.
"""

from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sciflow.format.graph import DiagramGraph, Edge, Node
from sciflow.metrics.matching import fold

log = logging.getLogger(__name__)

OPS = ("add_edge", "remove_edge", "reverse_edge", "add_node", "remove_node", "relabel", "split_node")
Region = tuple[float, float, float, float]


class InstructionError(ValueError):
    """An instruction that cannot be read or applied."""


class InstructionWarning(UserWarning):
    """An instruction the editor skipped (its boxes or arrow are not in the graph)."""


def q(label: str) -> str:
    """A label as it appears in sentences: a JSON string literal."""
    return json.dumps(label, ensure_ascii=False)


def _num(v: float) -> str:
    v = round(float(v), 1)
    return str(int(v)) if v == int(v) else repr(v)


def region_text(region: Sequence[float] | None) -> str:
    return "" if region is None else "[" + ", ".join(_num(v) for v in region) + "]"


def norm_region(region: Sequence[float] | None) -> Region | None:
    """Round a region to 0.1 px (so its sentence form reads back exactly)."""
    if region is None:
        return None
    x0, y0, x1, y1 = (round(float(v), 1) for v in region)
    return (x0, y0, x1, y1)


def union_box(boxes: Iterable[Sequence[float] | None]) -> Region | None:
    bs = [b for b in boxes if b is not None]
    if not bs:
        return None
    return norm_region((min(b[0] for b in bs), min(b[1] for b in bs), max(b[2] for b in bs), max(b[3] for b in bs)))


def _listify(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_listify(x) for x in v]
    return v


@dataclass(frozen=True)
class Instruction:
    op: str
    args: Mapping[str, Any] = field(default_factory=dict)
    region: Region | None = None
    hints: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.op not in OPS:
            raise InstructionError(f"unknown op {self.op!r}; known: {', '.join(OPS)}")
        object.__setattr__(self, "args", {k: _listify(v) for k, v in self.args.items()})
        object.__setattr__(self, "region", norm_region(self.region))

    @property
    def text(self) -> str:
        return render_instruction(self)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "args": dict(self.args), "region": None if self.region is None else list(self.region),
                "text": self.text}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Instruction:
        return cls(op=d["op"], args=dict(d.get("args", {})), region=d.get("region"))

    @property
    def n_arrows(self) -> int:
        """How many arrows the edit draws or removes (its size, for the local/global policy)."""
        a = self.args
        if self.op == "add_node":
            return len(a.get("sources", ())) + len(a.get("targets", ())) + len(a.get("replaces", ()))
        if self.op == "split_node":
            return len(a.get("edges", ()))
        return 1 if self.op.endswith("_edge") else 0


# ------------------------------------------------------------------ sentences
def _and(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def render_instruction(ins: Instruction) -> str:
    a = ins.args
    op = ins.op
    if op == "add_edge":
        s = f"Add an arrow from {q(a['source'])} to {q(a['target'])}"
    elif op == "remove_edge":
        s = f"Remove the arrow from {q(a['source'])} to {q(a['target'])}"
    elif op == "reverse_edge":
        s = (f"Reverse the arrow from {q(a['source'])} to {q(a['target'])} so that it points from "
             f"{q(a['target'])} to {q(a['source'])}")
    elif op == "add_node":
        s = f"Add a box labelled {q(a['label'])}"
        src, tgt = a.get("sources", []), a.get("targets", [])
        parts = []
        if src:
            parts.append(f"from {_and([q(x) for x in src])} into it")
        if tgt:
            parts.append(f"from it to {_and([q(x) for x in tgt])}")
        if parts:
            s += " with arrows " + " and ".join(parts)
        rep = a.get("replaces", [])
        if rep:
            word = "arrow" if len(rep) == 1 else "arrows"
            s += f", replacing the {word} " + _and([f"from {q(x)} to {q(y)}" for x, y in rep])
    elif op == "remove_node":
        s = f"Remove the box {q(a['label'])} and its arrows"
    elif op == "relabel":
        s = f"Change the label {q(a['from'])} to {q(a['to'])}"
    elif op == "split_node":
        s = f"Split the box {q(a['label'])} into {_and([q(x) for x in a['into']])}"
        edges = a.get("edges", [])
        if edges:
            word = "arrow" if len(edges) == 1 else "arrows"
            s += f", with the {word} " + _and([f"{q(x)} → {q(y)}" for x, y in edges])
    else:  # pragma: no cover - guarded by __post_init__
        raise InstructionError(op)
    if ins.region is not None:
        s += f" (region {region_text(ins.region)})"
    return s + "."


_STR = re.compile(r'"(?:[^"\\]|\\.)*"')
_S = r"§(\d+)"
_LIST = r"(§\d+(?:(?:, | and )§\d+)*)"
_PAIR = r"(?:from )?§\d+ (?:→|->|to) §\d+"
_PAIRS = rf"((?:{_PAIR})(?:(?:, | and )(?:{_PAIR}))*)"
_REGION = r"(?: \(region \[([-0-9., ]+)\]\))?\.?$"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("add_edge", re.compile(rf"^add an arrow from {_S} to {_S}{_REGION}", re.I)),
    ("remove_edge", re.compile(rf"^remove the arrow from {_S} to {_S}{_REGION}", re.I)),
    ("reverse_edge", re.compile(rf"^reverse the arrow from {_S} to {_S}(?: so that it points from §\d+ to §\d+)?"
                                rf"{_REGION}", re.I)),
    ("add_node", re.compile(rf"^add a box labell?ed {_S}(?: with arrows(?: from {_LIST} into it)?(?: and)?"
                            rf"(?: from it to {_LIST})?)?(?:, replacing the arrows? {_PAIRS})?{_REGION}", re.I)),
    ("remove_node", re.compile(rf"^remove the box {_S}(?: and its arrows)?{_REGION}", re.I)),
    ("relabel", re.compile(rf"^change the label {_S} to {_S}{_REGION}", re.I)),
    ("split_node", re.compile(rf"^split the (?:merged )?box {_S} into {_LIST}(?:, with the arrows? {_PAIRS})?"
                              rf"{_REGION}", re.I)),
]


def _normalise_quotes(line: str) -> str:
    return line.replace("\u201c", '"').replace("\u201d", '"').strip()


def parse_instruction(line: str) -> Instruction:
    """Read one instruction sentence (the inverse of :func:`render_instruction`).

    >>> parse_instruction('Add an arrow from "Encoder" to "Decoder".').args
    {'source': 'Encoder', 'target': 'Decoder'}
    """
    text = _normalise_quotes(re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", line))
    labels: list[str] = []

    def take(m: re.Match[str]) -> str:
        try:
            labels.append(json.loads(m.group(0)))
        except json.JSONDecodeError:
            labels.append(m.group(0)[1:-1])
        return f"§{len(labels) - 1}"

    tmpl = _STR.sub(take, text)

    def lab(tok: str) -> str:
        return labels[int(tok)]

    def many(group: str | None) -> list[str]:
        return [labels[int(x)] for x in re.findall(r"§(\d+)", group or "")]

    def pairs(group: str | None) -> list[list[str]]:
        xs = many(group)
        return [[xs[i], xs[i + 1]] for i in range(0, len(xs) - 1, 2)]

    for op, pat in _PATTERNS:
        m = pat.match(tmpl)
        if not m:
            continue
        g = m.groups()
        region_s = g[-1]
        region = None
        if region_s:
            vals = [float(v) for v in region_s.replace(" ", "").split(",") if v]
            if len(vals) != 4:
                raise InstructionError(f"bad region in {line!r}")
            region = tuple(vals)
        if op in ("add_edge", "remove_edge", "reverse_edge"):
            args: dict[str, Any] = {"source": lab(g[0]), "target": lab(g[1])}
        elif op == "add_node":
            args = {"label": lab(g[0]), "sources": many(g[1]), "targets": many(g[2]), "replaces": pairs(g[3])}
        elif op == "remove_node":
            args = {"label": lab(g[0])}
        elif op == "relabel":
            args = {"from": lab(g[0]), "to": lab(g[1])}
        else:
            args = {"label": lab(g[0]), "into": many(g[1]), "edges": pairs(g[2])}
        return Instruction(op, args, region)  # type: ignore[arg-type]
    raise InstructionError(f"not an edit instruction: {line!r}")


# ------------------------------------------------------------------ editor
def _centre(b: Sequence[float]) -> tuple[float, float]:
    return ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)


class _Resolver:
    """Names -> node ids over a set of nodes with their (final) labels."""

    def __init__(self, nodes: Sequence[tuple[str, str, Any]]):
        self.nodes = list(nodes)  # (id, label, bbox)
        self.ids = {i for i, _, _ in nodes}

    def find(self, name: str, ins: Instruction) -> str | None:
        hint = dict(ins.hints).get(name)
        if hint is not None and hint in self.ids:
            return hint
        cands = [i for i, lab, _ in self.nodes if lab == name]
        if not cands:
            cands = [i for i, lab, _ in self.nodes if fold(lab) == fold(name)]
        if len(cands) > 1 and ins.region is not None:
            cx, cy = _centre(ins.region)
            boxes = {i: b for i, _, b in self.nodes}

            def dist(i: str) -> float:
                b = boxes.get(i)
                if b is None:
                    return float("inf")
                x, y = _centre(b)
                return (x - cx) ** 2 + (y - cy) ** 2

            cands.sort(key=dist)
        return cands[0] if cands else None


def _skip(ins: Instruction, why: str, strict: bool) -> None:
    msg = f"instruction skipped: {ins.text} ({why})"
    if strict:
        raise InstructionError(msg)
    log.warning(msg)
    warnings.warn(msg, InstructionWarning, stacklevel=3)


def apply_instructions(
    graph: DiagramGraph, instructions: Iterable[Instruction], *, strict: bool = False
) -> DiagramGraph:
    """``graph`` with the instructions applied (see the module docstring for the semantics).

    An instruction whose boxes or arrow cannot be found is skipped with an
    :class:`InstructionWarning` (``strict=True``: :class:`InstructionError`). New boxes get ids
    ``new1``, ``new2``, ... (never clashing with existing ids) and no bbox; edited boxes keep
    theirs. Deterministic: same graph and instructions, same result.

    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "Encodr"},
    ...     {"id": "b", "label": "Decoder"}], "edges": [{"source": "b", "target": "a"}]})
    >>> out = apply_instructions(g, [Instruction("relabel", {"from": "Encodr", "to": "Encoder"}),
    ...     Instruction("reverse_edge", {"source": "Decoder", "target": "Encoder"})])
    >>> [n.label for n in out.nodes], [(e.source, e.target) for e in out.edges]
    (['Encoder', 'Decoder'], [('a', 'b')])
    """
    instructions = list(instructions)
    current = _Resolver([(n.id, n.label, n.bbox) for n in graph.nodes])
    label = {n.id: n.label for n in graph.nodes}
    removed: set[str] = set()
    # 1. boxes acted on, resolved by their current labels
    for ins in instructions:
        a = ins.args
        if ins.op == "relabel":
            nid = current.find(a["from"], ins)
            if nid is None:
                _skip(ins, f"no box {q(a['from'])}", strict)
                continue
            label[nid] = a["to"]
        elif ins.op in ("remove_node", "split_node"):
            nid = current.find(a["label"], ins)
            if nid is None:
                _skip(ins, f"no box {q(a['label'])}", strict)
                continue
            removed.add(nid)
    taken = {n.id for n in graph.nodes}
    new_nodes: list[Node] = []

    def new_node(lab: str) -> str:
        k = len(new_nodes) + 1
        while f"new{k}" in taken:
            k += 1
        nid = f"new{k}"
        taken.add(nid)
        new_nodes.append(Node(nid, lab))
        return nid

    for ins in instructions:
        if ins.op == "add_node":
            new_node(ins.args["label"])
        elif ins.op == "split_node" and current.find(ins.args["label"], ins) in removed:
            for lab in ins.args["into"]:
                new_node(lab)
    nodes = [replace(n, label=label[n.id]) for n in graph.nodes if n.id not in removed] + new_nodes
    final = _Resolver([(n.id, n.label, n.bbox) for n in nodes])
    edges: list[tuple[str, str]] = [(e.source, e.target) for e in graph.edges
                                    if e.source not in removed and e.target not in removed]
    old_attrs = {(e.source, e.target): e for e in graph.edges}

    def ends(ins: Instruction, s: str, t: str) -> tuple[str, str] | None:
        u, v = final.find(s, ins), final.find(t, ins)
        if u is None or v is None:
            _skip(ins, f"no box {q(s if u is None else t)}", strict)
            return None
        return u, v

    # 2. arrow removals and reversals (on arrows that exist now)
    add: list[tuple[str, str]] = []
    for ins in instructions:
        a = ins.args
        if ins.op in ("remove_edge", "reverse_edge"):
            uv = ends(ins, a["source"], a["target"])
            if uv is None:
                continue
            if uv not in edges:
                _skip(ins, "no such arrow", strict)
                continue
            edges.remove(uv)
            if ins.op == "reverse_edge":
                add.append((uv[1], uv[0]))
        elif ins.op == "add_node":
            for s, t in a.get("replaces", []):
                uv = ends(ins, s, t)
                if uv is not None and uv in edges:
                    edges.remove(uv)
    # 3. arrow additions
    for ins in instructions:
        a = ins.args
        pairs: list[tuple[str, str]] = []
        if ins.op == "add_edge":
            pairs = [(a["source"], a["target"])]
        elif ins.op == "add_node":
            pairs = [(s, a["label"]) for s in a.get("sources", [])] + [(a["label"], t) for t in a.get("targets", [])]
        elif ins.op == "split_node":
            pairs = [(s, t) for s, t in a.get("edges", [])]
        for s, t in pairs:
            uv = ends(ins, s, t)
            if uv is not None:
                add.append(uv)
    for uv in add:
        if uv not in edges and uv[0] != uv[1]:
            edges.append(uv)
    out_edges = tuple(
        replace(old_attrs[uv]) if uv in old_attrs else Edge(uv[0], uv[1]) for uv in edges
    )
    return replace(graph, nodes=tuple(nodes), edges=out_edges)
