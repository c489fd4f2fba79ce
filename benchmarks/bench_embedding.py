"""Cold MiniLM encoding: one string at a time (what sciflow does) against batches.

    .venv/bin/python benchmarks/bench_embedding.py [--n 200] [--batch-sizes 8,32,128] [--threads 1] [--device cpu]

Labels are the distinct node and edge labels of ``sciflow/data/sciflow-bench-60/*.json`` (the first N in a
fixed shuffled order). For each method every label is encoded once from cold (no cache; the
model is loaded and warmed up on an unrelated string first) and the script prints ms per
label, then compares the embeddings with the batch-of-one ones:

- ``max |diff| emb``: largest absolute difference of an embedding coordinate;
- ``max |diff| sim``: largest absolute difference of a label-label cosine before rounding;
- ``rounded sims differing``: entries of the N x N similarity matrix that differ after
  sciflow's clip-and-round to 1e-6 (:data:`sciflow.models.embedding.SIMILARITY_DECIMALS`), i.e. score
  changes. Batching is safe for sciflow's bit-identical scores only when this is 0 for every
  batch size, on every label set.

Methods: ``single`` (batch of one, no padding), ``batch-B`` (sentence-transformers batches of B,
each padded to its longest string) and ``bucket-B`` (batches of B strings with the same token
count, so nothing is padded; only the batch dimension differs from batch-of-one).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from sciflow.models.embedding import SIMILARITY_DECIMALS, get_embedder

ROOT = Path(__file__).resolve().parents[1]


def reference_labels(n: int, seed: int = 0) -> list[str]:
    labels: set[str] = set()
    for f in sorted((ROOT / "sciflow" / "data" / "sciflow-bench-60").glob("*.json")):
        d = json.loads(f.read_text("utf-8"))
        labels.update(x["label"] for x in d.get("nodes", []) if x.get("label"))
        labels.update(x["label"] for x in d.get("edges", []) if x.get("label"))
    out = sorted(labels)
    random.Random(seed).shuffle(out)
    return out[:n] if n > 0 else out


def encode_single(model, texts: Sequence[str]) -> np.ndarray:
    return np.stack([
        model.encode([t], batch_size=1, convert_to_numpy=True, normalize_embeddings=True,
                     show_progress_bar=False)[0].astype(np.float64)
        for t in texts
    ])


def encode_batched(model, texts: Sequence[str], batch_size: int) -> np.ndarray:
    return model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
                        show_progress_bar=False).astype(np.float64)


def encode_buckets(model, texts: Sequence[str], batch_size: int) -> np.ndarray:
    """Batches of strings with the same token count: no padding anywhere."""
    by_len: dict[int, list[int]] = {}
    for i, t in enumerate(texts):
        by_len.setdefault(len(model.tokenizer(t)["input_ids"]), []).append(i)
    parts: dict[int, np.ndarray] = {}
    for idx in by_len.values():
        for k in range(0, len(idx), batch_size):
            part = idx[k:k + batch_size]
            parts.update(zip(part, encode_batched(model, [texts[i] for i in part], batch_size), strict=True))
    return np.stack([parts[i] for i in range(len(texts))])


def rounded_sims(e: np.ndarray) -> np.ndarray:
    return np.round(np.clip(e @ e.T, 0.0, 1.0), SIMILARITY_DECIMALS)


def timed(fn: Callable[[], np.ndarray]) -> tuple[np.ndarray, float]:
    t = time.perf_counter()
    e = fn()
    return e, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200, help="labels (0 = all distinct reference labels)")
    ap.add_argument("--batch-sizes", default="8,32,128")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=0, help="> 0: torch.set_num_threads (as a capped worker does)")
    args = ap.parse_args()
    if args.threads > 0:
        import torch

        torch.set_num_threads(args.threads)
    labels = reference_labels(args.n, args.seed)
    t = time.perf_counter()
    model = get_embedder("minilm", args.device).model
    print(f"model load {time.perf_counter() - t:.2f} s; {len(labels)} labels; device {args.device}; "
          f"torch threads {__import__('torch').get_num_threads()}")
    model.encode(["warm-up string unrelated to the labels"], show_progress_bar=False)

    single, secs = timed(lambda: encode_single(model, labels))
    ref_sims = rounded_sims(single)
    print(f"{'method':>14} {'ms/label':>9} {'max |diff| emb':>15} {'max |diff| sim':>15}  rounded sims differing")
    print(f"{'single':>14} {1000 * secs / len(labels):9.2f} {0.0:15.3g} {0.0:15.3g}  0")

    def row(name: str, emb: np.ndarray, secs: float) -> None:
        d_emb = float(np.abs(emb - single).max())
        d_sim = float(np.abs(emb @ emb.T - single @ single.T).max())
        n_diff = int((rounded_sims(emb) != ref_sims).sum())
        print(f"{name:>14} {1000 * secs / len(labels):9.2f} {d_emb:15.3g} {d_sim:15.3g}  {n_diff} of {ref_sims.size}")

    row("single again", *timed(lambda: encode_single(model, labels)))  # run-to-run noise of the current method
    for bs in (int(x) for x in args.batch_sizes.split(",")):
        for name, fn in ((f"batch-{bs}", encode_batched), (f"bucket-{bs}", encode_buckets)):
            row(name, *timed(lambda fn=fn, bs=bs: fn(model, labels, bs)))


if __name__ == "__main__":
    main()
