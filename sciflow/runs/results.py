"""The results log: rows appended and flushed as items finish, resumable after a crash.

``results.jsonl`` is written by one writer (the process that runs the executor), one JSON
object per line, flushed after each row, so a killed run loses at most the items in flight.
A row records ``config_hash``, ``metric_version`` (:data:`sciflow.metrics.METRIC_VERSION`
when it was scored) and the SHA-256 of its inputs; :func:`reusable_rows` keeps the rows of a
previous run whose inputs, configuration and metric version are unchanged, so a rerun redoes
only what is missing or changed. :func:`finalize` rewrites the file once at the end, sorted by
item id with one row per item, atomically (:func:`sciflow.runs.files.write_atomic`: temp file +
rename, no temp left on failure), so the finished file is the same bit for bit however the run
was interrupted or ordered. An ``OSError`` while writing (a full disk) raises
:class:`~sciflow.runs.files.OutputError` with one line.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sciflow.metrics import METRIC_VERSION
from sciflow.runs.files import write_atomic, write_error

log = logging.getLogger(__name__)

RESULTS_NAME = "results.jsonl"


def read_log(path: Path) -> list[dict[str, Any]]:
    """Rows of a results log; a line cut short by a crash (the last one) is dropped."""
    rows: list[dict[str, Any]] = []
    if not path.is_file():
        return rows
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                log.warning("%s:%d: incomplete row dropped (interrupted run)", path, n)
    return rows


def reusable_rows(
    previous: Iterable[dict[str, Any]],
    config_hash: str,
    inputs: dict[str, dict[str, str]],
    critique: bool = False,
    *,
    metric_version: int = METRIC_VERSION,
) -> dict[str, dict[str, Any]]:
    """Rows of a previous run that can stand: same config hash, same ``metric_version`` (a row
    without one, from before it was recorded, never stands), same input hashes, and a critique
    when one is asked for.

    ``inputs`` maps item id to the current input hashes (``{"reference_sha256": ...}``).
    The last row of an item that can stand wins.
    """
    keep: dict[str, dict[str, Any]] = {}
    for row in previous:
        item = row.get("id")
        if (item in inputs and row.get("config_hash") == config_hash
                and row.get("metric_version") == metric_version and row.get("inputs") == inputs[item]
                and (row.get("critique_written") or not critique)):
            keep[item] = row
    return keep


class ResultsLog:
    """Append-and-flush writer of ``results.jsonl`` (single writer); ``OSError`` becomes
    :class:`~sciflow.runs.files.OutputError`."""

    def __init__(self, path: Path, keep_existing: bool):
        self.path = path
        try:
            self._f = path.open("a" if keep_existing else "w", encoding="utf-8")
            if keep_existing and self._f.tell() > 0 and not _ends_with_newline(path):
                self._f.write("\n")  # a line cut short by a crash stays one (dropped) line
        except OSError as exc:
            raise write_error(path, exc) from exc

    def append(self, row: dict[str, Any]) -> None:
        try:
            self._f.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._f.flush()
            os.fsync(self._f.fileno())
        except OSError as exc:
            raise write_error(self.path, exc) from exc

    def close(self) -> None:
        try:
            self._f.close()
        except OSError as exc:
            raise write_error(self.path, exc) from exc

    def __enter__(self) -> ResultsLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def finalize(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Rewrite the log sorted by id, one row per item, atomically."""
    by_id = {r["id"]: r for r in rows}
    write_atomic(path, "".join(json.dumps(by_id[item], ensure_ascii=False) + "\n" for item in sorted(by_id)))
