"""The canonical diagram graph: the one place that knows sciflow's JSON format.

A :class:`DiagramGraph` is one diagram as a directed graph of labelled components.
It is what the parser writes, what reference graphs hold, and what metrics compare.

Loading validates against the JSON Schema shipped in ``sciflow/format/schema/graph.schema.json``
plus the checks a schema cannot express (unique node ids, edges to known nodes,
well-ordered bboxes, known groups). Every problem names the file, the JSON path and
the reason. Unknown keys are warnings (:class:`GraphFormatWarning`); everything else
is an error (:class:`GraphFormatError`).

The published SciFlow-Bench layout (``canvas_full.json`` with ``node_id``/``desc``/
``node_type``/``bbox`` nodes and ``from``/``to`` edges, plus ``prompt.json``) is read by
:func:`from_sciflow_bench`.

Example
-------
>>> g = DiagramGraph.from_dict({
...     "id": "toy",
...     "nodes": [{"id": "a", "label": "Image Encoder"}, {"id": "b", "label": "Decoder"}],
...     "edges": [{"source": "a", "target": "b"}],
... })
>>> [n.label for n in g.nodes], [(e.source, e.target) for e in g.edges]
(['Image Encoder', 'Decoder'], [('a', 'b')])
>>> DiagramGraph.from_networkx(g.to_networkx()) == g
True
"""

from __future__ import annotations

import json
import logging
import math
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import networkx as nx

from sciflow.format.jsonio import JSONError, load_json, parse_json

log = logging.getLogger(__name__)

FORMAT_TAG = "sciflow.graph/v1"
BBox = tuple[float, float, float, float]


#: Problems listed in a :class:`GraphFormatError` message (all of them stay in ``problems``).
MAX_LISTED_PROBLEMS = 20


class GraphFormatError(ValueError):
    """A graph document that cannot be used. ``problems`` lists ``(json_path, reason)``.

    The message names the file: one problem is one line, ``invalid graph file <source>:
    <json path>: <reason>`` (the path is left out when it is the whole document, ``$``), e.g.
    ``invalid graph file p.json: nested deeper than 64 levels``; several are one line each
    under ``invalid graph file <source>: <n> problems`` (the first :data:`MAX_LISTED_PROBLEMS`).
    """

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = str(source)
        self.problems = list(problems)
        super().__init__(_format_problems("invalid graph file", self.source, self.problems))

    def __reduce__(self) -> Any:  # picklable across process pools (the default needs one argument)
        return (type(self), (self.source, self.problems))


def _format_problems(what: str, source: str, problems: list[tuple[str, str]]) -> str:
    def one(path: str, reason: str) -> str:
        return reason if path == "$" else f"{path}: {reason}"

    if len(problems) == 1:
        return f"{what} {source}: {one(*problems[0])}"
    lines = [one(path, reason) for path, reason in problems[:MAX_LISTED_PROBLEMS]]
    if len(problems) > MAX_LISTED_PROBLEMS:
        lines.append(f"... and {len(problems) - MAX_LISTED_PROBLEMS} more")
    return f"{what} {source}: {len(problems)} problems\n  " + "\n  ".join(lines)


class GraphFormatWarning(UserWarning):
    """A graph document with something sciflow ignores (an unknown key, a duplicate edge)."""


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    kind: str | None = None
    bbox: BBox | None = None
    group: str | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    label: str | None = None
    style: str | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class Group:
    id: str
    label: str | None = None
    parent: str | None = None
    bbox: BBox | None = None


@dataclass(frozen=True)
class Prompt:
    """The structured visual prompt given to generators."""

    text: str
    components: tuple[str, ...] = ()
    relations: tuple[tuple[str, str], ...] = ()
    layout: str | None = None


