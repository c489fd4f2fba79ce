"""The diagram-element detector: dataset boxes, augmentations, ONNX post-processing, and a
tiny model trained, exported and loaded through both Layout Detector backends."""

from __future__ import annotations

import importlib.util
import json
import os
import random

import numpy as np
import pytest

from sciflow.agents import layout
from sciflow.bench.detector import CLASSES
from sciflow.bench.detector.augment import background_panels, blur, colour_shift, jpeg, noise, rescale
from sciflow.bench.detector.dataset import clip_boxes, crop_window, render_item, write_dataset, yolo_lines

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("YOLO_OFFLINE", "1")


def ink(image: np.ndarray) -> np.ndarray:
    """Drawn strokes and glyphs: darker than every pastel fill the renderers use (min >= 204)."""
    return image.min(axis=2) < 190


def _band(mask: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> bool:
    h, w = mask.shape
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    return x1 > x0 and y1 > y0 and bool(mask[y0:y1, x0:x1].any())


@pytest.mark.parametrize("seed", range(8))
def test_every_label_box_lies_on_its_drawn_element(seed):
    item = render_item(seed, augmented=False)  # native resolution: thin grey outlines stay ink
    assert item.boxes, "a render without elements"
    m = ink(item.image)
    t = 3  # px tolerance: anti-aliasing and outline width
    for cls, (x0f, y0f, x1f, y1f) in item.boxes:
        x0, y0, x1, y1 = int(x0f), int(y0f), int(np.ceil(x1f)), int(np.ceil(y1f))
        assert _band(m, x0, y0, x1, y1), f"{cls} box {(x0, y0, x1, y1)} holds no ink"
        if cls in ("node", "group", "operator"):
            # the outline touches all four sides of the box (ellipses and diamonds at their extremes)
            assert _band(m, x0 - t, y0, x0 + t, y1), f"{cls} left side"
            assert _band(m, x1 - t, y0, x1 + t, y1), f"{cls} right side"
            assert _band(m, x0, y0 - t, x1, y0 + t), f"{cls} top side"
            assert _band(m, x0, y1 - t, x1, y1 + t), f"{cls} bottom side"
        elif cls == "text":
            # glyphs start and end at the box's left and right edges
            assert _band(m, x0 - t, y0, x0 + t + 2, y1), "text left edge"
            assert _band(m, x1 - t - 2, y0, x1 + t, y1), "text right edge"
        elif cls == "arrowhead":
            assert m[y0:y1, x0:x1].mean() > 0.05, "arrowhead box mostly blank"


def test_both_styles_and_operators_are_rendered():
    styles = {render_item(s, augmented=False).style for s in range(12)}
    assert styles == {"graphviz", "pillow"}
    classes = {c for s in range(40) for c, _ in render_item(s, augmented=False).boxes}
    assert {"node", "arrowhead", "text", "operator", "group"} <= classes


def test_yolo_lines_are_normalised_centre_size():
    lines = yolo_lines([("arrowhead", (10.0, 20.0, 30.0, 60.0))], width=100, height=200)
    assert lines == ["1 0.200000 0.200000 0.200000 0.200000"]


def test_clip_and_crop_keep_boxes_exact():
    boxes = [("node", (-5.0, 10.0, 50.0, 40.0)), ("text", (98.0, 0.0, 120.0, 1.0))]
    assert clip_boxes(boxes, 100, 100) == [("node", (0.0, 10.0, 50.0, 40.0))]
    img = np.zeros((100, 200, 3), np.uint8)
    out, kept = crop_window(img, [("node", (90.0, 10.0, 130.0, 30.0)), ("text", (10.0, 10.0, 60.0, 20.0))],
                            (100, 0, 200, 100))
    assert out.shape == (100, 100, 3)
    assert kept == [("node", (0.0, 10.0, 30.0, 30.0))]  # 75% visible: kept, clipped; the text is outside


def test_augmentations_keep_or_scale_boxes():
    item = render_item(3, augmented=False)
    rng = random.Random(0)
    for fn in (jpeg, blur, noise, colour_shift, background_panels):
        img, boxes = fn(item.image, item.boxes, rng)
        assert img.shape == item.image.shape and img.dtype == np.uint8
        assert boxes == item.boxes
    img, boxes = rescale(item.image, item.boxes, 0.5)
    assert abs(img.shape[1] - item.image.shape[1] / 2) <= 1
    b0, b1 = item.boxes[0][1], boxes[0][1]
    assert b1[2] == pytest.approx(b0[2] * img.shape[1] / item.image.shape[1])


def test_panels_tint_only_the_page():
    item = render_item(5, augmented=False)
    img, _ = background_panels(item.image, item.boxes, random.Random(1))
    changed = np.any(img != item.image, axis=2)
    assert changed.any()
    assert np.all(item.image[changed] >= 245)  # only near-white page pixels were tinted


def test_write_dataset_layout_and_determinism(tmp_path):
    s1 = write_dataset(tmp_path / "a", 6, seed=3, val_fraction=0.34)
    s2 = write_dataset(tmp_path / "b", 6, seed=3, val_fraction=0.34)
    assert s1 == s2
    assert s1["images"] == {"val": 2, "train": 4}
    data = (tmp_path / "a" / "data.yaml").read_text()
    assert "train: images/train" in data and "4: operator" in data
    counted = {c: 0 for c in CLASSES}
    for split in ("train", "val"):
        for lab in sorted((tmp_path / "a" / "labels" / split).glob("*.txt")):
            assert lab.read_text() == (tmp_path / "b" / "labels" / split / lab.name).read_text()
            imgs = list((tmp_path / "a" / "images" / split).glob(lab.stem + ".*"))
            assert len(imgs) == 1
            for line in lab.read_text().strip().splitlines():
                c, *xywh = line.split()
                counted[CLASSES[int(c)]] += 1
                assert all(0.0 <= float(v) <= 1.0 for v in xywh)
    total = {c: s1["boxes"]["train"][c] + s1["boxes"]["val"][c] for c in CLASSES}
    assert counted == total
    assert json.loads((tmp_path / "a" / "dataset.json").read_text()) == s1


def test_write_dataset_rejects_too_few(tmp_path):
    with pytest.raises(ValueError, match="at least 2"):
        write_dataset(tmp_path, 1)


# --- ONNX post-processing -------------------------------------------------------------


def test_tiles_cover_the_image_with_overlap():
    assert layout.tiles(600, 400, 640, 0.2) == [(0, 0, 640, 640)]
    ts = layout.tiles(1500, 700, 640, 0.2)
    xs, ys = sorted({t[0] for t in ts}), sorted({t[1] for t in ts})
    assert xs == [0, 512, 860] and ys == [0, 60]  # the last window ends at the image edge
    assert all(t[2] - t[0] == 640 and t[3] - t[1] == 640 for t in ts)
    covered = np.zeros((700, 1500), bool)
    for x0, y0, x1, y1 in ts:
        covered[y0:y1, x0:x1] = True
    assert covered.all()


def test_training_tile_has_the_text_scale_and_tile_size():
    from sciflow.bench.detector.dataset import text_height, training_tile

    item = render_item(4, augmented=False)
    whole = training_tile(item, 4, tile=1400, text_px=20.0, augmented=False)  # the whole render fits
    assert whole.image.shape == (1400, 1400, 3)
    assert text_height(whole.boxes) == pytest.approx(20.0, abs=0.05)
    assert len(whole.boxes) == len(item.boxes)
    assert np.all(whole.image[1300:, 1300:] == 255)  # page padding
    tile = training_tile(item, 4, tile=320, text_px=20.0, augmented=False)
    assert tile.image.shape == (320, 320, 3)
    assert all(0 <= b[0] < b[2] <= 320 and 0 <= b[1] < b[3] <= 320 for _, b in tile.boxes)


def test_nms_keeps_best_of_overlapping_boxes():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60]], float)
    assert layout.nms(boxes, np.array([0.5, 0.9, 0.7]), 0.5) == [1, 2]
    assert layout.nms(boxes, np.array([0.9, 0.9, 0.7]), 0.5) == [0, 2]  # ties: lower index first


