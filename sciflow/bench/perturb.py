"""Controlled structural errors, for proving that the metric means what it says.

:func:`perturb_graph` applies K errors, drawn with a seeded generator, to a canonical graph and
returns the damaged graph with an exact record of what was injected. Error types:

==================  ========================================================================
``drop_node``       remove a node and its edges
``drop_edge``       remove an edge
``reverse_edge``    turn u -> v into v -> u (only when v -> u is not already an edge)
``add_edge``        add an edge u -> v between existing nodes that the reference does not
                    support (no directed path u ⇝ v, and v -> u is not an edge), so it is a
                    hallucinated relation
``add_node``        add a node with an invented label, wired to one existing node
``merge_nodes``     replace two adjacent nodes a -> b by one node labelled "a / b" that keeps
                    both nodes' other edges
``misspell_label``  delete or swap characters in one label (edit distance 1-2)
``swap_labels``     exchange the labels of two nodes
==================  ========================================================================

Each record names the error type and the elements involved by their *reference* ids and
labels, so a diagnostic can be checked against it. Same graph, K and seed → same result.

The record is exact. No error removes, relabels or rewires a node that an earlier error
changed or created (nor removes a node an added node hangs on), ``add_edge`` never draws an
edge the graph already has, and no error is a no-op (two labels are never swapped when the
exchange leaves the labelled graph unchanged), so errors never cancel or mask one another.
The damaged graph is then checked against the original (:func:`differences`,
:func:`realised`); when it does not show exactly the recorded errors (a later error can make
an earlier swap void by removing the arrows that told the two nodes apart), the whole draw is
repeated with the same generator.

Everything an error does not touch is drawn as in the reference: edge labels and styles and
node groups are kept (a reversed arrow keeps its label, a merged box its first node's group),
so severity 0 is exactly the ``graphviz`` generator's drawing and a damaged drawing differs
from it by its recorded errors alone.

:func:`degrade_image` applies one visual degradation (blur, JPEG quality 20, noise,
downscale, slight rotation, decorative clutter) to a rendered image, also seeded.
"""

from __future__ import annotations

import io
import logging
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import networkx as nx
from PIL import Image, ImageDraw, ImageFilter

from sciflow.format.graph import DiagramGraph, Edge, Node

log = logging.getLogger(__name__)

ERROR_TYPES = (
    "drop_node",
    "drop_edge",
    "reverse_edge",
    "add_edge",
    "add_node",
    "merge_nodes",
    "misspell_label",
    "swap_labels",
)
DEGRADATIONS = ("blur", "jpeg20", "noise", "downscale", "rotate", "clutter")

INVENTED_LABELS = (
    "Quantum Router", "Holographic Cache", "Entropy Pump", "Spectral Mixer", "Gradient Oracle",
    "Latent Compass", "Phase Sieve", "Token Forge", "Signal Weaver", "Sparse Lantern",
)


class PerturbationError(ValueError):
    """The graph is too small for the requested errors."""


# Whole draws of K errors tried before giving up (each error gets 50 tries of a type).
MAX_DRAWS = 20


def _misspell(label: str, rnd: random.Random) -> str:
    letters = [i for i, ch in enumerate(label) if ch.isalpha()]
    if len(letters) < 4:
        raise PerturbationError(f"label {label!r} too short to misspell")
    i = rnd.choice(letters[1:-1])
    if rnd.random() < 0.5 and i + 1 < len(label) and label[i + 1].isalpha() and label[i] != label[i + 1]:
        return label[:i] + label[i + 1] + label[i] + label[i + 2:]  # swap two letters
    return label[:i] + label[i + 1:]  # drop a letter


def _labelled_edges(g: DiagramGraph, labels: Mapping[str, str]) -> Counter[tuple[str, str]]:
    return Counter((labels[e.source], labels[e.target]) for e in g.edges)


def _void_swap(g: DiagramGraph, a: str, b: str) -> bool:
    """True when exchanging the labels of ``a`` and ``b`` leaves the labelled graph as it is."""
    lab = {n.id: n.label for n in g.nodes}
    if lab[a] == lab[b]:
        return True
    swapped = {**lab, a: lab[b], b: lab[a]}
    return _labelled_edges(g, lab) == _labelled_edges(g, swapped)