@dataclass(frozen=True)
class DiagramGraph:
    id: str
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    groups: tuple[Group, ...] = ()
    prompt: Prompt | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Parallel arrows between the same ordered pair of nodes are one edge, however the
        # graph was built (from_dict, networkx or directly in code).
        merged = merge_parallel_edges(self.edges)
        if merged is not None:
            object.__setattr__(self, "edges", merged)

    # ------------------------------------------------------------------ access
    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    @property
    def labels(self) -> list[str]:
        return [n.label for n in self.nodes]

    # ------------------------------------------------------------ dict / JSON
    @classmethod
    def from_dict(cls, data: Any, source: str = "<graph>") -> DiagramGraph:
        """Validate a parsed JSON document and build the graph.

        Raises :class:`GraphFormatError` naming ``source``, the JSON path and the reason.
        Emits :class:`GraphFormatWarning` for unknown keys and duplicate edges.
        """
        problems, notes = validate(data)
        for path, reason in notes:
            # one warning (the CLI routes warnings through logging, so it is printed once)
            warnings.warn(f"{source}: {path}: {reason}", GraphFormatWarning, stacklevel=2)
        if problems:
            raise GraphFormatError(source, problems)
        return cls._build(data)

    @classmethod
    def _build(cls, data: Mapping[str, Any]) -> DiagramGraph:
        nodes = tuple(
            Node(
                id=n["id"],
                label=n["label"],
                kind=n.get("kind"),
                bbox=_bbox(n.get("bbox")),
                group=n.get("group"),
                confidence=_opt_float(n.get("confidence")),
            )
            for n in data["nodes"]
        )
        # Parallel edges (same source, target) are merged by __post_init__.
        edges = [
            Edge(
                source=e["source"],
                target=e["target"],
                label=e.get("label"),
                style=e.get("style"),
                confidence=_opt_float(e.get("confidence")),
            )
            for e in data["edges"]
        ]
        groups = tuple(
            Group(id=g["id"], label=g.get("label"), parent=g.get("parent"), bbox=_bbox(g.get("bbox")))
            for g in data.get("groups", [])
        )
        p = data.get("prompt")
        prompt = (
            Prompt(
                text=p["text"],
                components=tuple(p.get("components", ())),
                relations=tuple((a, b) for a, b in p.get("relations", ())),
                layout=p.get("layout"),
            )
            if p is not None
            else None
        )
        return cls(
            id=data["id"],
            nodes=nodes,
            edges=tuple(edges),
            groups=groups,
            prompt=prompt,
            meta=dict(data.get("meta", {})),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON document, with optional fields omitted when unset."""
        out: dict[str, Any] = {"format": FORMAT_TAG, "id": self.id}
        out["nodes"] = [_compact(n.__dict__) for n in self.nodes]
        out["edges"] = [_compact(e.__dict__) for e in self.edges]
        if self.groups:
            out["groups"] = [_compact(g.__dict__) for g in self.groups]
        if self.prompt is not None:
            p = self.prompt
            pd: dict[str, Any] = {"text": p.text}
            if p.components:
                pd["components"] = list(p.components)
            if p.relations:
                pd["relations"] = [list(r) for r in p.relations]
            if p.layout is not None:
                pd["layout"] = p.layout
            out["prompt"] = pd
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def load(cls, path: str | Path) -> DiagramGraph:
        """Read and validate one graph file (sciflow format), through :func:`read_graph_json`."""
        path = Path(path)
        return cls.from_dict(read_graph_json(path), source=str(path))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", "utf-8")

    # ------------------------------------------------------------- networkx
    def to_networkx(self) -> nx.DiGraph:
        """A ``networkx.DiGraph``: node/edge attributes as in the JSON, graph-level fields in
        ``G.graph`` (``id``, ``groups``, ``prompt``, ``meta``, and ``edge_order``, the edge order
        of the document). Unset optional attributes are absent."""
        g = nx.DiGraph()
        g.graph["id"] = self.id
        g.graph["groups"] = [_compact(gr.__dict__) for gr in self.groups]
        g.graph["prompt"] = self.to_dict().get("prompt")
        g.graph["meta"] = dict(self.meta)
        # networkx iterates edges by source node; keep the document's edge order explicitly.
        g.graph["edge_order"] = [(e.source, e.target) for e in self.edges]
        for n in self.nodes:
            attrs = _compact(n.__dict__)
            attrs.pop("id")
            g.add_node(n.id, **attrs)
        for e in self.edges:
            attrs = _compact(e.__dict__)
            attrs.pop("source")
            attrs.pop("target")
            g.add_edge(e.source, e.target, **attrs)
        return g

    @classmethod
    def from_networkx(cls, g: nx.DiGraph, id: str | None = None) -> DiagramGraph:
        """Inverse of :meth:`to_networkx`; validated like a loaded file."""
        data: dict[str, Any] = {"id": id if id is not None else str(g.graph.get("id", "graph"))}
        data["nodes"] = [
            {"id": str(n), "label": attrs.get("label", str(n)), **_compact(_without(attrs, "label"))}
            for n, attrs in g.nodes(data=True)
        ]
        order = g.graph.get("edge_order")
        pairs = list(g.edges())
        if order is None or sorted(map(tuple, order)) != sorted(pairs):
            order = pairs
        data["edges"] = [
            {"source": str(u), "target": str(v), **_compact(g.edges[u, v])} for u, v in map(tuple, order)
        ]
        if g.graph.get("groups"):
            data["groups"] = [dict(x) for x in g.graph["groups"]]
        if g.graph.get("prompt") is not None:
            data["prompt"] = g.graph["prompt"]
        if g.graph.get("meta"):
            data["meta"] = dict(g.graph["meta"])
        for item in data["nodes"] + data.get("groups", []):
            if isinstance(item.get("bbox"), tuple):
                item["bbox"] = list(item["bbox"])
        return cls.from_dict(data, source=f"<networkx graph {data['id']}>")


def merge_parallel_edges(edges: Iterable[Edge]) -> tuple[Edge, ...] | None:
    """``edges`` with parallel edges (same ``source``, ``target``) merged, or ``None`` when
    there are none.

    The first edge of each ordered pair is kept, in place; when it has no label, it takes the
    first non-empty label of a later parallel edge. The order of the edges is otherwise kept.
    Endpoints are not checked against the nodes (:func:`validate` does that for documents).

    >>> [(e.source, e.target, e.label) for e in merge_parallel_edges(
    ...     [Edge("a", "b"), Edge("b", "c"), Edge("a", "b", "x"), Edge("a", "b", "y")])]
    [('a', 'b', 'x'), ('b', 'c', None)]
    >>> merge_parallel_edges([Edge("a", "b"), Edge("b", "a")]) is None
    True
    """
    first: dict[tuple[str, str], int] = {}
    out: list[Edge] = []
    duplicate = False
    for e in edges:
        key = (e.source, e.target)
        i = first.get(key)
        if i is None:
            first[key] = len(out)
            out.append(e)
            continue
        duplicate = True
        if not out[i].label and e.label:
            out[i] = replace(out[i], label=e.label)
    return tuple(out) if duplicate else None


# ---------------------------------------------------------------- validation
@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The JSON Schema of the canonical format (shipped in the package)."""
    text = resources.files("sciflow").joinpath("format/schema/graph.schema.json").read_text("utf-8")
    return parse_json(text, source="graph.schema.json")


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema())
    return cls(schema())