def test_decode_maps_letterboxed_boxes_back():
    # one anchor of class 1 (score 0.9) centred at (40, 30) size 20x10 on a canvas scaled 0.5, padded (0, 10)
    out = np.zeros((1, 4 + 3, 2), np.float32)
    out[0, :4, 0] = [40, 30, 20, 10]
    out[0, 4 + 1, 0] = 0.9
    out[0, 4 + 0, 1] = 0.1  # below conf
    b, s, c = layout.decode(out, conf=0.3, iou=0.6, scale=0.5, pad=(0.0, 10.0))
    assert c.tolist() == [1] and s.tolist() == pytest.approx([0.9])
    assert b[0].tolist() == pytest.approx([60.0, 30.0, 100.0, 50.0])


def test_letterbox_scale_and_padding():
    canvas, scale, pad = layout.letterbox(np.zeros((100, 400, 3), np.uint8), 200)
    assert canvas.shape == (200, 200, 3) and scale == 0.5 and pad == (0.0, 75.0)
    assert canvas[0, 0].tolist() == [114, 114, 114] and canvas[100, 100].tolist() == [0, 0, 0]


def test_onnx_backend_missing_weights_is_clear(tmp_path):
    with pytest.raises(RuntimeError, match="does not exist"):
        layout.BACKENDS.create("yolo_onnx", {"weights": str(tmp_path / "none.onnx")})


