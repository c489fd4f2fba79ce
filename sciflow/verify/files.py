"""The files of ``sciflow verify`` on disk: atomic writing, and reading an audit log back.

Every file is written through :func:`atomic_write_text` (temp file in the same folder, fsync,
``os.replace``), so a crash leaves either the old or the new file, never half of one. An audit
log (``<stem>.log.jsonl``, see :mod:`sciflow.verify.store`) is read by :func:`read_log`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

from sciflow.verify.edits import ItemError

log = logging.getLogger("sciflow.verify.store")  # the name it logged under before the split

__all__ = ["LOG_SUFFIX", "atomic_write_text", "read_log"]

LOG_SUFFIX = ".log.jsonl"


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

