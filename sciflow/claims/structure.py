"""Graph questions the claim checks ask, on node ids, deterministic (neighbours in node order).

>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({"id": "g", "nodes": [{"id": x, "label": x.upper()} for x in "abcd"],
...     "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}, {"source": "c", "target": "b"},
...               {"source": "a", "target": "d"}]})
>>> s = Structure(g)
>>> s.path("a", "c"), s.path("c", "a"), s.path("a", "c", avoid={"b"})
(['a', 'b', 'c'], None, None)
>>> s.cycle(), s.cycle("d"), s.longest_path()
(['b', 'c', 'b'], None, (2, ['a', 'b', 'c']))
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from sciflow.format.graph import DiagramGraph

#: simple-path extensions the longest-path search may try before it gives up (cyclic graphs)
LONGEST_PATH_BUDGET = 2_000_000


class Structure:
    """Adjacency of a :class:`DiagramGraph` with the path questions of the checks."""

    def __init__(self, graph: DiagramGraph):
        self.graph = graph
        self.order = {n.id: k for k, n in enumerate(graph.nodes)}
        self.label = {n.id: n.label for n in graph.nodes}
        self.succ: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
        self.pred: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
        for e in graph.edges:
            self.succ[e.source].append(e.target)
            self.pred[e.target].append(e.source)
        for d in (self.succ, self.pred):
            for k in d:
                d[k].sort(key=self.order.__getitem__)
        self.group_of = {n.id: n.group for n in graph.nodes}
        self.group_parent = {g.id: g.parent for g in graph.groups}

    def has_edge(self, a: str, b: str) -> bool:
        return b in self.succ[a]

    def path(self, a: str, b: str, avoid: Iterable[str] = ()) -> list[str] | None:
        """A shortest directed path ``a -> ... -> b`` of at least one arrow (``a == b``: a loop)
        whose inner nodes avoid ``avoid``, or ``None``."""
        banned = set(avoid)
        prev: dict[str, str] = {}
        queue: deque[str] = deque([a])
        while queue:
            u = queue.popleft()
            for x in self.succ[u]:
                if x == b:
                    out = [b]
                    while u != a:
                        out.append(u)
                        u = prev[u]
                    return [a] + out[::-1]
                if x not in prev and x not in banned and x != a:
                    prev[x] = u
                    queue.append(x)
        return None

    def cycle(self, through: str | None = None) -> list[str] | None:
        """A shortest feedback loop (first node repeated at the end), through ``through`` when
        given; else the shortest loop through the first node (in node order) that has one."""
        nodes = [through] if through is not None else list(self.succ)
        best: list[str] | None = None
        for x in nodes:
            p = self.path(x, x)
            if p is not None and (best is None or len(p) < len(best)):
                best = p
                if through is None:
                    break
        return best

    def sources(self) -> list[str]:
        """Nodes with no input and at least one output."""
        return [x for x in self.succ if not self.pred[x] and self.succ[x]]

    def sinks(self) -> list[str]:
        """Nodes with no output and at least one input."""
        return [x for x in self.succ if not self.succ[x] and self.pred[x]]

    def groups_of(self, node: str) -> list[str]:
        """The node's group and the groups around it, innermost first."""
        out: list[str] = []
        g = self.group_of.get(node)
        while g is not None and g not in out:
            out.append(g)
            g = self.group_parent.get(g)
        return out

    def longest_path(self, budget: int = LONGEST_PATH_BUDGET) -> tuple[int, list[str]] | None:
        """``(arrows, path)`` of a longest simple path (no node twice), or ``None`` when a cyclic
        graph needs more than ``budget`` extensions to be sure. An acyclic graph is solved
        exactly in linear time; a graph without arrows has the longest path 0 (a single node)."""
        topo = self._topological()
        if topo is not None:
            best: dict[str, tuple[int, list[str]]] = {}
            for u in reversed(topo):
                cands = [(best[v][0] + 1, [u] + best[v][1]) for v in self.succ[u]]
                best[u] = max(cands, key=lambda c: c[0], default=(0, [u]))
            return max((best[u] for u in topo), key=lambda c: c[0], default=(0, []))
        steps = 0
        longest: tuple[int, list[str]] = (0, [next(iter(self.succ))])
        for start in self.succ:
            stack = [(start, iter(self.succ[start]))]
            on = {start}
            path = [start]
            while stack:
                u, it = stack[-1]
                nxt = next((v for v in it if v not in on), None)
                if nxt is None:
                    stack.pop()
                    on.discard(path.pop())
                    continue
                steps += 1
                if steps > budget:
                    return None
                on.add(nxt)
                path.append(nxt)
                stack.append((nxt, iter(self.succ[nxt])))
                if len(path) - 1 > longest[0]:
                    longest = (len(path) - 1, list(path))
        return longest

    def _topological(self) -> list[str] | None:
        indeg = {x: len(self.pred[x]) for x in self.succ}
        queue = deque(x for x in self.succ if indeg[x] == 0)
        out = []
        while queue:
            u = queue.popleft()
            out.append(u)
            for v in self.succ[u]:
                indeg[v] -= 1
                if indeg[v] == 0:
                    queue.append(v)
        return out if len(out) == len(self.succ) else None


def path_edges(path: list[str] | None) -> list[tuple[str, str]]:
    """The arrows of a node path.

    >>> path_edges(["a", "b", "c"])
    [('a', 'b'), ('b', 'c')]
    """
    return [] if not path else list(zip(path, path[1:], strict=False))