# --- a tiny model, trained for real ---------------------------------------------------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    if importlib.util.find_spec("ultralytics") is None:
        pytest.skip("ultralytics (the `detector` extra) is not installed")
    from sciflow.bench.detector.train import TrainConfig, train

    root = tmp_path_factory.mktemp("det")
    write_dataset(root / "data", 4, seed=11, val_fraction=0.5, tile=128, text_px=12.0)
    config = TrainConfig(data=str(root / "data"), epochs=1, imgsz=128, width=0.0625, batch=2, seed=0)
    meta = train(config, root / "run")
    return root / "run", meta


def test_tiny_training_records_config_and_exports(tiny_run):
    run, meta = tiny_run
    record = json.loads((run / "train_config.json").read_text())
    assert record["config"]["seed"] == 0 and record["config"]["width"] == 0.0625
    assert record["dataset"]["n"] == 4 and "ultralytics" in record["versions"]
    assert (run / "model.yaml").is_file() and (run / "weights" / "last.pt").is_file()
    assert meta["classes"] == list(CLASSES) and meta["imgsz"] == 128 and meta["text_px"] == 12.0
    assert meta["epochs_completed"] == 1
    from sciflow.format.hashing import file_sha256

    assert meta["onnx_sha256"] == file_sha256(run / "layout-detector.onnx")
    assert 0.0 <= meta["validation"]["mAP50"] <= 1.0


def test_tiny_model_runs_in_both_layout_backends(tiny_run):
    from sciflow.config import load_config
    from sciflow.pipeline import Parser

    run, meta = tiny_run
    item = render_item(2, augmented=False)
    onnx = layout.BACKENDS.create("yolo_onnx", {"weights": str(run / "layout-detector.onnx"), "conf": 0.0})
    boxes = onnx.detect(item.image, text_height=30.0)
    assert boxes == onnx.detect(item.image, text_height=30.0)  # deterministic
    assert onnx.scale_for(item.image, 30.0) == pytest.approx(12.0 * 1.5 / 30.0)
    assert onnx.scale_for(item.image, None) == pytest.approx(128 / max(item.image.shape[:2]))
    h, w = item.image.shape[:2]
    assert all(0 <= b.bbox[0] <= b.bbox[2] <= w and 0 <= b.bbox[1] <= b.bbox[3] <= h for b in boxes)
    assert {b.cls for b in boxes} <= set(CLASSES)
    assert onnx.fingerprint()["sha256"] == meta["onnx_sha256"][:16]
    ultra = layout.BACKENDS.create("ultralytics", {"weights": str(run / "weights" / "best.pt"), "conf": 0.0})
    assert all(b.cls in CLASSES for b in ultra.detect(item.image))
    table = {"backend": "yolo_onnx", "yolo_onnx": {"weights": str(run / "layout-detector.onnx")}}
    cfg = load_config(overrides={"parser": {"layout": table}})
    p = Parser(cfg)
    assert p.backends["layout"] == "yolo_onnx"
    assert p.fingerprint()["models"]["layout"]["sha256"] == meta["onnx_sha256"][:16]


def test_mismatched_metadata_is_refused(tiny_run, tmp_path):
    run, _ = tiny_run
    (tmp_path / "m.onnx").write_bytes((run / "layout-detector.onnx").read_bytes())
    meta = json.loads((run / "layout-detector.json").read_text())
    (tmp_path / "m.json").write_text(json.dumps(dict(meta, onnx_sha256="0" * 64)))
    with pytest.raises(RuntimeError, match="mismatched"):
        layout.BACKENDS.create("yolo_onnx", {"weights": str(tmp_path / "m.onnx")})


def test_model_card_is_rendered_from_metadata(tiny_run):
    from sciflow.bench.detector.card import render_card

    _, meta = tiny_run
    card = render_card(meta)
    assert meta["onnx_sha256"] in card and meta["pt_sha256"] in card
    assert "| node |" in card and "mAP50" in card
    assert "1 of 1 epochs" in card
    with_eval = render_card(dict(meta, evaluation={"summary": "better", "header": ["a"], "rows": [["1"]]}))
    assert "## Effect on the parser" in with_eval and "| 1 |" in with_eval


