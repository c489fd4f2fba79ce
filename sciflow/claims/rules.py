"""The checks, one function per claim kind, on grounded node ids.

Each returns a :class:`Finding`: whether the (un-negated) claim holds on the graph (``None``:
the graph cannot say), a sentence stating the fact that decides it, and the nodes and arrows
that are the evidence (``absent``: the arrows looked for and not found). Negation, grounding
and the verdict are :mod:`sciflow.claims.check`'s business.

>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({"id": "g", "nodes": [{"id": x, "label": x.upper()} for x in "abc"],
...     "edges": [{"source": "a", "target": "c"}, {"source": "b", "target": "c"}]})
>>> f = RULES["fan_in"](Structure(g), {"sources": ["a", "b"], "target": "c", "exactly": True})
>>> f.holds, f.fact
(True, 'both "A" and "B" feed "C", and "C" has no other input')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sciflow.claims.structure import LONGEST_PATH_BUDGET, Structure, path_edges


@dataclass(frozen=True)
class Finding:
    holds: bool | None
    fact: str
    nodes: tuple[str, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()
    absent: tuple[tuple[str, str], ...] = field(default=())


Rule = Callable[[Structure, Mapping[str, Any]], Finding]
RULES: dict[str, Rule] = {}


def rule(kind: str) -> Callable[[Rule], Rule]:
    def deco(fn: Rule) -> Rule:
        RULES[kind] = fn
        return fn

    return deco


def _q(s: Structure, x: str) -> str:
    return json.dumps(s.label[x], ensure_ascii=False)


def _and(s: Structure, xs: Sequence[str]) -> str:
    names = [_q(s, x) for x in xs]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _route(s: Structure, p: Sequence[str]) -> str:
    return " → ".join(_q(s, x) for x in p)


def _uniq(xs: Sequence[str]) -> tuple[str, ...]:
    out: list[str] = []
    for x in xs:
        if x not in out:
            out.append(x)
    return tuple(out)


# ---------------------------------------------------------------- direct
@rule("edge")
def edge(s: Structure, a: Mapping[str, Any]) -> Finding:
    u, v = a["source"], a["target"]
    if s.has_edge(u, v):
        return Finding(True, f"there is an arrow from {_q(s, u)} to {_q(s, v)}", (u, v), ((u, v),))
    if s.has_edge(v, u):
        return Finding(False, f"there is no arrow from {_q(s, u)} to {_q(s, v)}: the arrow points from "
                              f"{_q(s, v)} to {_q(s, u)}", (u, v), ((v, u),), ((u, v),))
    p = s.path(u, v)
    if p:
        return Finding(False, f"there is no arrow from {_q(s, u)} to {_q(s, v)}, only the path {_route(s, p)}",
                       _uniq(p), tuple(path_edges(p)), ((u, v),))
    return Finding(False, f"there is no arrow from {_q(s, u)} to {_q(s, v)}", (u, v), (), ((u, v),))


# ---------------------------------------------------------------- parallel
def _fan(s: Structure, hub: str, others: Sequence[str], exactly: bool, incoming: bool) -> Finding:
    pairs = [(o, hub) if incoming else (hub, o) for o in others]
    present = [p for p in pairs if s.has_edge(*p)]
    missing = [p for p in pairs if not s.has_edge(*p)]
    neighbours = s.pred[hub] if incoming else s.succ[hub]
    extra = [x for x in neighbours if x not in others]
    extra_pairs = [(x, hub) if incoming else (hub, x) for x in extra]
    nodes = _uniq([hub, *others] + (extra if exactly else []))
    verb = "feed" if incoming else "is fed by"
    if missing:
        lost = [p[0] if incoming else p[1] for p in missing]
        if incoming:
            fact = f"{_and(s, lost)} {'does' if len(lost) == 1 else 'do'} not feed {_q(s, hub)}"
        else:
            fact = f"{_q(s, hub)} does not feed {_and(s, lost)}"
        return Finding(False, fact, nodes, tuple(present), tuple(missing))
    what = "input" if incoming else "output"
    if exactly and extra:
        fact = (f"{_q(s, hub)} also has the {what}{'s' if len(extra) > 1 else ''} {_and(s, extra)}")
        return Finding(False, fact, nodes, tuple(present + extra_pairs))
    if incoming:
        fact = f"{'both ' if len(others) == 2 else 'all of '}{_and(s, others)} {verb} {_q(s, hub)}"
    else:
        fact = f"{_q(s, hub)} feeds {'both ' if len(others) == 2 else 'all of '}{_and(s, others)}"
    if exactly:
        fact += f", and {_q(s, hub)} has no other {what}"
    return Finding(True, fact, nodes, tuple(present))


@rule("fan_in")
def fan_in(s: Structure, a: Mapping[str, Any]) -> Finding:
    return _fan(s, a["target"], a["sources"], bool(a.get("exactly")), incoming=True)


@rule("fan_out")
def fan_out(s: Structure, a: Mapping[str, Any]) -> Finding:
    return _fan(s, a["source"], a["targets"], bool(a.get("exactly")), incoming=False)


# ---------------------------------------------------------------- sequential
@rule("chain")
def chain(s: Structure, a: Mapping[str, Any]) -> Finding:
    p = list(a["path"])
    pairs = list(zip(p, p[1:], strict=False))
    missing = [e for e in pairs if not s.has_edge(*e)]
    present = tuple(e for e in pairs if s.has_edge(*e))
    if missing:
        u, v = missing[0]
        more = f" (and {len(missing) - 1} more step{'s' if len(missing) > 2 else ''} of the chain)" \
            if len(missing) > 1 else ""
        back = f": the arrow points from {_q(s, v)} to {_q(s, u)}" if s.has_edge(v, u) else ""
        return Finding(False, f"there is no arrow from {_q(s, u)} to {_q(s, v)}{back}{more}", _uniq(p), present,
                       tuple(missing))
    return Finding(True, f"the arrows {_route(s, p)} are all there", _uniq(p), present)


@rule("reaches")
def reaches(s: Structure, a: Mapping[str, Any]) -> Finding:
    u, v = a["source"], a["target"]
    p = s.path(u, v)
    if p:
        return Finding(True, f"{_q(s, u)} reaches {_q(s, v)} along {_route(s, p)}", _uniq(p), tuple(path_edges(p)))
    return Finding(False, f"no directed path leads from {_q(s, u)} to {_q(s, v)}", (u, v))


@rule("via")
def via(s: Structure, a: Mapping[str, Any]) -> Finding:
    u, w, v = a["source"], a["via"], a["target"]
    p1, p2 = s.path(u, w), s.path(w, v)
    if p1 and p2:
        p = p1 + p2[1:]
        return Finding(True, f"{_q(s, u)} reaches {_q(s, v)} through {_q(s, w)} along {_route(s, p)}", _uniq(p),
                       tuple(path_edges(p)))
    if not p1:
        return Finding(False, f"no directed path leads from {_q(s, u)} to {_q(s, w)}", (u, w, v))
    return Finding(False, f"no directed path leads from {_q(s, w)} to {_q(s, v)}", (u, w, v),
                   tuple(path_edges(p1)))


@rule("only_through")
def only_through(s: Structure, a: Mapping[str, Any]) -> Finding:
    u, w, v = a["source"], a["via"], a["target"]
    p = s.path(u, v)
    if not p:
        return Finding(False, f"no directed path leads from {_q(s, u)} to {_q(s, v)}", (u, w, v))
    bypass = s.path(u, v, avoid={w}) if w not in (u, v) else None
    if bypass:
        return Finding(False, f"{_q(s, u)} also reaches {_q(s, v)} without {_q(s, w)}, along {_route(s, bypass)}",
                       _uniq([u, w, v] + bypass), tuple(path_edges(bypass)))
    p1, p2 = s.path(u, w), s.path(w, v)
    route = (p1 or [u]) + (p2 or [v])[1:]
    return Finding(True, f"every path from {_q(s, u)} to {_q(s, v)} passes {_q(s, w)}, e.g. {_route(s, route)}",
                   _uniq(route), tuple(path_edges(route)))


@rule("before")
def before(s: Structure, a: Mapping[str, Any]) -> Finding:
    u, v = a["first"], a["then"]
    p, back = s.path(u, v), s.path(v, u)
    if p and not back:
        return Finding(True, f"{_q(s, u)} reaches {_q(s, v)} along {_route(s, p)} and {_q(s, v)} never leads back "
                             f"to {_q(s, u)}", _uniq(p), tuple(path_edges(p)))
    if back and p:
        return Finding(False, f"{_q(s, u)} and {_q(s, v)} lie on a loop ({_route(s, p + back[1:])}): neither comes "
                              "first on every path", _uniq(p + back), tuple(path_edges(p + back[1:])))
    if back:
        return Finding(False, f"{_q(s, v)} comes before {_q(s, u)}: {_route(s, back)}", _uniq(back),
                       tuple(path_edges(back)))
    return Finding(False, f"no directed path joins {_q(s, u)} and {_q(s, v)}", (u, v))


# ---------------------------------------------------------------- analytical
@rule("count")
def count(s: Structure, a: Mapping[str, Any]) -> Finding:
    of, n = a["of"], int(a["count"])
    edges: tuple[tuple[str, str], ...] = ()
    if of == "sources":
        items = s.sources()
    elif of == "sinks":
        items = s.sinks()
    elif of == "nodes":
        items = list(s.succ)
    elif of == "edges":
        items = []
        edges = tuple((e.source, e.target) for e in s.graph.edges)
    else:
        c = a["component"]
        items = s.pred[c] if of == "inputs" else s.succ[c]
        edges = tuple((x, c) if of == "inputs" else (c, x) for x in items)
        items = [c] + items
    value = len(edges) if of in ("edges", "inputs", "outputs") else len(items)
    what = of if of in ("sources", "sinks", "nodes", "edges") else f"{of} of {_q(s, a['component'])}"
    listed = f" ({_and(s, items[1:] if of in ('inputs', 'outputs') else items)})" \
        if 0 < value <= 8 and of not in ("edges",) else ""
    fact = f"the diagram has {value} {what}{listed}"
    return Finding(value == n, fact, tuple(items), edges)


@rule("cycle")
def cycle(s: Structure, a: Mapping[str, Any]) -> Finding:
    c = a.get("component")
    loop = s.cycle(c)
    where = f" through {_q(s, c)}" if c else ""
    if loop:
        return Finding(True, f"there is a feedback loop{where}: {_route(s, loop)}", _uniq(loop),
                       tuple(path_edges(loop)))
    return Finding(False, f"there is no feedback loop{where}: the arrows form no directed cycle", (c,) if c else ())


def _end(s: Structure, c: str, sink: bool) -> Finding:
    ins, outs = s.pred[c], s.succ[c]
    nodes = (c,) + tuple(ins) + tuple(outs)
    edges = tuple((x, c) for x in ins) + tuple((c, x) for x in outs)
    bad, good = (outs, ins) if sink else (ins, outs)
    role = "sink" if sink else "source"
    if bad:
        return Finding(False, f"{_q(s, c)} {'feeds' if sink else 'is fed by'} {_and(s, bad)}", nodes, edges)
    if not good:
        return Finding(False, f"{_q(s, c)} has no arrows at all, so it is no {role}", nodes, edges)
    return Finding(True, f"{_q(s, c)} has {'inputs but no output' if sink else 'outputs but no input'}", nodes, edges)


@rule("source")
def source(s: Structure, a: Mapping[str, Any]) -> Finding:
    return _end(s, a["component"], sink=False)


@rule("sink")
def sink(s: Structure, a: Mapping[str, Any]) -> Finding:
    return _end(s, a["component"], sink=True)


@rule("longest_path")
def longest_path(s: Structure, a: Mapping[str, Any]) -> Finding:
    if not s.succ:
        return Finding(int(a["steps"]) == 0, "the diagram has no components")
    found = s.longest_path(int(a.get("budget") or LONGEST_PATH_BUDGET))
    if found is None:
        return Finding(None, "the diagram has too many loops to find its longest path within the search budget")
    n, p = found
    return Finding(n == int(a["steps"]), f"the longest path has {n} step{'s' if n != 1 else ''}: {_route(s, p)}",
                   _uniq(p), tuple(path_edges(p)))


@rule("in_group")
def in_group(s: Structure, a: Mapping[str, Any]) -> Finding:
    c, g = a["component"], a["group"]
    chain_ = s.groups_of(c)
    labels = {x.id: x.label or x.id for x in s.graph.groups}
    gname = json.dumps(labels.get(g, g), ensure_ascii=False)
    if g in chain_:
        return Finding(True, f"{_q(s, c)} lies inside the group {gname}", (c,))
    where = f"it lies in {json.dumps(labels.get(chain_[0], chain_[0]), ensure_ascii=False)}" if chain_ \
        else "it is in no group"
    return Finding(False, f"{_q(s, c)} is not inside the group {gname}: {where}", (c,))
