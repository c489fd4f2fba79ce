"""Content hashes used for caches, resume and provenance (one implementation for all)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def json_sha256(data: Any) -> str:
    """SHA-256 of the canonical JSON of ``data`` (sorted keys, no whitespace).

    >>> json_sha256({"b": 1, "a": [1, 2]}) == json_sha256({"a": [1, 2], "b": 1})
    True
    """
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()
