"""parse_many: cache, per-item errors, parallel workers."""

from __future__ import annotations

from sciflow.config import Config
from sciflow.runs.parse_batch import IMAGE_SUFFIXES, parse_many

from .drawing import Canvas


def _files(tmp_path):
    c = Canvas(620, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 420, 50)
    c.arrow([(180, 75), (420, 75)])
    good = tmp_path / "good.png"
    c.img.save(good)
    bad = tmp_path / "bad.png"
    bad.write_text("not an image")
    return [good, bad]


def test_cache_and_errors(tmp_path):
    paths = _files(tmp_path)
    cache = tmp_path / "cache"
    seen = []
    out = parse_many(paths, Config(), jobs=1, cache_dir=cache, on_done=seen.append)
    assert [o.item_id for o in out] == ["good", "bad"] and len(seen) == 2
    assert out[0].error is None and not out[0].cached and out[0].backends["text_spotter"] == "rapidocr"
    assert {n.label for n in out[0].graph.nodes} == {"Encoder", "Decoder"}
    assert out[1].graph is None and "unreadable image" in out[1].error and "bad.png" in out[1].error
    again = parse_many(paths, Config(), jobs=1, cache_dir=cache)
    assert again[0].cached and again[0].graph == out[0].graph
    assert not again[1].cached
    assert ".png" in IMAGE_SUFFIXES and ".svg" in IMAGE_SUFFIXES


def test_parallel_workers(tmp_path):
    paths = _files(tmp_path)
    out = parse_many(paths, Config(), jobs=2)
    assert out[0].graph is not None and out[1].error is not None


def test_debug_overlays_are_drawn_on_a_cache_hit_too(tmp_path):
    paths = _files(tmp_path)[:1]
    cache = tmp_path / "cache"
    first = parse_many(paths, Config(), jobs=1, cache_dir=cache)
    debug = tmp_path / "debug"
    again = parse_many(paths, Config(), jobs=1, cache_dir=cache, debug_dir=debug)
    assert sorted(p.name for p in debug.glob("good.*.png"))[0] == "good.1_text_spotter.png"
    assert len(list(debug.glob("good.*_topology_coder.png"))) == 1
    assert again[0].graph == first[0].graph  # parsed again, the same graph