def _apply(
    g: DiagramGraph, kind: str, rnd: random.Random, ref: nx.DiGraph, reach: Mapping[str, set[str]],
    used: set[str], pinned: set[str],
) -> tuple[DiagramGraph, dict[str, Any]]:
    """One error of type ``kind`` on ``g``. ``ref``: the reference as a DiGraph; ``reach[u]``:
    the nodes reachable from ``u`` in it. ``used``: the nodes whose label, existence or edges
    an earlier error changed; no error removes, relabels or rewires them again. ``pinned``: the
    nodes an added node hangs on, which must stay. Both grow with every error applied."""
    lab = {n.id: n.label for n in g.nodes}
    fresh = [n for n in g.nodes if n.id not in used]  # never damage the same element twice
    if kind == "drop_node":
        cands = [n for n in fresh if n.id not in pinned]
        if len(g.nodes) <= 2 or not cands:
            raise PerturbationError("too few nodes to drop one")
        n = rnd.choice(cands)
        used.add(n.id)
        return replace(
            g,
            nodes=tuple(x for x in g.nodes if x.id != n.id),
            edges=tuple(e for e in g.edges if n.id not in (e.source, e.target)),
        ), {"type": kind, "node": n.id, "label": n.label}
    if kind in ("drop_edge", "reverse_edge"):
        pairs = {(e.source, e.target) for e in g.edges}
        cands = [e for e in g.edges if e.source not in used and e.target not in used and e.source != e.target]
        if kind == "reverse_edge":
            cands = [e for e in cands if (e.target, e.source) not in pairs]
        if not cands:
            raise PerturbationError(f"no edge for {kind}")
        e = rnd.choice(cands)
        used.update((e.source, e.target))
        rest = tuple(x for x in g.edges if x != e)
        new = rest if kind == "drop_edge" else rest + (replace(e, source=e.target, target=e.source),)
        return replace(g, edges=new), {
            "type": kind, "source": e.source, "target": e.target,
            "source_label": lab[e.source], "target_label": lab[e.target],
        }
    if kind == "add_edge":
        # Never an edge the graph already has: a second add_edge of the same pair, or an edge
        # that a merge_nodes already redirected onto the merged box, would change nothing.
        pairs = {(e.source, e.target) for e in g.edges}
        cands = [
            (a.id, b.id) for a in g.nodes for b in g.nodes
            if a.id != b.id and a.id in ref and b.id in ref and b.id not in reach[a.id]
            and not ref.has_edge(b.id, a.id) and (a.id, b.id) not in pairs
        ]
        if not cands:
            raise PerturbationError("no pair of nodes without a directed path between them")
        a, b = rnd.choice(sorted(cands))
        used.update((a, b))
        return replace(g, edges=g.edges + (Edge(a, b),)), {
            "type": kind, "source": a, "target": b, "source_label": lab[a], "target_label": lab[b],
        }
    if kind == "add_node":
        taken = {n.label for n in g.nodes}
        labels = [x for x in INVENTED_LABELS if x not in taken]
        if not labels:
            raise PerturbationError("no invented label left")
        label = rnd.choice(labels)
        new_id = f"x{len(used)}_{rnd.randrange(10**6)}"
        while new_id in lab:
            new_id = f"x{len(used)}_{rnd.randrange(10**6)}"
        anchor = rnd.choice(g.nodes)
        edge = Edge(anchor.id, new_id) if rnd.random() < 0.5 else Edge(new_id, anchor.id)
        used.add(new_id)
        pinned.add(anchor.id)  # dropping or merging it later would take the new edge away
        return replace(g, nodes=g.nodes + (Node(new_id, label),), edges=g.edges + (edge,)), {
            "type": kind, "node": new_id, "label": label, "attached_to": anchor.id,
        }
    if kind == "merge_nodes":
        cands = [
            e for e in g.edges if e.source != e.target and e.source not in used and e.target not in used
            and e.target not in pinned
        ]
        if not cands:
            raise PerturbationError("no adjacent pair to merge")
        e = rnd.choice(cands)
        a, b = e.source, e.target
        used.update((a, b))
        merged = replace(next(n for n in g.nodes if n.id == a), label=f"{lab[a]} / {lab[b]}")
        nodes = tuple(merged if n.id == a else n for n in g.nodes if n.id != b)
        edges: list[Edge] = []
        for x in g.edges:
            s, t = (a if x.source == b else x.source), (a if x.target == b else x.target)
            if s != t and all((y.source, y.target) != (s, t) for y in edges):
                edges.append(replace(x, source=s, target=t))
        return replace(g, nodes=nodes, edges=tuple(edges)), {
            "type": kind, "nodes": [a, b], "labels": [lab[a], lab[b]], "merged_label": merged.label,
        }
    if kind == "misspell_label":
        cands = [n for n in fresh if sum(ch.isalpha() for ch in n.label) >= 4]
        if not cands:
            raise PerturbationError("no label long enough to misspell")
        n = rnd.choice(cands)
        used.add(n.id)
        wrong = _misspell(n.label, rnd)
        return replace(g, nodes=tuple(replace(x, label=wrong) if x.id == n.id else x for x in g.nodes)), {
            "type": kind, "node": n.id, "label": n.label, "misspelled": wrong,
        }
    if kind == "swap_labels":
        if len(fresh) < 2:
            raise PerturbationError("too few nodes to swap labels")
        a, b = rnd.sample(fresh, 2)
        if _void_swap(g, a.id, b.id):
            raise PerturbationError(f"swapping the labels of {a.id!r} and {b.id!r} changes nothing")
        used.update((a.id, b.id))
        swap = {a.id: b.label, b.id: a.label}
        return replace(g, nodes=tuple(replace(x, label=swap.get(x.id, x.label)) for x in g.nodes)), {
            "type": kind, "nodes": [a.id, b.id], "labels": [a.label, b.label],
        }
    raise ValueError(f"unknown error type {kind!r}; known: {', '.join(ERROR_TYPES)}")


