"""Items, identity-consistent edits, the audit log and atomic saving for ``sciflow verify``.

One *item* is one figure ``FIGURES_DIR/<stem>.<png|jpg|...>``. Its automatic graph comes from,
in this order: the item's audit log in ``VERIFIED_DIR`` (resuming a session), an already saved
``VERIFIED_DIR/<stem>.json``, a parse beside the figure (``FIGURES_DIR/<stem>.json``), or the
parser (imported lazily, run once; its graph is recorded in the log).

Editing is identity-consistent (SciFlow-Bench, Appendix B.4): every automatically extracted node
and edge starts included and keeps its id; the annotator may only

- ``exclude_node`` / ``restore_node``, ``exclude_edge`` / ``restore_edge`` (inherited elements;
  excluding a node excludes its edges, restoring it brings back those not excluded on their own),
- ``add_edge`` (a directed link between two existing, included nodes),
- ``add_node`` (a label and a box drawn on the figure; the id is ``h1``, ``h2``, ...),
- ``delete_node`` / ``delete_edge`` (take back an element added by hand).

There is no renaming, moving or restructuring. An edge's id is ``"<source>-><target>"`` (the format
merges parallel edges, so it is unique).

Files in ``VERIFIED_DIR`` per item:

- ``<stem>.log.jsonl``: the audit log, one JSON object per line with ``time`` (UTC, ISO 8601),
  ``annotator``, ``item``, ``action``, ``element`` (id or null), ``before``, ``after``,
  ``item_time_s`` (annotation time spent on the item so far) and, where an action changes more than
  one element, ``cascade`` (the edge ids it took along). The first entry (``load``) holds the
  automatic graph itself, so the log alone replays the session; it is rewritten (atomically) after
  every action, so a crash loses nothing.
- ``<stem>.json``: the verified canonical graph, written on Save: excluded elements removed, ids
  preserved, added elements appended, ``meta.verification`` summarising the session.

Every file is written through :func:`atomic_write_text` (temp file in the same folder, fsync,
``os.replace``), so a crash leaves either the old or the new file, never half of one.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import logging
import math
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")
LOG_SUFFIX = ".log.jsonl"
#: a gap between two requests on an item counts at most this long (an annotator who walked away)
IDLE_CAP_S = 60.0
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


# ----------------------------------------------------------------------------- files
def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never a part:
    a temp file in the same folder, flushed and fsynced, then ``os.replace``. On any error the
    temp file is removed and ``path`` is untouched."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (not possible everywhere)
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The entries of an audit log. A truncated last line (a file written by something other than
    :func:`atomic_write_text`) is ignored with a warning; any other bad line is an error."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    entries: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            if i == len(lines) - 1:
                log.warning("%s: line %d is truncated; ignored", path, i + 1)
                break
            raise ItemError(f"{path}: line {i + 1}: not valid JSON: {exc.msg}") from exc
        if not isinstance(entry, dict) or not isinstance(entry.get("action"), str):
            raise ItemError(f"{path}: line {i + 1}: expected an object with an 'action'")
        entries.append(entry)
    return entries


def edge_id(source: str, target: str) -> str:
    return f"{source}->{target}"


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ------------------------------------------------------------------------ item state
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
            raise EditError("an edge edit needs 'id' (\"source->target\") or 'source' and 'target'")
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
        elif action == "add_edge":
            self.added_edges[el] = {"source": after["source"], "target": after["target"]}
        elif action == "delete_node":
            self.added_nodes.pop(el, None)
            for eid in [e for e, d in self.added_edges.items() if el in (d["source"], d["target"])]:
                del self.added_edges[eid]
        elif action == "delete_edge":
            self.added_edges.pop(el, None)
        else:
            raise ItemError(f"{self.item}: unknown action {action!r} in the log")

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
    except (KeyError, TypeError, GraphFormatError) as exc:
        raise ItemError(f"{item}: the 'load' entry has no valid graph: {exc}") from exc
    for e in entries[1:]:
        try:
            st.apply(e)
        except (KeyError, TypeError) as exc:
            raise ItemError(f"{item}: malformed log entry {e!r}: {exc}") from exc
    return st


def last_save_index(entries: list[Mapping[str, Any]]) -> int | None:
    for i in range(len(entries) - 1, -1, -1):
        if entries[i].get("action") == "save":
            return i
    return None


# ----------------------------------------------------------------------------- items
@dataclass
class Session:
    """One item opened in this process: its state, its log and its annotation time."""

    item: str
    figure: Path
    state: ItemState
    entries: list[dict[str, Any]]
    time_spent_s: float = 0.0
    last_activity: float | None = None

    @property
    def saved_index(self) -> int | None:
        return last_save_index(self.entries)

    @property
    def dirty(self) -> bool:
        """Edits after the last save (or any edit when never saved)."""
        start = self.saved_index
        tail = self.entries[(start + 1) if start is not None else 0 :]
        return any(e.get("action") in EDIT_ACTIONS for e in tail)


class VerifyStore:
    """The items of one ``sciflow verify`` run, their sessions and files. Thread-safe."""

    def __init__(
        self,
        figures_dir: str | Path,
        out_dir: str | Path,
        annotator: str | None = None,
        config: Any = None,
        parser_factory: Callable[[], Callable[[Path], Any]] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.figures_dir = Path(figures_dir).resolve()
        if not self.figures_dir.is_dir():
            raise FileNotFoundError(f"figures folder not found: {figures_dir}")
        self.out_dir = Path(out_dir).resolve()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.annotator = (annotator or _default_annotator()).strip() or "anonymous"
        self.config = config
        self._parser_factory = parser_factory
        self._parser: Callable[[Path], Any] | None = None
        self._clock = clock
        self._lock = threading.RLock()
        self._sessions: dict[str, Session] = {}
        self.figures = self._discover()

    # ---------------------------------------------------------------- items
    def _discover(self) -> dict[str, Path]:
        found: dict[str, Path] = {}
        for p in sorted(self.figures_dir.iterdir()):
            if p.suffix.lower() not in IMAGE_SUFFIXES or not p.is_file() or p.name.startswith("."):
                continue
            if not p.resolve().is_relative_to(self.figures_dir):  # a link pointing elsewhere
                log.warning("%s points outside %s; skipped", p, self.figures_dir)
                continue
            if p.stem in found:
                log.warning("two figures named %r; using %s", p.stem, found[p.stem].name)
                continue
            found[p.stem] = p
        return found

    @property
    def items(self) -> list[str]:
        return list(self.figures)

    def log_path(self, item: str) -> Path:
        return self.out_dir / f"{item}{LOG_SUFFIX}"

    def graph_path(self, item: str) -> Path:
        return self.out_dir / f"{item}.json"

    def status(self, item: str) -> str:
        """``saved`` (a verified graph exists and nothing changed since), ``edited`` (unsaved
        edits), ``opened`` (a log exists) or ``new``."""
        with self._lock:
            s = self._sessions.get(item)
            if s is not None:
                if s.dirty:
                    return "edited"
                return "saved" if s.saved_index is not None else "opened"
        if self.graph_path(item).is_file():
            return "saved"
        return "opened" if self.log_path(item).is_file() else "new"

    def listing(self) -> dict[str, Any]:
        items = [{"item": i, "status": self.status(i)} for i in self.items]
        done = sum(1 for x in items if x["status"] == "saved")
        return {"annotator": self.annotator, "items": items, "saved": done, "total": len(items)}

    # ------------------------------------------------------------- sessions
    def session(self, item: str, *, open_: bool = False) -> Session:
        """The item's session, loading or resuming it on first use. ``open_`` logs an ``open``."""
        if item not in self.figures:
            raise KeyError(item)
        with self._lock:
            s = self._sessions.get(item)
            if s is None:
                s = self._load(item)
                self._sessions[item] = s
            for other in self._sessions.values():  # time counts for one item at a time
                if other is not s:
                    other.last_activity = None
            self._touch(s)
            if open_ and len(s.entries) > 1:
                self._log(s, {"action": "open", "element": None, "before": None, "after": None})
            return s

    def _load(self, item: str) -> Session:
        figure = self.figures[item]
        lp = self.log_path(item)
        if lp.is_file():
            entries = read_log(lp)
            state = replay(entries, item)
            spent = float(entries[-1].get("item_time_s", 0.0) or 0.0)
            return Session(item, figure, state, entries, time_spent_s=spent)
        size = _image_size(figure)
        graph, source = self._initial_graph(item, figure)
        try:
            state = ItemState.from_graph(item, graph.to_dict(), size)
        except GraphFormatError as exc:
            raise ItemError(str(exc)) from exc
        s = Session(item, figure, state, [])
        self._log(
            s,
            {
                "action": "load",
                "element": None,
                "before": None,
                "after": {"graph": state.auto, "source": source, "figure": figure.name, "image_size": size},
            },
        )
        return s

    def _initial_graph(self, item: str, figure: Path) -> tuple[DiagramGraph, str]:
        for path, source in ((self.graph_path(item), "verified_dir"), (figure.with_suffix(".json"), "figures_dir")):
            if path.is_file():
                try:
                    return load_graph(path), f"{source}:{path.name}"
                except GraphFormatError as exc:
                    raise ItemError(str(exc)) from exc
        try:
            parser = self._get_parser()
            result = parser(figure)
        except ItemError:
            raise
        except Exception as exc:  # the parser is another component; report, don't crash the page
            raise ItemError(f"{figure.name}: the parser failed: {type(exc).__name__}: {exc}") from exc
        graph = getattr(result, "graph", result)
        if not isinstance(graph, DiagramGraph):
            raise ItemError(f"{figure.name}: the parser returned {type(graph).__name__}, not a graph")
        return graph, "parser"

    def _get_parser(self) -> Callable[[Path], Any]:
        if self._parser is None:
            if self._parser_factory is not None:
                self._parser = self._parser_factory()
            else:
                try:
                    from sciflow.pipeline import Parser
                except Exception as exc:
                    raise ItemError(
                        f"no parse beside the figure and the parser is unavailable ({exc}); "
                        "put <stem>.json next to <stem>.png"
                    ) from exc
                self._parser = Parser(self.config)
        return self._parser

    def _touch(self, s: Session) -> None:
        now = self._clock()
        if s.last_activity is not None:
            s.time_spent_s += min(max(now - s.last_activity, 0.0), IDLE_CAP_S)
        s.last_activity = now

    def _log(self, s: Session, fields: Mapping[str, Any]) -> dict[str, Any]:
        entry = {
            "time": _now_iso(),
            "annotator": self.annotator,
            "item": s.item,
            **fields,
            "item_time_s": round(s.time_spent_s, 3),
        }
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in [*s.entries, entry])
        atomic_write_text(self.log_path(s.item), text)  # first on disk, then in memory
        s.entries.append(entry)
        return entry

    # ---------------------------------------------------------------- edits
    def edit(self, item: str, edit: Mapping[str, Any]) -> tuple[Session, dict[str, Any]]:
        """Validate and apply one edit; it is logged before it takes effect. Raises
        :class:`EditError` (the message says why) or ``KeyError`` (unknown item)."""
        with self._lock:
            s = self.session(item)
            fields = s.state.plan(edit)
            entry = self._log(s, fields)
            s.state.apply(entry)
            return s, entry

    def heartbeat(self, item: str) -> Session:
        with self._lock:
            return self.session(item)

    def save(self, item: str) -> Session:
        """Write the verified graph (atomically) and log the save."""
        with self._lock:
            s = self.session(item)
            annotators = sorted({str(e.get("annotator")) for e in s.entries if e.get("annotator")} | {self.annotator})
            counts = s.state.counts()
            graph = s.state.verified_graph(
                {
                    "tool": "sciflow verify",
                    "annotator": self.annotator,
                    "annotators": annotators,
                    "saved_at": _now_iso(),
                    "time_spent_s": round(s.time_spent_s, 3),
                    "excluded_nodes": sorted(s.state.excluded_nodes),
                    "excluded_edges": sorted(e for e in s.state.auto_edges if not s.state.edge_included(e)),
                    "added_nodes": list(s.state.added_nodes),
                    "added_edges": [e for e in s.state.added_edges if s.state.edge_included(e)],
                    "counts": counts,
                    "log": self.log_path(item).name,
                }
            )
            text = json.dumps(graph.to_dict(), indent=2, ensure_ascii=False) + "\n"
            atomic_write_text(self.graph_path(item), text)
            self._log(
                s,
                {
                    "action": "save",
                    "element": None,
                    "before": None,
                    "after": {"nodes": len(graph.nodes), "edges": len(graph.edges), "file": self.graph_path(item).name},
                },
            )
            return s

    def view(self, item: str, s: Session | None = None) -> dict[str, Any]:
        """Everything the page shows for one item."""
        s = s or self.session(item)
        idx = self.items.index(item)
        listing = self.listing()
        w, h = s.state.image_size or _image_size(s.figure) or (0, 0)
        return {
            "item": item,
            "index": idx,
            "total": len(self.items),
            "prev": self.items[idx - 1] if idx > 0 else None,
            "next": self.items[idx + 1] if idx + 1 < len(self.items) else None,
            "saved_count": listing["saved"],
            "annotator": self.annotator,
            "figure": {
                "url": f"/api/items/{quote(item, safe='')}/figure",
                "width": w,
                "height": h,
                "name": s.figure.name,
            },
            **s.state.view(),
            "counts": s.state.counts(),
            "time_spent_s": round(s.time_spent_s, 1),
            "saved": s.saved_index is not None,
            "dirty": s.dirty,
            "edits": sum(1 for e in s.entries if e.get("action") in EDIT_ACTIONS),
            "source": (s.entries[0].get("after") or {}).get("source") if s.entries else None,
        }


def _image_size(path: Path) -> tuple[int, int] | None:
    try:
        from PIL import Image

        with Image.open(path) as im:
            return int(im.size[0]), int(im.size[1])
    except Exception as exc:  # an unreadable figure still gets its graph shown
        log.warning("cannot read the size of %s: %s", path, exc)
        return None


def _default_annotator() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "anonymous"
