"""An on-disk store of label embeddings, shared by processes and kept between runs.

One SQLite file (stdlib :mod:`sqlite3`) with one table::

    embeddings(model_key TEXT, text TEXT, dim INTEGER, vector BLOB,  PRIMARY KEY (model_key, text))

``vector`` holds the float32 values exactly as the model returned them, as little-endian bytes
(``dim * 4`` of them); a reader gets back the identical float32 array, so an embedder that
converts it the way it converts a fresh encoding returns bit-identical vectors. ``model_key``
names the model, its weights and the kind of device that computed the vector (see
:meth:`sciflow.models.embedding.SentenceTransformerEmbedder.store_key`), so vectors of different models,
weights or devices never mix.

Concurrency: several worker processes may read and write one file at once. The file runs in WAL
journal mode (readers never block the writer) with ``synchronous=NORMAL`` (a commit does not wait
for an fsync; a power cut may lose the last commits, never corrupt the file) and a 30 s busy
timeout. Rows are only ever added, with ``INSERT OR IGNORE``: the first writer of a key wins and a
row never changes afterwards.

Failure is never fatal: a store that cannot be opened (unwritable folder, a file that is not a
SQLite database, a schema this code does not know) or that fails later (disk full, a lock held
past the timeout) logs one warning and from then on behaves as no store at all: every lookup is a
miss and every write is dropped. The scores do not depend on the store, only the time to compute
them.

The connection is opened lazily on first use and is not pickled: a store sent to another process
(or unpickled) opens its own connection there.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: the float32 layout of ``vector`` (fixed byte order, so the file reads the same anywhere)
VECTOR_DTYPE = np.dtype("<f4")
#: seconds a connection waits for another process's write lock before giving up
BUSY_TIMEOUT_S = 30.0
#: ``PRAGMA user_version`` of the layout above; a file with another non-zero version is not used
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_key TEXT NOT NULL,
    text TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model_key, text)
) WITHOUT ROWID
"""


