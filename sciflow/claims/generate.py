"""A claim benchmark from reference graphs: balanced true and false claims of every type.

For each graph, :func:`generate_claims` draws, with a generator seeded from ``seed`` and the
graph id, up to ``per_type`` claims of each reasoning type, half true and half false (the
smaller half decides when a graph cannot give more of one side, so every type stays balanced
per graph). Components are named by their exact labels, and only labels that occur once
(after folding) are used, so every name is unambiguous on the reference.

True claims state real relations (an arrow, a fan-in, a path, a cut vertex, a count, the
longest path, a group) or deny absent ones; false claims are made by

===========  ==============================================================================
``reverse``  turning an arrow or an order around (B -> A for A -> B; "C before A")
``reroute``  sending it elsewhere (A -> C where A only reaches C; a chain with a skipped step;
             a bypassed "only through")
``swap``     exchanging a component for another one (a fan-in member that does not feed C,
             a count, a group, a sink that is not one)
``invent``   naming a component the graph does not have (labels from
             :data:`sciflow.bench.perturb.INVENTED_LABELS` unlike every label of the graph)
``negate``   denying a relation that holds
===========  ==============================================================================

Gold labels are computed by :func:`gold_label` with networkx, independently of the checker
(:mod:`sciflow.claims.rules`), so checking the claims against their own references is a test
of the checker's logic. Same graphs and seed, same claims.

>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({"id": "g", "nodes": [{"id": x, "label": f"Stage {x}"} for x in "abcd"],
...     "edges": [{"source": "a", "target": "c"}, {"source": "b", "target": "c"}, {"source": "c", "target": "d"}]})
>>> cs = generate_claims(g, seed=0, per_type=2)
>>> sorted({c.type for c in cs}) == sorted(TYPES), [c.label for c in cs if c.type == "direct"]
(True, ['supported', 'refuted'])
>>> cs == generate_claims(g, seed=0, per_type=2), cs == generate_claims(g, seed=1, per_type=2)
(True, False)
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from typing import Any

import networkx as nx

from sciflow.bench.perturb import INVENTED_LABELS
from sciflow.claims.model import TYPES, Claim
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.matching import fold, string_similarity

#: longest-path claims are made only for graphs this small when they have loops (exact search)
MAX_CYCLIC_NODES = 24


def graph_seed(graph_id: str, seed: int) -> int:
    return int(hashlib.sha256(f"claims:{seed}:{graph_id}".encode()).hexdigest()[:12], 16)


def _nx(graph: DiagramGraph) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(n.id for n in graph.nodes)
    g.add_edges_from((e.source, e.target) for e in graph.edges)
    return g


def _longest_simple(g: nx.DiGraph) -> int:
    if nx.is_directed_acyclic_graph(g):
        return nx.dag_longest_path_length(g) if g.number_of_nodes() else 0
    best = 0
    for s in g:
        for t in g:
            if s != t:
                for p in nx.all_simple_paths(g, s, t):
                    best = max(best, len(p) - 1)
    return best


# ------------------------------------------------------------------ gold labels
def gold_label(claim: Claim, graph: DiagramGraph, resolve: Mapping[str, str] | None = None) -> str:
    """``supported`` or ``refuted`` on ``graph`` taken as the whole truth, with networkx.

    Names resolve to the node whose label folds to the same text (``resolve`` maps extra
    names to node ids); a name that resolves to no node refutes the claim (before negation)."""
    by_label = {fold(n.label): n.id for n in graph.nodes}
    by_label.update({fold(k): v for k, v in (resolve or {}).items()})
    ids = {name: by_label.get(fold(name)) for name in claim.names}
    holds: bool
    no_group = claim.group is not None and fold(claim.group) not in {fold(x.label or "") for x in graph.groups}
    if any(v is None for v in ids.values()) or no_group:
        holds = False
    else:
        holds = _holds(claim, _nx(graph), ids, graph)
    return "supported" if holds != claim.negated else "refuted"


def _holds(c: Claim, g: nx.DiGraph, ids: Mapping[str, Any], graph: DiagramGraph) -> bool:
    i = ids.get
    k = c.kind
    if k == "edge":
        return g.has_edge(i(c.source), i(c.target))
    if k == "fan_in":
        t = i(c.target)
        srcs = {i(x) for x in c.sources}
        return all(g.has_edge(s, t) for s in srcs) and (not c.exactly or set(g.predecessors(t)) == srcs)
    if k == "fan_out":
        s = i(c.source)
        tgts = {i(x) for x in c.targets}
        return all(g.has_edge(s, t) for t in tgts) and (not c.exactly or set(g.successors(s)) == tgts)
    if k == "chain":
        p = [i(x) for x in c.path]
        return all(g.has_edge(a, b) for a, b in zip(p, p[1:], strict=False))
    if k == "reaches":
        return i(c.target) in nx.descendants(g, i(c.source)) or (
            c.source == c.target and any(i(c.source) in nx.descendants(g, s) for s in g.successors(i(c.source))))
    if k == "via":
        return i(c.via) in nx.descendants(g, i(c.source)) and i(c.target) in nx.descendants(g, i(c.via))
    if k == "only_through":
        u, w, v = i(c.source), i(c.via), i(c.target)
        if v not in nx.descendants(g, u):
            return False
        h = g.copy()
        h.remove_node(w)
        return v not in nx.descendants(h, u)
    if k == "before":
        u, v = i(c.first), i(c.then)
        return v in nx.descendants(g, u) and u not in nx.descendants(g, v)
    if k == "count":
        if c.of == "sources":
            n = sum(1 for x in g if g.in_degree(x) == 0 and g.out_degree(x) > 0)
        elif c.of == "sinks":
            n = sum(1 for x in g if g.out_degree(x) == 0 and g.in_degree(x) > 0)
        elif c.of == "nodes":
            n = g.number_of_nodes()
        elif c.of == "edges":
            n = g.number_of_edges()
        else:
            x = i(c.component)
            n = g.in_degree(x) if c.of == "inputs" else g.out_degree(x)
        return n == c.count
    if k == "cycle":
        if c.component is None:
            return not nx.is_directed_acyclic_graph(g)
        x = i(c.component)
        return any(x in nx.descendants(g, s) or s == x for s in g.successors(x))
    if k in ("sink", "source"):
        x = i(c.component)
        a, b = (g.out_degree(x), g.in_degree(x)) if k == "sink" else (g.in_degree(x), g.out_degree(x))
        return a == 0 and b > 0
    if k == "longest_path":
        return _longest_simple(g) == c.steps
    if k == "in_group":
        gid = {fold(x.label or ""): x.id for x in graph.groups}[fold(c.group or "")]
        parent = {x.id: x.parent for x in graph.groups}
        at = {n.id: n.group for n in graph.nodes}[i(c.component)]
        seen = set()
        while at is not None and at not in seen:
            if at == gid:
                return True
            seen.add(at)
            at = parent.get(at)
        return False
    raise ValueError(f"unknown claim kind {k!r}")


# ------------------------------------------------------------------ drawing claims
Maker = Callable[["_Ctx", bool], "dict[str, Any] | None"]


class _Ctx:
    def __init__(self, graph: DiagramGraph, rnd: random.Random):
        self.graph, self.rnd, self.g = graph, rnd, _nx(graph)
        counts: dict[str, int] = {}
        for n in graph.nodes:
            counts[fold(n.label)] = counts.get(fold(n.label), 0) + 1
        self.lab = {n.id: n.label for n in graph.nodes}
        self.ok = [n.id for n in graph.nodes if fold(n.label) and counts[fold(n.label)] == 1]
        self.desc = {x: nx.descendants(self.g, x) for x in self.g}
        labels = [n.label for n in graph.nodes]
        self.invented = [x for x in INVENTED_LABELS
                         if not labels or float(string_similarity([x], labels).max()) < 0.5]

    def pick(self, xs: list[Any]) -> Any:
        return self.rnd.choice(xs) if xs else None

    def edges(self) -> list[tuple[str, str]]:
        ok = set(self.ok)
        return [(u, v) for u, v in self.g.edges if u in ok and v in ok and u != v]

    def invent(self) -> str | None:
        return self.pick(self.invented)


def _direct(x: _Ctx, true: bool) -> dict[str, Any] | None:
    L = x.lab
    edges = x.edges()
    if true:
        if x.rnd.random() < 0.7 or not x.ok:
            e = x.pick(edges)
            return e and {"type": "direct", "source": L[e[0]], "target": L[e[1]], "meta": {"method": "edge"}}
        pairs = [(u, v) for u in x.ok for v in x.ok if u != v and not x.g.has_edge(u, v)]
        p = x.pick(pairs)
        return p and {"type": "direct", "source": L[p[0]], "target": L[p[1]], "negated": True,
                      "meta": {"method": "deny_absent"}}
    method = x.pick(["reverse", "reroute", "invent", "negate"])
    if method == "reverse":
        e = x.pick([(u, v) for u, v in edges if not x.g.has_edge(v, u)])
        return e and {"type": "direct", "source": L[e[1]], "target": L[e[0]], "meta": {"method": method}}
    if method == "reroute":
        p = x.pick([(u, v) for u in x.ok for v in sorted(x.desc[u]) if v in x.ok and v != u and not x.g.has_edge(u, v)])
        return p and {"type": "direct", "source": L[p[0]], "target": L[p[1]], "meta": {"method": method}}
    if method == "invent":
        e, name = x.pick(edges), x.invent()
        if not e or not name:
            return None
        ends = (L[e[0]], name) if x.rnd.random() < 0.5 else (name, L[e[1]])
        return {"type": "direct", "source": ends[0], "target": ends[1], "meta": {"method": method}}
    e = x.pick(edges)
    return e and {"type": "direct", "source": L[e[0]], "target": L[e[1]], "negated": True, "meta": {"method": method}}


def _parallel(x: _Ctx, true: bool) -> dict[str, Any] | None:
    L, ok = x.lab, set(x.ok)
    fan_in = x.rnd.random() < 0.6
    hubs = [h for h in x.ok if len([y for y in (x.g.predecessors(h) if fan_in else x.g.successors(h))
                                    if y in ok and y != h]) >= 2]
    h = x.pick(hubs)
    if h is None:
        fan_in = not fan_in
        hubs = [h for h in x.ok if len([y for y in (x.g.predecessors(h) if fan_in else x.g.successors(h))
                                        if y in ok and y != h]) >= 2]
        h = x.pick(hubs)
        if h is None:
            return None
    nb = sorted(y for y in (x.g.predecessors(h) if fan_in else x.g.successors(h)) if y in ok and y != h)
    members = x.rnd.sample(nb, 2)
    all_nb = set(x.g.predecessors(h) if fan_in else x.g.successors(h))
    method = "fan"
    exactly = x.rnd.random() < 0.3 and set(members) == all_nb
    if not true:
        method = x.pick(["swap", "invent", "exactly"] if len(all_nb) > 2 else ["swap", "invent"])
        if method == "swap":
            others = [y for y in x.ok if y != h and y not in all_nb and y not in members]
            y = x.pick(others)
            if y is None:
                return None
            members[1] = y
        elif method == "invent":
            name = x.invent()
            if name is None:
                return None
        else:
            exactly = True
    names = [L[m] for m in members]
    if method == "invent":
        names[1] = name
    claim: dict[str, Any] = {"type": "parallel", "meta": {"method": method}}
    if fan_in:
        claim.update(kind="fan_in", sources=names, target=L[h])
    else:
        claim.update(kind="fan_out", source=L[h], targets=names)
    if exactly:
        claim["exactly"] = True
    return claim


def _cut_triples(x: _Ctx) -> list[tuple[str, str, str]]:
    out = []
    for u in x.ok:
        for v in sorted(x.desc[u]):
            if v == u or v not in x.ok or x.g.has_edge(u, v):
                continue
            for w in sorted(x.desc[u] & set(x.g.predecessors(v)) | (x.desc[u] - {v}))[:6]:
                if w in (u, v) or w not in x.ok or v not in x.desc[w]:
                    continue
                out.append((u, w, v))
    return out


def _sequential(x: _Ctx, true: bool) -> dict[str, Any] | None:
    L, ok = x.lab, set(x.ok)
    kind = x.pick(["chain", "reaches", "via", "only_through", "before"])
    if kind == "chain":
        starts = [(u, v, w) for u, v in x.edges() for w in x.g.successors(v) if w in ok and w not in (u, v)]
        p = x.pick(starts)
        if not p:
            return None
        path = [L[y] for y in p]
        method = "chain"
        if not true:
            method = x.pick(["reverse", "invent"])
            if method == "reverse":
                path = [path[0], path[2], path[1]] if not x.g.has_edge(p[0], p[2]) or not x.g.has_edge(p[2], p[1]) \
                    else path[::-1]
            else:
                name = x.invent()
                if not name:
                    return None
                path[1] = name
        return {"type": "sequential", "kind": "chain", "path": path, "meta": {"method": method}}
    pairs = [(u, v) for u in x.ok for v in sorted(x.desc[u]) if v in ok and v != u]
    if kind == "reaches":
        if true:
            p = x.pick([(u, v) for u, v in pairs if not x.g.has_edge(u, v)] or pairs)
            return p and {"type": "sequential", "kind": "reaches", "source": L[p[0]], "target": L[p[1]],
                          "meta": {"method": "path"}}
        p = x.pick([(v, u) for u, v in pairs if u not in x.desc[v]])
        return p and {"type": "sequential", "kind": "reaches", "source": L[p[0]], "target": L[p[1]],
                      "meta": {"method": "reverse"}}
    if kind == "before":
        ordered = [(u, v) for u, v in pairs if u not in x.desc[v]]
        p = x.pick(ordered)
        if not p:
            return None
        if not true:
            p = (p[1], p[0])
        return {"type": "sequential", "kind": "before", "first": L[p[0]], "then": L[p[1]],
                "meta": {"method": "order" if true else "reverse"}}
    triples = _cut_triples(x)
    if kind == "via":
        t = x.pick(triples)
        if not t:
            return None
        u, w, v = t
        method = "path"
        if not true:
            method = x.pick(["reverse", "invent"])
            if method == "reverse":
                if u in x.desc[v]:
                    return None
                u, v = v, u
            else:
                name = x.invent()
                return name and {"type": "sequential", "kind": "via", "source": L[u], "via": name, "target": L[v],
                                 "meta": {"method": method}}
        return {"type": "sequential", "kind": "via", "source": L[u], "via": L[w], "target": L[v],
                "meta": {"method": method}}
    # only_through
    cuts, bypassed = [], []
    for u, w, v in triples:
        h = x.g.copy()
        h.remove_node(w)
        (cuts if v not in nx.descendants(h, u) else bypassed).append((u, w, v))
    t = x.pick(cuts if true else bypassed)
    return t and {"type": "sequential", "kind": "only_through", "source": L[t[0]], "via": L[t[1]],
                  "target": L[t[2]], "meta": {"method": "cut" if true else "reroute"}}


def _analytical(x: _Ctx, true: bool) -> dict[str, Any] | None:
    L, g = x.lab, x.g
    kind = x.pick(["count", "cycle", "end", "longest_path", "in_group"])
    if kind == "count":
        of = x.pick(["sources", "sinks", "inputs"])
        if of == "inputs":
            c = x.pick([y for y in x.ok if g.in_degree(y) > 0])
            if c is None:
                return None
            n = g.in_degree(c)
        elif of == "sources":
            n, c = sum(1 for y in g if g.in_degree(y) == 0 and g.out_degree(y) > 0), None
        else:
            n, c = sum(1 for y in g if g.out_degree(y) == 0 and g.in_degree(y) > 0), None
        if not true:
            n = n + 1 if n == 0 or x.rnd.random() < 0.5 else n - 1
        out = {"type": "analytical", "kind": "count", "of": of, "count": n, "meta": {"method": "count" if true else
                                                                                      "swap"}}
        if c is not None:
            out["component"] = L[c]
        return out
    if kind == "cycle":
        cyclic = not nx.is_directed_acyclic_graph(g)
        on_loop = [y for y in x.ok if any(y in x.desc[s] or s == y for s in g.successors(y))]
        through = x.pick(on_loop) if cyclic and x.rnd.random() < 0.5 else None
        claim: dict[str, Any] = {"type": "analytical", "kind": "cycle", "meta": {"method": "loop"}}
        if through is not None:
            claim["component"] = L[through]
        holds = cyclic
        if not true and through is None and cyclic and x.rnd.random() < 0.5:
            off = x.pick([y for y in x.ok if y not in on_loop])
            if off is not None:
                claim["component"], holds, claim["meta"] = L[off], False, {"method": "swap"}
        if holds != true:
            claim["negated"] = True
            if not true:
                claim["meta"] = {"method": "negate"}
        return claim
    if kind == "end":
        role = x.pick(["sink", "source"])
        good = [y for y in x.ok if (g.out_degree(y) == 0 and g.in_degree(y) > 0 if role == "sink"
                                    else g.in_degree(y) == 0 and g.out_degree(y) > 0)]
        bad = [y for y in x.ok if y not in good]
        c = x.pick(good if true else bad)
        return c and {"type": "analytical", "kind": role, "component": L[c],
                      "meta": {"method": "role" if true else "swap"}}
    if kind == "longest_path":
        if not nx.is_directed_acyclic_graph(g) and g.number_of_nodes() > MAX_CYCLIC_NODES:
            return None
        n = _longest_simple(g)
        if not true:
            n = n + 1 if x.rnd.random() < 0.5 or n == 0 else n - 1
        return {"type": "analytical", "kind": "longest_path", "steps": n,
                "meta": {"method": "longest" if true else "swap"}}
    groups = [gr for gr in x.graph.groups if gr.label and fold(gr.label)]
    gl = [fold(gr.label or "") for gr in groups]
    groups = [gr for gr in groups if gl.count(fold(gr.label or "")) == 1]
    member = [n for n in x.graph.nodes if n.id in set(x.ok) and n.group in {gr.id for gr in groups}]
    n = x.pick(member)
    if n is None:
        return None
    gid = n.group
    if not true:
        parents = {gr.id: gr.parent for gr in x.graph.groups}
        chain, at = set(), gid
        while at is not None and at not in chain:
            chain.add(at)
            at = parents.get(at)
        other = x.pick([gr for gr in groups if gr.id not in chain])
        if other is None:
            return None
        gid = other.id
    label = next(gr.label for gr in groups if gr.id == gid)
    return {"type": "analytical", "kind": "in_group", "component": L[n.id], "group": label,
            "meta": {"method": "group" if true else "swap"}}


MAKERS: dict[str, Maker] = {"direct": _direct, "parallel": _parallel, "sequential": _sequential,
                            "analytical": _analytical}


def generate_claims(graph: DiagramGraph, seed: int = 0, per_type: int = 6, tries: int = 40) -> list[Claim]:
    """Balanced claims of every type for ``graph`` (module docstring), gold ``label`` set."""
    rnd = random.Random(graph_seed(graph.id, seed))
    x = _Ctx(graph, rnd)
    out: list[Claim] = []
    for t in TYPES:
        sides: dict[bool, list[Claim]] = {True: [], False: []}
        seen: set[str] = set()
        for want in (True, False):
            for _ in range(tries):
                if len(sides[want]) >= per_type // 2 + per_type % 2 * (1 if want else 0):
                    break
                obj = MAKERS[t](x, want)
                if not obj:
                    continue
                meta = {**obj.pop("meta", {}), "ref": graph.id, "seed": seed}
                claim = Claim.from_dict({"type": t, **obj, "meta": meta, "origin": {"backend": "generated"}})
                key = repr(sorted(claim.to_dict().items(), key=lambda kv: kv[0]))
                if key in seen:
                    continue
                label = gold_label(claim, graph)
                if (label == "supported") != want:
                    continue  # a draw whose truth is not the side asked for (e.g. a swap that happens to hold)
                seen.add(key)
                sides[want].append(Claim.from_dict({**claim.to_dict(), "label": label}))
        n = min(len(sides[True]), len(sides[False]))
        for k, c in enumerate(sides[True][:n] + sides[False][:n]):
            out.append(Claim.from_dict({**c.to_dict(), "id": f"{graph.id}:{t[:3]}{k + 1}"}))
    return out