def json_path(parts: Iterable[Any]) -> str:
    """``["nodes", 3, "bbox"]`` -> ``"$.nodes[3].bbox"``."""
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def validate(data: Any) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Check a parsed JSON document. Returns ``(errors, warnings)``, each ``(json_path, reason)``."""
    errors: list[tuple[str, str]] = []
    notes: list[tuple[str, str]] = []
    for err in sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path))):
        path = json_path(err.absolute_path)
        if err.validator == "additionalProperties":
            allowed = set(err.schema.get("properties", {}))
            extra = sorted(k for k in err.instance if k not in allowed)
            notes.extend((path, f"unknown key {_short(k)} ignored") for k in extra)
        else:
            errors.append((path, _reason(err)))
    if not isinstance(data, dict):
        return errors, notes
    # Semantic checks run on every well-formed piece, so one pass reports all problems.
    nodes = _items(data.get("nodes"))
    groups = _items(data.get("groups"))
    edges = _items(data.get("edges"))
    node_ids: set[str] = set()
    for i, n in nodes:
        nid = n.get("id")
        if isinstance(nid, str):
            if nid in node_ids:
                errors.append((f"$.nodes[{i}].id", f"duplicate node id {_short(nid)}"))
            node_ids.add(nid)
        errors.extend(_bbox_problems(n.get("bbox"), f"$.nodes[{i}].bbox"))
        errors.extend(_confidence_problems(n.get("confidence"), f"$.nodes[{i}].confidence"))
    # ids of another type than string are reported by the schema; sets keep this linear
    group_ids: set[str] = set()
    for i, g in groups:
        gid = g.get("id")
        if isinstance(gid, str):
            if gid in group_ids:
                errors.append((f"$.groups[{i}].id", f"duplicate group id {_short(gid)}"))
            group_ids.add(gid)
    for i, g in groups:
        if isinstance(g.get("parent"), str) and g["parent"] not in group_ids:
            errors.append((f"$.groups[{i}].parent", f"unknown group {_short(g['parent'])}"))
        errors.extend(_bbox_problems(g.get("bbox"), f"$.groups[{i}].bbox"))
    for i, n in nodes:
        if isinstance(n.get("group"), str) and n["group"] not in group_ids:
            errors.append((f"$.nodes[{i}].group", f"unknown group {_short(n['group'])}"))
    seen: set[tuple[str, str]] = set()
    for i, e in edges:
        for end in ("source", "target"):
            if isinstance(e.get(end), str) and e[end] not in node_ids:
                errors.append((f"$.edges[{i}].{end}", f"edge to unknown node {_short(e[end])}"))
        errors.extend(_confidence_problems(e.get("confidence"), f"$.edges[{i}].confidence"))
        key = (e.get("source"), e.get("target"))
        if not (isinstance(key[0], str) and isinstance(key[1], str)):
            continue
        if key in seen:
            notes.append((f"$.edges[{i}]", f"duplicate edge {_short(key[0])} -> {_short(key[1])} merged"))
        seen.add(key)
    errors.sort(key=lambda pr: _path_key(pr[0]))
    return errors, notes


def _items(v: Any) -> list[tuple[int, dict[str, Any]]]:
    return [(i, x) for i, x in enumerate(v) if isinstance(x, dict)] if isinstance(v, list) else []


def _path_key(path: str) -> list[Any]:
    import re

    return [int(t) if t.isdigit() else t for t in re.findall(r"[A-Za-z_]+|\d+", path)]


def _reason(err: Any) -> str:
    if err.validator == "type":
        expected = err.validator_value
        got = type(err.instance).__name__
        return f"expected {expected}, got {got} {json.dumps(err.instance, default=str)[:60]}"
    if err.validator == "required":
        return err.message.replace("is a required property", "is required")
    if err.validator in ("minItems", "maxItems") and err.path and err.path[-1] == "bbox":
        return f"malformed bbox {_short(err.instance)}: expected [x0, y0, x1, y1]"
    return _clip(err.message)


#: Longest value quoted in a problem message (longer ones are cut, with their length).
MAX_QUOTED_CHARS = 80


def _short(v: Any) -> str:
    """``repr(v)``, cut to :data:`MAX_QUOTED_CHARS` characters (a 100,000-character id must not
    make a 100,000-character message)."""
    r = repr(v)
    if len(r) <= MAX_QUOTED_CHARS:
        return r
    size = f" ({len(v)} characters)" if isinstance(v, str) else ""
    return r[: MAX_QUOTED_CHARS - 3] + "..." + size


def _clip(text: str, limit: int = 4 * MAX_QUOTED_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bbox_problems(bbox: Any, path: str) -> list[tuple[str, str]]:
    if not (isinstance(bbox, list) and len(bbox) == 4):
        return []  # absent, or already reported by the schema
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in bbox):
        return []
    if not all(math.isfinite(v) for v in bbox):
        return [(path, f"malformed bbox {bbox!r}: coordinates must be finite")]
    x0, y0, x1, y1 = bbox
    if x1 < x0 or y1 < y0:
        return [(path, f"malformed bbox {bbox!r}: expected [x0, y0, x1, y1] with x0 <= x1, y0 <= y1")]
    return []


def _confidence_problems(v: Any, path: str) -> list[tuple[str, str]]:
    # NaN passes the schema's minimum/maximum (every comparison with NaN is false)
    if isinstance(v, float) and not math.isfinite(v):
        return [(path, f"confidence {v!r} must be a finite number in [0, 1]")]
    return []


def _bbox(v: Any) -> BBox | None:
    return None if v is None else (float(v[0]), float(v[1]), float(v[2]), float(v[3]))


def _opt_float(v: Any) -> float | None:
    return None if v is None else float(v)


def _compact(d: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        if v is None:
            continue
        out[k] = list(v) if isinstance(v, tuple) else v
    return out


def _without(d: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in keys}


def load_graph(path: str | Path) -> DiagramGraph:
    """Load a graph file in sciflow's format, or a SciFlow-Bench ``canvas_full.json``
    (recognised by its ``node_id``/``from``/``to`` keys; a ``prompt.json`` beside it is read too)."""
    path = Path(path)
    data = read_graph_json(path)
    if path.suffix.lower() == ".json" and is_sciflow_bench(data):
        prompt_file = path.parent / "prompt.json"
        prompt = read_graph_json(prompt_file) if prompt_file.is_file() else None
        return from_sciflow_bench(data, item_id=path.parent.name, prompt=prompt, source=str(path))
    return DiagramGraph.from_dict(data, source=str(path))


def read_graph_json(path: str | Path) -> Any:
    """The JSON document in ``path``, read by :func:`sciflow.format.jsonio.load_json` (depth, size,
    NaN and UTF-8 limits); every problem is a :class:`GraphFormatError` naming the file, e.g.
    ``invalid graph file p.json: nested deeper than 64 levels``."""
    try:
        return load_json(path)
    except JSONError as exc:
        raise GraphFormatError(str(path), [("$", exc.reason)]) from exc


# ---------------------------------------------------- SciFlow-Bench layout
def is_sciflow_bench(data: Any) -> bool:
    """True for a SciFlow-Bench graph document (``nodes`` with ``node_id``, edges with ``from``/``to``)."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        return False
    nodes = data["nodes"]
    return bool(nodes) and all(isinstance(n, dict) and "node_id" in n for n in nodes)


