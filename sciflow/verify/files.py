"""The files of ``sciflow verify`` on disk: atomic writing, and reading an audit log back.

Every file is written through :func:`atomic_write_text` (temp file in the same folder, fsync,
``os.replace``), so a crash leaves either the old or the new file, never half of one. The temp
file is ``.<name>.<8 characters>.tmp``; one left behind by a killed process is removed by
:func:`remove_stale_temp_files` when the next ``sciflow verify`` starts on the folder. Files get
the mode a plain ``open(path, "w")`` would give (``0o666`` less the umask). An audit log
(``<stem>.log.jsonl``, see :mod:`sciflow.verify.store`) is read by :func:`read_log`; every JSON
document read from a user goes through :func:`parse_json_text` (a depth limit: deeply nested
input is an error, never a ``RecursionError``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
from pathlib import Path
from typing import Any

from sciflow.format.jsonio import JSONError, parse_json
from sciflow.verify.edits import ItemError

log = logging.getLogger("sciflow.verify.store")  # the name it logged under before the split

__all__ = ["LOG_SUFFIX", "atomic_write_text", "parse_json_text", "read_log", "remove_stale_temp_files"]

LOG_SUFFIX = ".log.jsonl"

_TEMP_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_"
#: the temp files :func:`atomic_write_text` writes next to a verified graph or an audit log
#: (the same pattern as ``tempfile.mkstemp``'s names, which it used before)
TEMP_PATTERN = re.compile(r"^\..+\.(?:json|log\.jsonl)\.[a-z0-9_]{8}\.tmp$")


class JSONRefused(ValueError):
    """A JSON document refused before parsing (nested too deeply, too large, not UTF-8)."""


def parse_json_text(text: str | bytes, source: str) -> Any:
    """Parse one JSON document from a user (a log line, a request body). Raises
    ``json.JSONDecodeError`` (syntax) or :class:`JSONRefused` (nested too deeply or otherwise
    refused before parsing, :func:`sciflow.format.jsonio.parse_json`'s limits); never
    ``RecursionError``."""
    try:
        return parse_json(text, source=source)
    except JSONError as exc:
        if exc.syntax:
            raise  # a JSONDecodeError: a syntax error (or NaN / Infinity, which are not JSON)
        raise JSONRefused(str(exc)) from exc


def _create_temp(path: Path) -> tuple[int, str]:
    """A new temp file beside ``path``, opened for writing with mode ``0o666`` (the kernel takes
    the umask off, as for any new file); ``tempfile.mkstemp`` would force ``0o600``."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tag = "".join(secrets.choice(_TEMP_ALPHABET) for _ in range(8))
        tmp = os.path.join(path.parent, f".{path.name}.{tag}.tmp")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp file name beside {path}")


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never a part:
    a temp file in the same folder, flushed and fsynced, then ``os.replace``. On any error the
    temp file is removed and ``path`` is untouched. The file's mode is ``0o666`` less the umask."""
    path = Path(path)
    fd, tmp = _create_temp(path)
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


def remove_stale_temp_files(folder: str | Path) -> list[Path]:
    """Remove the temp files :func:`atomic_write_text` leaves when its process is killed
    mid-write (``.<stem>.json.<8 chars>.tmp``, ``.<stem>.log.jsonl.<8 chars>.tmp``; nothing
    else). Returns the files removed. Call it only when no other process writes the folder."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not TEMP_PATTERN.match(entry.name):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            os.unlink(entry.path)
        except OSError as exc:
            log.warning("cannot remove the stale temp file %s: %s", entry.path, exc)
            continue
        removed.append(Path(entry.path))
    if removed:
        log.info("removed %d stale temp file(s) in %s", len(removed), folder)
    return removed


def read_log(path: str | Path) -> list[dict[str, Any]]:
    """The entries of an audit log. A truncated last line (a file written by something other than
    :func:`atomic_write_text`) is ignored with a warning; any other bad line, a line nested too
    deeply included, is an :class:`ItemError` naming the file and the line."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise ItemError(f"{path}: not UTF-8 text: {exc.reason}") from exc
    except OSError as exc:
        raise ItemError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    entries: list[dict[str, Any]] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            entry = parse_json_text(line, f"{path}:{i + 1}")
        except JSONRefused as exc:
            raise ItemError(f"{path}: line {i + 1}: {exc}") from exc
        except json.JSONDecodeError as exc:
            if i == len(lines) - 1:
                log.warning("%s: line %d is truncated; ignored", path, i + 1)
                break
            raise ItemError(f"{path}: line {i + 1}: not valid JSON: {exc.msg}") from exc
        if not isinstance(entry, dict) or not isinstance(entry.get("action"), str):
            raise ItemError(f"{path}: line {i + 1}: expected an object with an 'action'")
        entries.append(entry)
    return entries
