"""Parse many image files, in parallel across processes, with a content-addressed cache.

* Each worker process builds one :class:`~sciflow.pipeline.Parser` (models load once per
  process) and parses the files it is handed.
* Cache: ``<cache_dir>/<key[:2]>/<key>.json`` where ``key`` is the SHA-256 of
  ``image-content-sha256 + parser fingerprint hash`` (agent/backend/model names, weight
  hashes and the parser-config hash). The entry holds the DiagramGraph JSON and backends.
  A hit skips parsing; a corrupt entry is ignored and rewritten.
* A failure on one item is recorded in its :class:`ParseOutcome` (``error``) and never stops
  the batch. Outcomes come back in the order of ``paths``. With ``jobs > 1`` the workers are
  supervised (:class:`~sciflow.runs.pool.WorkerPool`): a worker that dies fails only the image it
  was parsing, after one retry, and workers exit when this process dies.
* Output names (:func:`output_ids`): an image's item id, and the name of its graph file
  ``OUT/<id>.json``, is its stem when no other input shares that stem, else its file name
  (``x.png`` and ``x.bmp`` give ``x.png.json`` and ``x.bmp.json``: both are kept, and a warning
  and each outcome's ``notes`` say so); a name still taken (the same file name in two folders)
  gets ``-2``, ``-3`` ... Names are compared case-insensitively, so that no two outputs collide
  on a case-insensitive file system. The same file given twice is parsed once.
* Graph files are written atomically (:func:`sciflow.runs.files.write_atomic`); a full disk
  raises :class:`~sciflow.runs.files.OutputError` (one line).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciflow.config import Config
from sciflow.format.graph import DiagramGraph, GraphFormatError
from sciflow.format.hashing import file_sha256
from sciflow.format.imageio import RASTER_SUFFIXES, VECTOR_SUFFIXES
from sciflow.models.device import resolve_device, uses_onnxruntime
from sciflow.runs.files import json_text, prepare_folder, write_atomic
from sciflow.runs.pool import WorkerPool

log = logging.getLogger(__name__)

IMAGE_SUFFIXES: frozenset[str] = RASTER_SUFFIXES | VECTOR_SUFFIXES


@dataclass
class ParseOutcome:
    path: Path
    item_id: str
    graph: DiagramGraph | None
    error: str | None
    cached: bool
    seconds: float
    backends: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # e.g. a stem shared with another input
    output: Path | None = None  # the graph file written (parse_to_dir)


def output_ids(paths: Sequence[Path]) -> tuple[list[str], list[list[str]]]:
    """The item id (and output stem) of every path and its notes (one per clash, see the
    module docstring): the stem when it is unique, else the file name, made unique with
    ``-2`` ...; compared case-insensitively."""
    stems: dict[str, list[Path]] = {}
    for p in paths:
        stems.setdefault(p.stem.casefold(), []).append(p)
    taken: set[str] = set()
    ids: list[str] = []
    for p in paths:
        want = p.stem if len(stems[p.stem.casefold()]) == 1 else p.name
        name, n = want, 1
        while name.casefold() in taken:
            n += 1
            name = f"{want}-{n}"
        taken.add(name.casefold())
        ids.append(name)
    notes: list[list[str]] = [[] for _ in paths]
    for group in stems.values():
        if len(group) > 1:
            where = [i for i, p in enumerate(paths) if p.stem.casefold() == group[0].stem.casefold()]
            note = (f"{len(where)} inputs share the stem {group[0].stem!r} ("
                    + ", ".join(str(paths[i]) for i in where) + "): each is named by its file name ("
                    + ", ".join(f"{ids[i]}.json" for i in where) + ")")
            for i in where:
                notes[i].append(note)
    return ids, notes


def cache_key(path: Path, fingerprint: dict[str, Any]) -> str:
    fp = json.dumps(fingerprint, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256((file_sha256(path) + "|" + fp).encode("utf-8")).hexdigest()


def _cache_file(cache_dir: Path, key: str) -> Path:
    return cache_dir / key[:2] / f"{key}.json"


def _read_cache(cache_dir: Path, key: str) -> tuple[DiagramGraph, dict[str, str]] | None:
    f = _cache_file(cache_dir, key)
    if not f.is_file():
        return None
    try:
        data = json.loads(f.read_text("utf-8"))
        return DiagramGraph.from_dict(data["graph"], source=str(f)), dict(data.get("backends", {}))
    except Exception as exc:  # noqa: BLE001 - a broken cache entry is just a miss
        log.warning("ignoring unreadable cache entry %s: %s", f, exc)
        return None


def _write_cache(cache_dir: Path, key: str, graph: DiagramGraph, backends: dict[str, str]) -> None:
    """Store a cache entry atomically; a failure (a full disk) only costs the entry."""
    f = _cache_file(cache_dir, key)
    tmp = f.with_suffix(f".tmp{os.getpid()}")
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"graph": graph.to_dict(), "backends": backends}, ensure_ascii=False), "utf-8")
        tmp.replace(f)
    except OSError as exc:
        log.warning("cache entry %s not written: %s", f, exc.strerror or exc)
        with contextlib.suppress(OSError):
            tmp.unlink()


# ------------------------------------------------------------------ worker side
_WORKER: Any = None


def _init_worker(config_data: dict[str, Any], device: str = "cpu") -> None:
    global _WORKER
    from sciflow.pipeline import Parser  # noqa: PLC0415

    config = Config(config_data)
    spec = resolve_device(device, need_onnxruntime=uses_onnxruntime(config.parser))
    _WORKER = Parser(config, device=spec.torch_device)


def _parse_one(
    path: str, item_id: str, cache_dir: str | None, debug_dir: str | None
) -> tuple[dict[str, Any] | None, str | None, bool, float, dict[str, str]]:
    graph, *rest = _parse_with(_WORKER, path, item_id, cache_dir, debug_dir)
    return (graph.to_dict() if graph is not None else None, *rest)  # plain data across the pool


def _parse_with(
    parser: Any, path: str, item_id: str, cache_dir: str | None, debug_dir: str | None
) -> tuple[DiagramGraph | None, str | None, bool, float, dict[str, str]]:
    t0 = time.perf_counter()
    try:
        key = None
        if cache_dir is not None:
            key = cache_key(Path(path), parser.fingerprint())
            # debug overlays are drawn while parsing: with a debug folder the item is parsed
            # again (deterministic, so the same graph) rather than read from the cache
            hit = _read_cache(Path(cache_dir), key) if debug_dir is None else None
            if hit is not None:
                return hit[0], None, True, time.perf_counter() - t0, hit[1]
        res = parser(Path(path), item_id=item_id, debug_dir=Path(debug_dir) if debug_dir else None)
        if cache_dir is not None and key is not None:
            _write_cache(Path(cache_dir), key, res.graph, res.backends)
        # the graph as the cache holds it (its JSON document, validated), so that a fresh parse
        # and a cache hit score identically
        graph = DiagramGraph.from_dict(res.graph.to_dict(), source=path)
        return graph, None, False, time.perf_counter() - t0, res.backends
    except Exception as exc:  # noqa: BLE001 - per-item errors never stop the batch
        log.warning("%s: parse failed: %s", path, exc)
        # an input error already names the file and says what is wrong; anything else is a
        # parser failure, named by its type
        message = str(exc) if isinstance(exc, GraphFormatError) else f"{type(exc).__name__}: {exc}"
        return None, message, False, time.perf_counter() - t0, {}


def _outcome(path: Path, item_id: str, r: tuple[Any, ...]) -> ParseOutcome:
    gdict, err, cached, secs, backends = r
    graph = DiagramGraph.from_dict(gdict, source=str(path)) if gdict is not None else None
    return ParseOutcome(path, item_id, graph, err, cached, secs, backends)


def parse_many(
    paths: Sequence[Path],
    config: Config,
    *,
    jobs: int = 1,
    cache_dir: Path | None = None,
    debug_dir: Path | None = None,
    on_done: Callable[[ParseOutcome], None] | None = None,
    device: str = "cpu",
) -> list[ParseOutcome]:
    """Parse ``paths`` (item id = file stem) with ``jobs`` processes (1 = in this process).
    ``on_done`` is called once per item as it finishes (in completion order). ``device``
    (cpu | cuda | cuda:N | auto, :func:`sciflow.models.device.resolve_device`) is where the models run;
    it is not part of the parser fingerprint, so it never changes a cache key."""
    paths = [Path(p) for p in paths]
    ids, notes = output_ids(paths)
    for note in dict.fromkeys(n for ns in notes for n in ns):
        log.warning(note)
    cdir = str(cache_dir) if cache_dir is not None else None
    ddir = str(debug_dir) if debug_dir is not None else None
    results: list[ParseOutcome | None] = [None] * len(paths)
    if not paths:
        return []
    # fail fast (DeviceError) before any worker starts
    resolve_device(device, need_onnxruntime=uses_onnxruntime(config.parser))

    def done(i: int, r: tuple[Any, ...]) -> None:
        oc = _outcome(paths[i], ids[i], r)
        oc.notes = list(notes[i])
        results[i] = oc
        if on_done:
            on_done(oc)

    if jobs <= 1:
        _init_worker(dict(config.data), device)
        for i, p in enumerate(paths):
            done(i, _parse_one(str(p), ids[i], cdir, ddir))
    else:
        pool = WorkerPool(jobs, _init_worker, (dict(config.data), device))
        try:
            tasks = [(i, (str(p), ids[i], cdir, ddir)) for i, p in enumerate(paths)]
            for i, r, failure in pool.map_unordered(_parse_one, tasks):
                if failure is not None:  # a worker that died (twice) fails only its image
                    verb = "crashed" if failure.crashed else "failed"
                    r = (None, f"worker {verb} while parsing {paths[i]}: {failure.message}", False, 0.0, {})
                done(i, r)
        finally:
            pool.close()
    return [r for r in results if r is not None]


def parse_cached(parser: Any, path: Path, cache_dir: Path | None) -> tuple[DiagramGraph | None, str | None]:
    """Parse one image with an already-built parser, through the cache; ``(graph, None)`` or
    ``(None, error message)``. Used by the scoring workers, which hold their own parser."""
    graph, err, _cached, _secs, _backends = _parse_with(
        parser, str(path), path.stem, str(cache_dir) if cache_dir else None, None
    )
    return graph, err


def collect_images(inputs: Sequence[Path]) -> list[Path]:
    """Image files among ``inputs``: files as given, folders searched (not recursively) for
    :data:`IMAGE_SUFFIXES`. Raises ``FileNotFoundError`` for an input that does not exist."""
    out: list[Path] = []
    for p in map(Path, inputs):
        if p.is_dir():
            out += sorted(q for q in p.iterdir() if q.is_file() and q.suffix.lower() in IMAGE_SUFFIXES)
        elif p.is_file():
            out.append(p)
        else:
            raise FileNotFoundError(f"no such file or folder: {p}")
    seen: set[Path] = set()
    unique = []
    for p in out:  # the same file given twice (a folder and a file in it) is parsed once
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def parse_to_dir(
    paths: Sequence[Path],
    out_dir: Path,
    config: Config,
    *,
    jobs: int = 1,
    cache_dir: Path | None = None,
    debug_dir: Path | None = None,
    on_done: Callable[[ParseOutcome], None] | None = None,
    device: str = "cpu",
) -> list[ParseOutcome]:
    """:func:`parse_many`, then write ``OUT_DIR/<id>.json`` for every image that parsed (the id is
    the stem, or the file name when inputs share a stem: :func:`output_ids`), atomically; each
    outcome's ``output`` is the file written. Failed items are only reported in the outcomes (a
    non-image file gets a clear error). :class:`~sciflow.runs.files.OutputError` when ``OUT_DIR``
    is a file or cannot be created, checked before any model loads, or when the disk is full."""
    out_dir = Path(out_dir)
    prepare_folder(out_dir)
    outcomes = parse_many(paths, config, jobs=jobs, cache_dir=cache_dir, debug_dir=debug_dir, on_done=on_done,
                          device=device)
    for o in outcomes:
        if o.graph is not None:
            o.output = out_dir / f"{o.item_id}.json"
            write_atomic(o.output, json_text(o.graph.to_dict()))
    return outcomes