def from_sciflow_bench(
    canvas: Any, item_id: str, prompt: Any = None, source: str = "<canvas_full.json>"
) -> DiagramGraph:
    """Convert a SciFlow-Bench ``canvas_full.json`` document (and optionally its
    ``prompt.json``, ``{"prompt": ...}``) into a validated :class:`DiagramGraph`.

    Mapping: ``node_id`` -> ``id``, ``desc`` -> ``label``, ``node_type`` -> ``kind``,
    ``bbox`` -> ``bbox`` (a 4-list ``[x0, y0, x1, y1]``, or a mapping with ``x``, ``y``,
    ``w``/``width``, ``h``/``height``); edges ``from``/``to`` -> ``source``/``target``,
    with ``label``/``desc`` as the edge label. Ids are stringified. A ``prompt.json``
    whose ``prompt`` is a string becomes ``prompt.text``; an object is read as the
    structured prompt. Other keys are kept in ``meta["sciflow_bench"]`` only when scalar.
    """
    problems: list[tuple[str, str]] = []
    if not isinstance(canvas, dict):
        raise GraphFormatError(source, [("$", "expected a JSON object with 'nodes' and 'edges'")])
    nodes = []
    for i, n in enumerate(canvas.get("nodes", [])):
        if not isinstance(n, dict) or "node_id" not in n:
            problems.append((f"$.nodes[{i}]", "expected an object with 'node_id'"))
            continue
        label = n.get("desc", n.get("label", ""))
        node: dict[str, Any] = {"id": str(n["node_id"]), "label": label}
        if n.get("node_type") is not None:
            node["kind"] = str(n["node_type"])
        bbox = _bench_bbox(n.get("bbox"))
        if bbox is not None:
            node["bbox"] = bbox
        elif n.get("bbox") is not None:
            problems.append((f"$.nodes[{i}].bbox", f"malformed bbox {_short(n['bbox'])}"))
        nodes.append(node)
    edges = []
    for i, e in enumerate(canvas.get("edges", [])):
        if not isinstance(e, dict) or "from" not in e or "to" not in e:
            problems.append((f"$.edges[{i}]", "expected an object with 'from' and 'to'"))
            continue
        edge: dict[str, Any] = {"source": str(e["from"]), "target": str(e["to"])}
        lab = e.get("label", e.get("desc"))
        if isinstance(lab, str) and lab:
            edge["label"] = lab
        edges.append(edge)
    if problems:
        raise GraphFormatError(source, problems)
    data: dict[str, Any] = {"id": item_id, "nodes": nodes, "edges": edges, "meta": {"origin": "sciflow-bench"}}
    if prompt is not None:
        p = prompt.get("prompt") if isinstance(prompt, dict) else prompt
        if isinstance(p, str):
            data["prompt"] = {"text": p}
        elif isinstance(p, dict) and isinstance(p.get("text"), str):
            data["prompt"] = p
        else:
            raise GraphFormatError(source, [("prompt.json:$.prompt", "expected a string or an object with 'text'")])
    return DiagramGraph.from_dict(data, source=source)


def _bench_bbox(v: Any) -> list[float] | None:
    try:
        if isinstance(v, (list, tuple)) and len(v) == 4:
            x0, y0, x1, y1 = (float(c) for c in v)
        elif isinstance(v, dict):
            x0, y0 = float(v["x"]), float(v["y"])
            x1 = x0 + float(v.get("w", v.get("width")))
            y1 = y0 + float(v.get("h", v.get("height")))
        else:
            return None
    except (TypeError, ValueError, KeyError):
        return None
    if x1 < x0 or y1 < y0:
        return None
    return [x0, y0, x1, y1]