class EmbeddingStore:
    """Float32 embedding vectors keyed by ``(model_key, text)`` in the SQLite file ``path``.

    Every method is safe to call on a broken store (a miss or a no-op, see the module docstring);
    :attr:`broken` says whether it has given up. Usable from several threads (one connection,
    guarded by a lock) and several processes (each with its own connection to the same file).
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.broken = False
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------ connection
    def _connect(self) -> sqlite3.Connection | None:
        """The open connection, opening (and if need be creating) the file on first use; None
        once the store is broken. Call with the lock held."""
        if self.broken:
            return None
        if self._conn is not None:
            return self._conn
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        attempt = 0
        while True:
            try:
                self._conn = self._open()
                return self._conn
            except sqlite3.OperationalError as exc:
                # Workers start together and open one new file together: switching it to WAL
                # needs a lock that SQLite does not wait for (no busy handler there), so a
                # "locked" setup is retried with backoff until the busy timeout.
                if ("locked" in str(exc) or "busy" in str(exc)) and time.monotonic() < deadline:
                    time.sleep(min(0.5, 0.01 * 2**attempt))
                    attempt += 1
                    continue
                self._give_up("cannot open", exc)
                return None
            except (sqlite3.Error, OSError) as exc:
                self._give_up("cannot open", exc)
                return None

    def _open(self) -> sqlite3.Connection:
        """A new, set-up connection (the file and its table created if need be); raises on failure."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            version = conn.execute("PRAGMA user_version").fetchone()[0]  # "not a database" raises here
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema version {version}, this code reads {SCHEMA_VERSION}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            with conn:
                conn.execute(_SCHEMA)
                if version == 0:
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _give_up(self, what: str, exc: BaseException) -> None:
        """Warn once and behave as no store from now on. Call with the lock held."""
        if not self.broken:
            log.warning("embedding store %s: %s (%s: %s); continuing without it", self.path, what,
                        type(exc).__name__, exc)
        self.broken = True
        self._drop_connection()

    def _drop_connection(self) -> None:
        """Close and forget the connection, if any. Call with the lock held."""
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None

    @staticmethod
    def _vector(dim: int, blob: bytes) -> np.ndarray | None:
        """The stored float32 array, or None for a row whose length does not match ``dim``."""
        if dim <= 0 or len(blob) != dim * VECTOR_DTYPE.itemsize:
            return None
        return np.frombuffer(blob, dtype=VECTOR_DTYPE).astype(np.float32)

    # ---------------------------------------------------------------- reads
    def load_all(self, model_key: str) -> dict[str, np.ndarray]:
        """Every vector stored under ``model_key`` (float32, shape (dim,)), for a bulk preload."""
        with self._lock:
            conn = self._connect()
            if conn is None:
                return {}
            try:
                rows = conn.execute(
                    "SELECT text, dim, vector FROM embeddings WHERE model_key = ?", (model_key,)).fetchall()
            except sqlite3.Error as exc:
                self._give_up("cannot read", exc)
                return {}
        out: dict[str, np.ndarray] = {}
        for text, dim, blob in rows:
            vec = self._vector(dim, blob)
            if vec is not None:
                out[text] = vec
        return out

    def get(self, model_key: str, text: str) -> np.ndarray | None:
        """The float32 vector stored for ``text`` under ``model_key``, or None (a miss)."""
        with self._lock:
            conn = self._connect()
            if conn is None:
                return None
            try:
                row = conn.execute("SELECT dim, vector FROM embeddings WHERE model_key = ? AND text = ?",
                                   (model_key, text)).fetchone()
            except UnicodeEncodeError:  # a str SQLite cannot hold (lone surrogate): never stored
                return None
            except sqlite3.Error as exc:
                self._give_up("cannot read", exc)
                return None
        return None if row is None else self._vector(*row)

    def count(self, model_key: str | None = None) -> int:
        """Rows stored under ``model_key``, or under every key when None (0 for a broken store)."""
        with self._lock:
            conn = self._connect()
            if conn is None:
                return 0
            try:
                if model_key is None:
                    row = conn.execute("SELECT COUNT(*) FROM embeddings").fetchone()
                else:
                    row = conn.execute("SELECT COUNT(*) FROM embeddings WHERE model_key = ?", (model_key,)).fetchone()
                return int(row[0])
            except sqlite3.Error as exc:
                self._give_up("cannot read", exc)
                return 0

    # --------------------------------------------------------------- writes
    def put(self, model_key: str, text: str, vec: np.ndarray) -> None:
        """Store ``vec`` (converted to float32) for ``text`` unless a vector is already there."""
        self.put_many(model_key, [(text, vec)])

    def put_many(self, model_key: str, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Store several vectors in one transaction (``INSERT OR IGNORE``: existing rows stay)."""
        rows = []
        for text, vec in items:
            arr = np.ascontiguousarray(np.asarray(vec).reshape(-1), dtype=VECTOR_DTYPE)
            rows.append((model_key, text, int(arr.shape[0]), arr.tobytes()))
        if not rows:
            return
        with self._lock:
            conn = self._connect()
            if conn is None:
                return
            try:
                with conn:
                    for row in rows:
                        try:
                            conn.execute("INSERT OR IGNORE INTO embeddings (model_key, text, dim, vector) "
                                         "VALUES (?, ?, ?, ?)", row)
                        except UnicodeEncodeError:  # lone surrogate: keep it in memory only
                            continue
            except sqlite3.Error as exc:
                self._give_up("cannot write", exc)

    # ---------------------------------------------------------------- other
    def close(self) -> None:
        """Close the connection; a later call opens a new one (unless the store is broken)."""
        with self._lock:
            self._drop_connection()

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "broken": self.broken}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self.broken = state["broken"]
        self._conn = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"EmbeddingStore({str(self.path)!r}{', broken' if self.broken else ''})"
