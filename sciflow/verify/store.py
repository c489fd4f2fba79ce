"""Items, sessions and saving for ``sciflow verify``: the store of one run's figures.

One *item* is one figure ``FIGURES_DIR/<stem>.<png|jpg|...>``. Its automatic graph comes from,
in this order: the item's audit log in ``VERIFIED_DIR`` (resuming a session), an already saved
``VERIFIED_DIR/<stem>.json``, a parse beside the figure (``FIGURES_DIR/<stem>.json``), or the
parser (imported lazily, run once; its graph is recorded in the log).

The edits themselves (identity-consistent: exclude, restore, add, delete; never rename or
move) are :mod:`sciflow.verify.edits`; atomic writing and reading the audit log,
:mod:`sciflow.verify.files`. Their names stay importable from here.

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
``os.replace``), so a crash leaves either the old or the new file, never half of one; the temp
files a killed process leaves are removed when the next store opens the folder. Files get the
umask's mode, like any file the user writes.
"""

from __future__ import annotations

import getpass
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph
from sciflow.verify.edits import (
    EDIT_ACTIONS,
    MAX_LABEL_CHARS,
    NOTE_ACTIONS,
    EditError,
    ItemError,
    ItemState,
    edge_id,
    last_save_index,
    replay,
)
from sciflow.verify.files import LOG_SUFFIX, atomic_write_text, read_log, remove_stale_temp_files

log = logging.getLogger(__name__)

__all__ = [
    "EDIT_ACTIONS",
    "IDLE_CAP_S",
    "IMAGE_SUFFIXES",
    "LOG_SUFFIX",
    "MAX_LABEL_CHARS",
    "NOTE_ACTIONS",
    "EditError",
    "ItemError",
    "ItemState",
    "Session",
    "VerifyStore",
    "atomic_write_text",
    "edge_id",
    "last_save_index",
    "read_log",
    "replay",
]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp")
#: a gap between two requests on an item counts at most this long (an annotator who walked away)
IDLE_CAP_S = 60.0


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
        remove_stale_temp_files(self.out_dir)  # left by a process killed mid-write
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
                except RecursionError as exc:  # a format layer without a depth limit
                    raise ItemError(f"{path}: invalid graph file: nested too deeply") from exc
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
