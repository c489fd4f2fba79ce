"""Identity-consistent edits of one item's graph for ``sciflow verify``: the item state, the
checks an edit must pass, and the replay of an audit log.

Editing is identity-consistent (SciFlow-Bench, Appendix B.4): every automatically extracted node
and edge starts included and keeps its id; the annotator may only

- ``exclude_node`` / ``restore_node``, ``exclude_edge`` / ``restore_edge`` (inherited elements;
  excluding a node excludes its edges, restoring it brings back those not excluded on their own),
- ``add_edge`` (a directed link between two existing, included nodes),
- ``add_node`` (a label and a box drawn on the figure; the id is ``h1``, ``h2``, ...),
- ``delete_node`` / ``delete_edge`` (take back an element added by hand).

There is no renaming, moving or restructuring. An edge's id is ``"<source>-><target>"`` (the format
merges parallel edges, so it is unique), or, when a node id contains ``->`` (or the source starts
with ``[``), the JSON array ``["<source>", "<target>"]``, so that two edges never share an id
(see :func:`edge_id`).

:class:`ItemState` is pure data: :meth:`ItemState.plan` validates an edit and returns the log
fields, :meth:`ItemState.apply` replays one log entry, :func:`replay` rebuilds a state from a
whole log (how sessions resume, and how :mod:`sciflow.verify.agreement` counts). The store of
items and files is :mod:`sciflow.verify.store`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sciflow.format.graph import DiagramGraph, GraphFormatError

__all__ = [
    "EDIT_ACTIONS",
    "MAX_LABEL_CHARS",
    "NOTE_ACTIONS",
    "EditError",
    "ItemError",
    "ItemState",
    "edge_id",
    "last_save_index",
    "replay",
]

MAX_LABEL_CHARS = 300

EDIT_ACTIONS = (
    "exclude_node",
    "restore_node",
    "exclude_edge",
    "restore_edge",
    "add_node",
    "add_edge",
    "delete_node",
    "delete_edge",
)
#: log actions that change nothing in the graph
NOTE_ACTIONS = ("load", "open", "save")


class EditError(ValueError):
    """An edit the graph does not allow; the message is meant for the annotator."""


class ItemError(RuntimeError):
    """An item whose graph cannot be obtained (unreadable parse, parser failure, corrupt log)."""


def edge_id(source: str, target: str) -> str:
    """The id of the edge ``source -> target``: ``"a->b"``, or ``'["a->x", "b"]'`` (JSON) when an
    endpoint contains ``->`` or the source starts with ``[``.

    Collision-free: without ``->`` in either endpoint, ``"<source>-><target>"`` holds exactly one
    ``->`` (none can straddle the joins), so it names one pair; the JSON form names one pair; and
    the two forms never meet, since only the JSON form starts with ``[``.

    >>> edge_id("a", "b"), edge_id("a->b", "c"), edge_id("a", "b->c")
    ('a->b', '["a->b", "c"]', '["a", "b->c"]')
    """
    if "->" in source or "->" in target or source.startswith("["):
        return json.dumps([source, target], ensure_ascii=False)
    return f"{source}->{target}"


def _legacy_edge_id(source: str, target: str) -> str:
    """The id older logs used for every edge (ambiguous when a node id contains ``->``)."""
    return f"{source}->{target}"


@dataclass
class ItemState:
    """The graph of one item under edit: the automatic graph plus exclusions and additions.

    Pure data: :meth:`plan` validates an edit and returns the log fields; :meth:`apply` replays
    one log entry. :func:`replay` rebuilds a state from a log, which is how sessions resume and
    how :mod:`sciflow.verify.agreement` counts.
    """

    item: str
    auto: dict[str, Any]
    image_size: tuple[int, int] | None = None
    auto_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    auto_edges: dict[str, dict[str, Any]] = field(default_factory=dict)
    added_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    added_edges: dict[str, dict[str, Any]] = field(default_factory=dict)
    excluded_nodes: set[str] = field(default_factory=set)
    excluded_edges: set[str] = field(default_factory=set)
    _next_added: int = 1

    @classmethod
    def from_graph(cls, item: str, graph: Mapping[str, Any], image_size: Iterable[int] | None = None) -> ItemState:
        g = DiagramGraph.from_dict(graph, source=f"{item} (automatic graph)").to_dict()
        st = cls(item=item, auto=g, image_size=tuple(image_size) if image_size else None)  # type: ignore[arg-type]
        st.auto_nodes = {n["id"]: n for n in g["nodes"]}
        st.auto_edges = {edge_id(e["source"], e["target"]): e for e in g["edges"]}
        return st

    # -------------------------------------------------------------- queries
    def has_node(self, nid: Any) -> bool:
        return isinstance(nid, str) and (nid in self.auto_nodes or nid in self.added_nodes)

    def node_included(self, nid: str) -> bool:
        return nid in self.added_nodes or (nid in self.auto_nodes and nid not in self.excluded_nodes)

    def edge_included(self, eid: str) -> bool:
        e = self.auto_edges.get(eid) or self.added_edges.get(eid)
        if e is None or eid in self.excluded_edges:
            return False
        return self.node_included(e["source"]) and self.node_included(e["target"])

    def edges_of(self, nid: str) -> list[str]:
        return [
            eid for eid, e in [*self.auto_edges.items(), *self.added_edges.items()] if nid in (e["source"], e["target"])
        ]

    def counts(self) -> dict[str, dict[str, int]]:
        """Agreement counts of the automatic graph against the current verified graph, by id:
        included inherited elements are true positives, excluded ones false positives, added
        (and present) ones false negatives."""
        nodes = {
            "tp": sum(1 for n in self.auto_nodes if n not in self.excluded_nodes),
            "fp": sum(1 for n in self.auto_nodes if n in self.excluded_nodes),
            "fn": len(self.added_nodes),
        }
        edges = {
            "tp": sum(1 for e in self.auto_edges if self.edge_included(e)),
            "fp": sum(1 for e in self.auto_edges if not self.edge_included(e)),
            "fn": sum(1 for e in self.added_edges if self.edge_included(e)),
        }
        return {"nodes": nodes, "edges": edges}

    def _edge(self, edit: Mapping[str, Any]) -> str:
        eid = edit.get("id")
        if eid is None and "source" in edit and "target" in edit:
            eid = edge_id(str(edit["source"]), str(edit["target"]))
        if not isinstance(eid, str) or not eid:
            raise EditError("an edge edit needs 'id' (as the page lists it) or 'source' and 'target'")
        if eid not in self.auto_edges and eid not in self.added_edges:
            raise EditError(f"unknown edge {eid!r}")
        return eid

    def _node(self, edit: Mapping[str, Any]) -> str:
        nid = edit.get("id")
        if not isinstance(nid, str) or not nid:
            raise EditError("a node edit needs 'id'")
        if not self.has_node(nid):
            raise EditError(f"unknown node {nid!r}")
        return nid

    def _new_node_id(self) -> str:
        taken = set(self.auto_nodes) | set(self.added_nodes)
        n = self._next_added
        while f"h{n}" in taken:
            n += 1
        return f"h{n}"

    # ----------------------------------------------------------- validation
    def plan(self, edit: Mapping[str, Any]) -> dict[str, Any]:
        """Check one edit against the graph. Returns the log fields ``action``, ``element``,
        ``before``, ``after`` (and ``cascade``); raises :class:`EditError` with a clear message."""
        if not isinstance(edit, Mapping):
            raise EditError("an edit is a JSON object with an 'action'")
        action = edit.get("action")
        if action not in EDIT_ACTIONS:
            raise EditError(f"unknown action {action!r}; expected one of: {', '.join(EDIT_ACTIONS)}")
        if action == "exclude_node":
            nid = self._node(edit)
            if nid in self.added_nodes:
                raise EditError(f"node {nid!r} was added by hand: delete it instead of excluding it")
            if nid in self.excluded_nodes:
                raise EditError(f"node {nid!r} is already excluded")
            cascade = [e for e in self.edges_of(nid) if self.edge_included(e)]
            return _fields(action, nid, {"included": True}, {"included": False}, cascade)
        if action == "restore_node":
            nid = self._node(edit)
            if nid not in self.excluded_nodes:
                raise EditError(f"node {nid!r} is not excluded")
            self.excluded_nodes.discard(nid)
            try:
                cascade = [e for e in self.edges_of(nid) if self.edge_included(e)]
            finally:
                self.excluded_nodes.add(nid)
            return _fields(action, nid, {"included": False}, {"included": True}, cascade)
        if action in ("exclude_edge", "restore_edge"):
            eid = self._edge(edit)
            if eid in self.added_edges:
                raise EditError(f"edge {eid!r} was added by hand: delete it instead")
            e = self.auto_edges[eid]
            if action == "exclude_edge":
                if eid in self.excluded_edges:
                    raise EditError(f"edge {eid!r} is already excluded")
                for end in (e["source"], e["target"]):
                    if not self.node_included(end):
                        raise EditError(f"edge {eid!r} is already excluded with its node {end!r}")
                return _fields(action, eid, {"included": True}, {"included": False})
            for end in (e["source"], e["target"]):
                if not self.node_included(end):
                    raise EditError(f"edge {eid!r} is excluded with its node {end!r}: restore that node first")
            if eid not in self.excluded_edges:
                raise EditError(f"edge {eid!r} is not excluded")
            return _fields(action, eid, {"included": False}, {"included": True})
        if action == "add_edge":
            src, tgt = edit.get("source"), edit.get("target")
            if not isinstance(src, str) or not isinstance(tgt, str):
                raise EditError("a link needs 'source' and 'target' node ids")
            for end in (src, tgt):
                if not self.has_node(end):
                    raise EditError(f"unknown node {end!r}")
            if src == tgt:
                raise EditError(f"a link from node {src!r} to itself is not allowed (self-link)")
            for end in (src, tgt):
                if not self.node_included(end):
                    raise EditError(f"node {end!r} is excluded: restore it before linking it")
            eid = edge_id(src, tgt)
            if eid in self.auto_edges:
                if eid in self.excluded_edges:
                    raise EditError(f"edge {src} -> {tgt} already exists (excluded): restore it instead")
                raise EditError(f"edge {src} -> {tgt} already exists (duplicate edge)")
            if eid in self.added_edges:
                raise EditError(f"edge {src} -> {tgt} was already added (duplicate edge)")
            return _fields(action, eid, None, {"source": src, "target": tgt})
        if action == "add_node":
            label = edit.get("label")
            if not isinstance(label, str) or not label.strip():
                raise EditError("a new node needs a label: the text inside its box, as shown in the figure")
            label = " ".join(label.split())  # one line, as the annotation protocol asks
            if len(label) > MAX_LABEL_CHARS:
                raise EditError(f"label is longer than {MAX_LABEL_CHARS} characters")
            bbox = self._check_bbox(edit.get("bbox"))
            return _fields(action, self._new_node_id(), None, {"label": label, "bbox": bbox})
        if action == "delete_node":
            nid = self._node(edit)
            if nid not in self.added_nodes:
                raise EditError(f"node {nid!r} comes from the automatic parse: exclude it instead of deleting it")
            cascade = [e for e in self.edges_of(nid)]
            return _fields(action, nid, dict(self.added_nodes[nid]), None, cascade)
        # delete_edge
        eid = self._edge(edit)
        if eid not in self.added_edges:
            raise EditError(f"edge {eid!r} comes from the automatic parse: exclude it instead of deleting it")
        return _fields(action, eid, dict(self.added_edges[eid]), None)

    def _check_bbox(self, bbox: Any) -> list[float]:
        ok = (
            isinstance(bbox, (list, tuple))
            and len(bbox) == 4
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in bbox)
        )
        if not ok:
            raise EditError("a new node needs 'bbox': [x0, y0, x1, y1] in figure pixels")
        x0, y0, x1, y1 = (float(v) for v in bbox)
        if self.image_size:
            w, h = self.image_size
            if x0 < -1 or y0 < -1 or x1 > w + 1 or y1 > h + 1:
                raise EditError(f"box {bbox!r} lies outside the figure ({w} x {h} pixels)")
            x0, y0, x1, y1 = max(x0, 0.0), max(y0, 0.0), min(x1, float(w)), min(y1, float(h))
        if x1 - x0 < 2 or y1 - y0 < 2:
            raise EditError("the box is too small: draw it around the whole component (x0 < x1, y0 < y1)")
        return [round(x0, 1), round(y0, 1), round(x1, 1), round(y1, 1)]

    # --------------------------------------------------------------- replay
    def apply(self, entry: Mapping[str, Any]) -> None:
        """Replay one log entry (already validated when it was written)."""
        action, el = entry.get("action"), entry.get("element")
        after = entry.get("after") or {}
        if action in NOTE_ACTIONS:
            return
        if action in ("exclude_edge", "restore_edge", "delete_edge"):
            el = self._known_edge(el)
        if action == "exclude_node":
            self.excluded_nodes.add(el)
        elif action == "restore_node":
            self.excluded_nodes.discard(el)
        elif action == "exclude_edge":
            self.excluded_edges.add(el)
        elif action == "restore_edge":
            self.excluded_edges.discard(el)
        elif action == "add_node":
            self.added_nodes[el] = {"id": el, "label": after["label"], "bbox": list(after["bbox"])}
            m = re.fullmatch(r"h(\d+)", el)
            if m:
                self._next_added = max(self._next_added, int(m.group(1)) + 1)
        elif action == "add_edge":  # the id from the endpoints: also right for a log of older ids
            self.added_edges[edge_id(after["source"], after["target"])] = {
                "source": after["source"],
                "target": after["target"],
            }
        elif action == "delete_node":
            self.added_nodes.pop(el, None)
            for eid in [e for e, d in self.added_edges.items() if el in (d["source"], d["target"])]:
                del self.added_edges[eid]
        elif action == "delete_edge":
            self.added_edges.pop(el, None)
        else:
            raise ItemError(f"{self.item}: unknown action {action!r} in the log")

    def _known_edge(self, eid: Any) -> Any:
        """``eid`` when it names an edge; else the edge an older log meant by it (logs written
        before :func:`edge_id` became collision-free named every edge ``"<source>-><target>"``;
        where two edges shared such an id, the later one, as the server of the time did)."""
        if eid in self.auto_edges or eid in self.added_edges or not isinstance(eid, str):
            return eid
        legacy = {_legacy_edge_id(e["source"], e["target"]): k for k, e in self.auto_edges.items()}
        legacy.update({_legacy_edge_id(e["source"], e["target"]): k for k, e in self.added_edges.items()})
        return legacy.get(eid, eid)

    # --------------------------------------------------------------- output
    def verified_graph(self, verification: Mapping[str, Any] | None = None) -> DiagramGraph:
        """The verified canonical graph: excluded elements removed, inherited ids and fields kept,
        added nodes and edges appended."""
        data = dict(self.auto)
        data["nodes"] = [n for nid, n in self.auto_nodes.items() if nid not in self.excluded_nodes]
        data["nodes"] += [dict(n) for n in self.added_nodes.values()]
        data["edges"] = [e for eid, e in self.auto_edges.items() if self.edge_included(eid)]
        data["edges"] += [dict(e) for eid, e in self.added_edges.items() if self.edge_included(eid)]
        if verification is not None:
            data["meta"] = {**dict(self.auto.get("meta", {})), "verification": dict(verification)}
        return DiagramGraph.from_dict(data, source=f"{self.item} (verified graph)")

    def view(self) -> dict[str, Any]:
        """Nodes and edges for the page: ``origin`` (``auto``/``added``) and ``included``."""
        nodes = [
            {
                "id": nid,
                "label": n["label"],
                "bbox": n.get("bbox"),
                "origin": "auto",
                "included": nid not in self.excluded_nodes,
            }
            for nid, n in self.auto_nodes.items()
        ]
        nodes += [{**n, "origin": "added", "included": True} for n in self.added_nodes.values()]
        edges = [
            {
                "id": eid,
                "source": e["source"],
                "target": e["target"],
                "label": e.get("label"),
                "origin": "auto",
                "included": self.edge_included(eid),
                "excluded_itself": eid in self.excluded_edges,
            }
            for eid, e in self.auto_edges.items()
        ]
        edges += [
            {
                **e,
                "id": eid,
                "label": None,
                "origin": "added",
                "included": self.edge_included(eid),
                "excluded_itself": False,
            }
            for eid, e in self.added_edges.items()
        ]
        return {"nodes": nodes, "edges": edges}


def _fields(action: str, element: str, before: Any, after: Any, cascade: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"action": action, "element": element, "before": before, "after": after}
    if cascade:
        out["cascade"] = cascade
    return out


def replay(entries: list[Mapping[str, Any]], item: str = "item") -> ItemState:
    """Rebuild an item's state from its log. The first entry must be ``load`` holding the graph."""
    if not entries or entries[0].get("action") != "load":
        raise ItemError(f"{item}: the log does not start with a 'load' entry holding the automatic graph")
    first = entries[0]
    after = first.get("after") or {}
    try:
        st = ItemState.from_graph(str(first.get("item", item)), after["graph"], after.get("image_size"))
    except (KeyError, TypeError, GraphFormatError, RecursionError) as exc:
        raise ItemError(f"{item}: the 'load' entry has no valid graph: {_one_line(exc)}") from exc
    for i, e in enumerate(entries[1:], start=2):
        try:
            st.apply(e)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ItemError(f"{item}: malformed log entry {i} ({e.get('action')!r}): {exc!r}") from exc
    return st


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def last_save_index(entries: list[Mapping[str, Any]]) -> int | None:
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].get("action") == "save":
            return i
    return None

