"""Writing a results folder safely: atomic files, one clear error for a full disk, one run per folder.

- :func:`write_atomic` writes a finished file as a temp file in the same folder
  (``.<name>.<pid>.tmp``), flushed and fsynced, then ``os.replace``-d over the target: a reader
  sees the old file or the new one, never half of one. On any failure the temp file is removed.
- An ``OSError`` while writing becomes :class:`OutputError` with one line:
  ``disk full writing <path>`` for ``ENOSPC``/``EDQUOT``, else ``cannot write <path>: <strerror>``.
- :class:`OutputLock` holds an exclusive ``fcntl.flock`` on ``<folder>/.sciflow.lock`` (which
  holds the holder's PID) for the length of a run; a second run on the same folder fails at once
  with :class:`OutputBusy` naming the holder's PID. The lock file is removed when released.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import time
from pathlib import Path
from typing import Any

from sciflow.runs.items import ScoringError

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: runs are not locked
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

LOCK_NAME = ".sciflow.lock"
#: temp files this module leaves only when killed mid-write (swept by :func:`remove_stale_temps`)
_TEMP = re.compile(r"^\..+\.\d+\.tmp$")


class OutputError(ScoringError):
    """The output folder cannot be used: not a folder, not writable, the disk full, or in use
    by another run. The message is one line."""


class OutputBusy(OutputError):
    """Another run holds the output folder's lock; :attr:`pid` is its process id (None when unknown)."""

    def __init__(self, message: str, pid: int | None):
        super().__init__(message)
        self.pid = pid


def write_error(path: Path, exc: OSError) -> OutputError:
    """The one-line :class:`OutputError` for ``exc`` raised while writing ``path``."""
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return OutputError(f"disk full writing {path}")
    return OutputError(f"cannot write {path}: {exc.strerror or exc}")


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` (str: UTF-8) to ``path`` atomically (temp file in the same folder +
    ``os.replace``); :class:`OutputError` on any ``OSError``, with no temp file left."""
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise write_error(path, exc) from exc
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def json_text(data: Any) -> str:
    """The JSON of a finished file: indented, UTF-8 kept, one final newline
    (the bytes :meth:`sciflow.format.graph.DiagramGraph.save` writes)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def remove_stale_temps(folder: Path) -> None:
    """Remove temp files (``.<name>.<pid>.tmp``, and the ``results.jsonl.tmp`` of older versions)
    that a killed run left in ``folder``; call it while holding the folder's lock."""
    if not folder.is_dir():
        return
    for p in folder.iterdir():
        if p.is_file() and (_TEMP.match(p.name) or p.name == "results.jsonl.tmp"):
            with contextlib.suppress(OSError):
                p.unlink()


def remove_quietly(*paths: Path) -> None:
    """Remove files that may not exist; :class:`OutputError` when one exists and cannot be removed."""
    for p in paths:
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise OutputError(f"cannot remove {p}: {exc.strerror or exc}") from exc


def prepare_folder(folder: Path) -> None:
    """Create the output folder (and its parents); :class:`OutputError` when ``folder`` is an
    existing file or cannot be created. Cheap: call it before any model loads."""
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"output folder {folder} is an existing file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create output folder {folder}: {exc.strerror or exc}") from exc


class OutputLock:
    """Exclusive lock on a folder for one run (``with OutputLock(folder): ...``).

    The lock is an ``fcntl.flock`` on ``<folder>/.sciflow.lock``, which holds the holder's PID;
    the kernel drops it when the holder exits, however it exits (a SIGKILLed run never leaves a
    stale lock: the file may stay, the lock does not). On release the file is removed. Without
    ``fcntl`` (not POSIX) the lock does nothing."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> None:
        if fcntl is None:  # pragma: no cover
            log.warning("no fcntl on this platform: %s is not locked against a second run", self.folder)
            return
        for _ in range(20):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise OutputError(f"cannot create {self.path}: {exc.strerror or exc}") from exc
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                pid = _holder(fd)
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise OutputError(f"cannot lock {self.path}: {exc.strerror or exc}") from exc
                who = f"pid {pid}" if pid is not None else "pid unknown"
                raise OutputBusy(f"{self.folder} is in use by another sciflow run ({who}); "
                                 "wait for it to finish or choose another output folder", pid) from None
            # the holder we waited on may have removed the file after we opened it: lock the file
            # that is at the path now, not an unlinked one
            try:
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            try:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            except OSError as exc:
                with contextlib.suppress(OSError):
                    self.path.unlink()  # ours (we hold it): leave no empty lock file behind
                os.close(fd)
                raise write_error(self.path, exc) from exc
            self._fd = fd
            return
        raise OutputError(f"cannot lock {self.path}: it keeps being replaced")  # pragma: no cover

    def release(self) -> None:
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()  # while still holding it: the next run creates a fresh file
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _holder(fd: int) -> int | None:
    """The PID written in a lock file held by another process (it may not have written it yet)."""
    for _ in range(50):
        try:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            return None
        if text.isdigit():
            return int(text)
        time.sleep(0.01)
    return None
