"""``arrowtail`` boxes (detector v2): exact tail points on drawn ink in all four styles, the
head/tail protocol, tail squares in training tiles, the parser's use of detected tails, and
resuming a training schedule from a checkpoint kept outside its run folder."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil

import numpy as np
import pytest

from sciflow.agents.diagram import Diagram, LayoutBox
from sciflow.agents.topology_coder.attach import Contact
from sciflow.agents.topology_coder.heads import detected_head
from sciflow.bench.detector.dataset import render_item, training_tile, write_dataset
from sciflow.bench.detector.tails import record_tails

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")

SOURCES = ("node", "operator", "group", "text")


def _browser_unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    from sciflow.bench.synth import mermaid_render
    from sciflow.bench.synth.browser import BrowserUnavailable, chromium_path

    try:
        chromium_path()
        mermaid_render.bundle_path()
    except BrowserUnavailable as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _browser_unavailable()
    if reason:
        pytest.skip(f"browser styles unavailable: {reason}")
    from sciflow.bench.synth.browser import Browser

    with Browser() as b:
        yield b


def _check_tails_on_ink(item, near_source: float | None) -> int:
    """Every tail box holds ink of a drawn stroke (within 2 px of its point) and, when
    ``near_source`` is given, lies within that many px of an element box it can leave from."""
    m = item.image.min(axis=2) < 190
    sources = [b for c, b in item.boxes if c in SOURCES]
    n = 0
    for cls, b in item.boxes:
        if cls != "arrowtail":
            continue
        n += 1
        x, y = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        win = m[max(0, int(y) - 2) : int(y) + 4, max(0, int(x) - 2) : int(x) + 4]
        assert win.any(), f"{item.style} tail at ({x:.1f}, {y:.1f}) on no ink"
        if near_source is not None:
            gap = min(np.hypot(max(s[0] - x, 0, x - s[2]), max(s[1] - y, 0, y - s[3])) for s in sources)
            assert gap <= near_source, f"{item.style} tail at ({x:.1f}, {y:.1f}) is {gap:.1f} px from any element"
    return n


@pytest.mark.parametrize("style", ["graphviz", "pillow"])
def test_tail_boxes_lie_on_their_connectors_ink(style):
    n = 0
    for seed in range(10):
        item = render_item(seed, augmented=False, shares={style: 1.0})
        # Pillow's free-text sources are drawn without a box: the tail is on the text's layout box
        n += _check_tails_on_ink(item, 4.0 if style == "graphviz" else None)
        heads = sum(1 for c, _ in item.boxes if c == "arrowhead")
        tails = sum(1 for c, _ in item.boxes if c == "arrowtail")
        assert tails == heads  # every connector of these styles has exactly one head
    assert n > 20


@pytest.mark.parametrize("style", ["mermaid", "paper"])
def test_browser_style_tail_boxes_lie_on_ink(style, browser):
    n = 0
    for seed in range(6 if style == "mermaid" else 12):
        n += _check_tails_on_ink(render_item(seed, augmented=False, shares={style: 1.0}, browser=browser),
                                 4.0 if style == "mermaid" else None)
    assert n > 10


def test_tails_follow_the_protocol():
    arrows = [
        {"polyline": [[1, 2], [5, 6]], "head_style": "filled", "double": False},
        {"polyline": [[3, 4], [7, 8]], "head_style": "none", "double": False},  # a plain line: no tail
        {"polyline": [[5, 6], [9, 9]], "head_style": "arrow", "double": True},  # heads at both ends: no tail
        {"polyline": [[6, 6], [9, 9]], "head_style": "open", "double": False, "route": "brace"},
    ]
    assert record_tails({"arrows": arrows}) == [(1.0, 2.0)]


def test_training_tiles_pad_tails_to_head_squares():
    item = render_item(6, augmented=False)
    tile = training_tile(item, 6, tile=640, text_px=20.0, augmented=False)
    tails = [b for c, b in tile.boxes if c == "arrowtail"]
    assert tails
    assert all(b[2] - b[0] >= 23.9 or b[0] == 0 or b[2] == 640 for b in tails)


def _contact_diagram(boxes: list[LayoutBox]) -> Diagram:
    d = Diagram(image=np.full((100, 100, 3), 255, np.uint8))
    d.layout = boxes
    return d


def test_a_detected_tail_vetoes_a_geometric_head_unless_a_head_is_detected():
    tail = LayoutBox((40.0, 40.0, 60.0, 60.0), "arrowtail", 0.8)
    head = LayoutBox((42.0, 42.0, 58.0, 58.0), "arrowhead", 0.6)
    ct = Contact(0, 0, 50.0, 50.0, head=True, margin=0.9)
    detected_head(_contact_diagram([tail]), ct, th=10.0, limit=100.0, head=0.9, min_conf=0.5, veto_margin=0.0)
    assert not ct.head
    ct = Contact(0, 0, 50.0, 50.0, head=True, margin=0.9)
    detected_head(_contact_diagram([tail, head]), ct, th=10.0, limit=100.0, head=0.9, min_conf=0.5, veto_margin=0.0)
    assert ct.head
    weak = LayoutBox((40.0, 40.0, 60.0, 60.0), "arrowtail", 0.3)
    ct = Contact(0, 0, 50.0, 50.0, head=True, margin=0.9)
    detected_head(_contact_diagram([weak]), ct, th=10.0, limit=100.0, head=0.9, min_conf=0.5, veto_margin=0.0)
    assert ct.head
    ct = Contact(0, 0, 50.0, 50.0)
    detected_head(_contact_diagram([head]), ct, th=10.0, limit=100.0, head=0.9, min_conf=0.5, veto_margin=0.0)
    assert ct.head  # a detected head still adds a head


def test_resume_from_a_checkpoint_kept_outside_the_run(tmp_path):
    if importlib.util.find_spec("ultralytics") is None:
        pytest.skip("ultralytics (the `detector` extra) is not installed")
    from sciflow.bench.detector.train import TrainConfig, epochs_done_in, keep_checkpoint, prepare_resume, train
    from sciflow.cli import main as cli

    write_dataset(tmp_path / "data", 4, seed=11, val_fraction=0.5, tile=128, text_px=12.0)
    config = TrainConfig(data=str(tmp_path / "data"), epochs=2, imgsz=128, width=0.0625, batch=2, seed=0)
    first = train(config, tmp_path / "day1", stop_after_epochs=1)
    assert first == {"stopped": True, "epochs_completed": 1}
    # "commit" the checkpoint and its record under new names, delete the first run
    kept = tmp_path / "models"
    kept.mkdir()
    pt, record = keep_checkpoint(tmp_path / "day1", kept / "det")
    assert pt.name == "det.last.pt" and json.loads(record.read_text())["epochs_completed"] == 1
    shutil.rmtree(tmp_path / "day1")
    prepare_resume(pt, tmp_path / "day2")
    assert epochs_done_in(tmp_path / "day2") == 1
    # the CLI's --resume continues the recorded 2-epoch schedule (its --epochs default is ignored)
    rc = cli(["detector", "train", "--data", str(tmp_path / "data"), "-o", str(tmp_path / "day2"), "--resume",
              "--imgsz", "128", "--batch", "2"])
    assert rc == 0
    meta = json.loads((tmp_path / "day2" / "layout-detector.json").read_text())
    assert meta["epochs_completed"] == 2 and meta["train_config"]["epochs"] == 2
    # the resumed run adds its time to the recorded one (rounded to 0.1 s: a fast machine may
    # add less than that, so no strict inequality)
    assert meta["training_seconds"] >= json.loads(record.read_text())["previous_seconds"] >= 0
    assert (tmp_path / "day2" / "layout-detector.onnx").is_file()
    assert "arrowtail" in meta["classes"]


def test_shipped_v2_card_hash_and_checkpoint_match():
    from sciflow.agents import layout
    from sciflow.bench.detector.card import render_card
    from sciflow.format.hashing import file_sha256

    weights = layout.resolve_weights("layout-detector-v2.onnx")
    if not weights.is_file():
        pytest.skip("layout-detector-v2 is not shipped in this tree")
    meta = json.loads(weights.with_suffix(".json").read_text())
    assert file_sha256(weights) == meta["onnx_sha256"] and "arrowtail" in meta["classes"]
    assert weights.with_suffix(".md").read_text() == render_card(meta)
    ckpt = weights.with_name(meta["resume_checkpoint"]["file"])
    assert file_sha256(ckpt) == meta["resume_checkpoint"]["sha256"]
    assert ckpt.stat().st_size <= 10 * 2**20
    record = json.loads(weights.with_name(meta["resume_checkpoint"]["record"]).read_text())
    assert record["config"]["epochs"] == meta["train_config"]["epochs"]
    assert record["epochs_completed"] == meta["resume_checkpoint"]["epoch"]
    assert layout.BACKENDS.create("yolo_onnx", {"weights": "layout-detector-v2.onnx"}).classes == meta["classes"]