def perturb_graph(
    graph: DiagramGraph, k: int, seed: int, types: Sequence[str] = ERROR_TYPES
) -> tuple[DiagramGraph, list[dict[str, Any]]]:
    """``graph`` with ``k`` structural errors of the given ``types`` and their records.

    Types are drawn uniformly; a type that does not apply to the graph at that point is
    redrawn (at most 50 tries per error). The damaged graph is checked against ``graph``
    (:func:`differences`, :func:`realised`): when it does not show exactly the ``k`` recorded
    errors, or an error found no place, the next draw of the same generator is tried, at most
    :data:`MAX_DRAWS` in all, then :class:`PerturbationError` is raised. The records list
    exactly the errors the damaged graph shows.

    >>> from sciflow.format.graph import DiagramGraph
    >>> g = DiagramGraph.from_dict({"id": "c", "nodes": [{"id": x, "label": f"Stage {x}"} for x in "abcd"],
    ...     "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"}, {"source": "c", "target": "d"}]})
    >>> bad, errors = perturb_graph(g, 1, seed=0, types=["reverse_edge"])
    >>> errors[0]["type"], len(bad.edges), sum(differences(g, bad).values())
    ('reverse_edge', 3, 1)
    """
    types = list(types)
    for kind in types:
        if kind not in ERROR_TYPES:
            raise ValueError(f"unknown error type {kind!r}; known: {', '.join(ERROR_TYPES)}")
    rnd = random.Random(seed)
    ref = nx.DiGraph()
    ref.add_nodes_from(n.id for n in graph.nodes)
    ref.add_edges_from((e.source, e.target) for e in graph.edges)
    reach = {u: nx.descendants(ref, u) for u in ref}
    start = graph
    for draw in range(MAX_DRAWS):
        used: set[str] = set()
        pinned: set[str] = set()
        records: list[dict[str, Any]] = []
        g = start
        for _ in range(k):
            for _attempt in range(50):
                kind = rnd.choice(types)
                try:
                    g, rec = _apply(g, kind, rnd, ref, reach, used, pinned)
                except PerturbationError:
                    continue
                records.append(rec)
                break
            else:
                break  # no error of any type fits any more: a dead end, draw again
        if len(records) < k:
            log.debug("perturb %s: draw %d placed %d of %d errors", graph.id, draw, len(records), k)
            continue
        found = differences(start, g)
        if found == Counter(r["type"] for r in records) and all(realised(start, g, r) for r in records):
            return g, records
        log.debug("perturb %s: draw %d shows %s, not the %d recorded errors %s; drawing again",
                  graph.id, draw, dict(found), k, [r["type"] for r in records])
    raise PerturbationError(f"could not inject {k} errors into {graph.id!r}")