def test_arrowhead_boxes_are_padded_squares_around_the_head():
    from sciflow.bench.detector.dataset import pad_arrowheads

    boxes = [("arrowhead", (100.0, 100.0, 110.0, 106.0)), ("node", (0.0, 0.0, 50.0, 20.0)),
             ("arrowhead", (0.0, 0.0, 40.0, 30.0))]
    out = pad_arrowheads(boxes, 24.0)
    assert out[0] == ("arrowhead", (93.0, 91.0, 117.0, 115.0))  # 24 px square on the head's centre
    assert out[1] == boxes[1]
    assert out[2] == ("arrowhead", (0.0, -5.0, 40.0, 35.0))  # a big head keeps its larger side
    item = render_item(6, augmented=False)
    from sciflow.bench.detector.dataset import training_tile

    tile = training_tile(item, 6, tile=640, text_px=20.0, augmented=False)
    heads = [b for c, b in tile.boxes if c == "arrowhead"]
    assert heads and all(b[2] - b[0] >= 23.9 or b[0] == 0 or b[2] == 640 for b in heads)


def test_merge_tiles_rebuilds_cut_elements_and_drops_duplicates():
    boxes = np.array([
        [100, 50, 300, 90],   # left piece of a wide node, cut at x=300 (tile A's right edge)
        [180, 52, 420, 91],   # right piece, cut at x=180 (tile B's left edge)
        [500, 50, 540, 70],   # a small node seen whole by tile B ...
        [501, 50, 541, 70],   # ... and whole again by tile C
        [150, 60, 170, 80],   # an arrowhead inside the node's span: another class, untouched
    ], float)
    scores = np.array([0.8, 0.9, 0.7, 0.6, 0.9])
    classes = np.array([0, 0, 0, 0, 1])
    cut = np.array([True, True, False, False, False])
    b, s, c, k = layout.merge_tiles(boxes, scores, classes, cut, iou=0.6)
    got = sorted((int(ci), tuple(bi.tolist()), float(si)) for bi, si, ci in zip(b, s, c, strict=True))
    assert got == [(0, (100.0, 50.0, 420.0, 91.0), 0.9), (0, (500.0, 50.0, 540.0, 70.0), 0.7),
                   (1, (150.0, 60.0, 170.0, 80.0), 0.9)]
    # two different nodes side by side in one tile are never merged (neither is a fragment)
    two = np.array([[0, 0, 100, 40], [90, 0, 200, 40]], float)
    b, *_ = layout.merge_tiles(two, np.array([0.9, 0.9]), np.array([0, 0]), np.array([False, False]), iou=0.6)
    assert len(b) == 2


# --- the shipped detector ---------------------------------------------------------------


def test_shipped_card_and_hash_match_the_weights():
    from sciflow.bench.detector.card import render_card
    from sciflow.format.hashing import file_sha256

    weights = layout.shipped_weights()
    meta = json.loads(weights.with_name("layout-detector.json").read_text())
    assert file_sha256(weights) == meta["onnx_sha256"]
    assert weights.with_name("README.md").read_text() == render_card(meta)  # sciflow.bench.detector.card


def test_shipped_detector_finds_nodes_and_arrowheads_on_a_clean_render():
    from sciflow.bench.detector.dataset import ARROWHEAD_SIDE, pad_arrowheads, text_height
    from sciflow.bench.detector.evaluate import match

    det = layout.BACKENDS.create("yolo_onnx", {})
    totals: dict[str, list[int]] = {}
    for seed in (101, 102, 103):
        item = render_item(seed, augmented=False)
        th = text_height(item.boxes)
        boxes = det.detect(item.image, th * det.ocr_line_ratio)
        for c, v in match(boxes, pad_arrowheads(item.boxes, ARROWHEAD_SIDE * th)).items():
            totals[c] = [x + y for x, y in zip(totals.get(c, [0, 0, 0]), v, strict=True)]
    for cls in ("node", "arrowhead", "text"):
        tp, npred, ntruth = totals[cls]
        assert tp >= 0.8 * ntruth and tp >= 0.8 * npred, (cls, totals[cls])


def test_style_shares_choose_the_renderer(tmp_path):
    from sciflow.bench.detector.dataset import parse_shares, write_dataset

    assert parse_shares("graphviz=1,pillow=3") == {"graphviz": 0.25, "pillow": 0.75}
    with pytest.raises(ValueError, match="expected STYLE=SHARE"):
        parse_shares("dalle=1")
    summary = write_dataset(tmp_path / "pil", 3, seed=2, shares=parse_shares("pillow=1"))
    assert summary["styles"] == {"pillow": 3}
    assert summary["style_shares"] == {"pillow": 1.0}