def differences(original: DiagramGraph, damaged: DiagramGraph) -> Counter[str]:
    """The errors that ``damaged`` shows against ``original``, counted by type (the
    :data:`ERROR_TYPES`), from the two graphs alone (node ids, labels, directed edges).

    A node of ``original`` that is gone is a ``merge_nodes`` when a kept node is now labelled
    ``"<its label> / <the gone node's label>"`` (the gone node's edges then count as the kept
    node's), else a ``drop_node`` (its edges go with it). A node new in ``damaged`` is an
    ``add_node`` (with the edges that touch it). Two nodes that exchanged labels are one
    ``swap_labels``; another changed label is a ``misspell_label``. Over the edges between
    the remaining nodes of ``original``: ``u -> v`` drawn ``v -> u`` is a ``reverse_edge``, a
    missing edge a ``drop_edge``, an extra one an ``add_edge``.
    """
    old = {n.id: n.label for n in original.nodes}
    new = {n.id: n.label for n in damaged.nodes}
    out: Counter[str] = Counter()
    gone = [i for i in old if i not in new]
    relabelled = [i for i in old if i in new and new[i] != old[i]]
    into: dict[str, str] = {}  # merged-away node -> the node that absorbed it
    for a in relabelled:
        b = next((b for b in gone if b not in into and new[a] == f"{old[a]} / {old[b]}"), None)
        if b is not None:
            into[b] = a
            out["merge_nodes"] += 1
    dropped = {b for b in gone if b not in into}
    out["drop_node"] += len(dropped)
    out["add_node"] += sum(i not in old for i in new)
    rest = [a for a in relabelled if a not in into.values()]
    pending = set(rest)
    for a in rest:
        if a not in pending:
            continue
        mate = next((b for b in rest if b != a and b in pending and new[a] == old[b] and new[b] == old[a]), None)
        if mate is not None:
            pending -= {a, mate}
            out["swap_labels"] += 1
    out["misspell_label"] += len(pending)

    def alias(x: str) -> str:
        return into.get(x, x)

    expected = {
        (alias(e.source), alias(e.target)) for e in original.edges
        if e.source not in dropped and e.target not in dropped and alias(e.source) != alias(e.target)
    }
    drawn = {(e.source, e.target) for e in damaged.edges if e.source in old and e.target in old}
    missing = expected - drawn
    extra = drawn - expected
    flipped = {(u, v) for u, v in missing if (v, u) in extra}
    out["reverse_edge"] += len(flipped)
    out["drop_edge"] += len(missing) - len(flipped)
    out["add_edge"] += len(extra) - len(flipped)
    return +out


def realised(original: DiagramGraph, damaged: DiagramGraph, record: Mapping[str, Any]) -> bool:
    """True when ``damaged`` shows the error that ``record`` describes (against ``original``)."""
    lab = {n.id: n.label for n in damaged.nodes}
    pairs = {(e.source, e.target) for e in damaged.edges}
    t = record["type"]
    if t == "drop_node":
        return record["node"] not in lab
    if t in ("drop_edge", "reverse_edge", "add_edge"):
        s, d = record["source"], record["target"]
        if s not in lab or d not in lab:
            return False
        before = {(e.source, e.target) for e in original.edges}
        if t == "add_edge":
            return (s, d) in pairs and (s, d) not in before
        if t == "reverse_edge":
            return (s, d) not in pairs and (d, s) in pairs and (d, s) not in before
        return (s, d) not in pairs
    if t == "add_node":
        n, a = record["node"], record["attached_to"]
        return lab.get(n) == record["label"] and bool({(n, a), (a, n)} & pairs)
    if t == "merge_nodes":
        a, b = record["nodes"]
        return b not in lab and lab.get(a) == record["merged_label"]
    if t == "misspell_label":
        return lab.get(record["node"]) == record["misspelled"] != record["label"]
    if t == "swap_labels":
        a, b = record["nodes"]
        la, lb = record["labels"]
        return lab.get(a) == lb and lab.get(b) == la and not _void_swap(damaged, a, b)
    raise ValueError(f"unknown error type {t!r}; known: {', '.join(ERROR_TYPES)}")


def degrade_image(image: Image.Image, kind: str, seed: int) -> Image.Image:
    """One seeded visual degradation of an RGB image (see :data:`DEGRADATIONS`)."""
    rnd = random.Random(seed)
    img = image.convert("RGB")
    if kind == "blur":
        return img.filter(ImageFilter.GaussianBlur(radius=1.5))
    if kind == "jpeg20":
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=20)
        buf.seek(0)
        return Image.open(buf).convert("RGB")
    if kind == "noise":
        import numpy as np

        arr = np.asarray(img).astype(np.int16)
        noise = np.random.default_rng(seed).normal(0, 12, arr.shape).astype(np.int16)
        return Image.fromarray(np.clip(arr + noise, 0, 255).astype(np.uint8))
    if kind == "downscale":
        w, h = img.size
        return img.resize((max(1, w // 2), max(1, h // 2)), Image.Resampling.BILINEAR)
    if kind == "rotate":
        return img.rotate(rnd.uniform(-3.0, 3.0), resample=Image.Resampling.BICUBIC, expand=True,
                          fillcolor=(255, 255, 255))
    if kind == "clutter":
        out = img.copy()
        draw = ImageDraw.Draw(out)
        w, h = out.size
        for _ in range(6):  # small decorative glyphs in the margins, never over text
            x = rnd.choice([rnd.uniform(0, 0.06), rnd.uniform(0.94, 1.0)]) * w
            y = rnd.uniform(0, 1) * h
            r = rnd.uniform(3, 7)
            colour = tuple(rnd.randrange(120, 230) for _ in range(3))
            draw.ellipse([x - r, y - r, x + r, y + r], outline=colour, width=2)
        return out
    raise ValueError(f"unknown degradation {kind!r}; known: {', '.join(DEGRADATIONS)}")
