"""The Shape Hunter's ``sam`` backend with a tiny SAM built, saved and loaded by the test (no
SAM weights can be downloaded here), its mask -> Shape conversion, and its errors."""

from __future__ import annotations

import hashlib
import importlib.util

import cv2
import numpy as np
import pytest

from sciflow.agents import shape_hunter as sh
from sciflow.agents.diagram import Diagram, Shape, TextBox, TextLabel
from sciflow.config import ConfigError, load_config
from sciflow.pipeline import Parser

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("segment_anything") is None, reason="segment-anything is not installed"
)

# A ~70k-parameter SAM: one encoder block (global attention), one decoder block.
TINY = {
    "image_size": 128,
    "patch_size": 16,
    "encoder_embed_dim": 32,
    "encoder_depth": 1,
    "encoder_num_heads": 1,
    "encoder_global_attn_indexes": [0],
    "encoder_window_size": 4,
    "encoder_mlp_ratio": 2.0,
    "prompt_embed_dim": 32,
    "mask_in_chans": 4,
    "decoder_depth": 1,
    "decoder_mlp_dim": 32,
    "decoder_num_heads": 2,
    "iou_head_depth": 1,
    "iou_head_hidden_dim": 16,
}
# a random model's masks pass no quality threshold: keep them all
LOOSE = {"points_per_side": 4, "pred_iou_thresh": 0.0, "stability_score_thresh": 0.0, "prompt_min_score": -1e9}


def _save_tiny(path, seed: int = 7, arch=TINY):
    import torch

    torch.manual_seed(seed)
    model = sh.build_sam("custom", arch)
    torch.save(model.state_dict(), path)
    return model


def _sam_cfg(ckpt, **extra):
    sam = {"checkpoint": str(ckpt), "model_type": "custom", "custom": TINY, **LOOSE, **extra}
    parser = {"agents": ["shape_hunter"], "shape_hunter": {"backend": "sam", "sam": sam}}
    return load_config(overrides={"parser": parser})


def _diagram():
    """A rendered 3-node diagram with exact text boxes from the renderer (no OCR needed)."""
    from sciflow.bench.synth import pillow_render

    synth = pillow_render.generate(3, n=3)
    texts = [b for cls, b in synth.elements if cls == "text"]
    d = Diagram(image=synth.image)
    d.text_lines = [TextBox(i, f"t{i}", tuple(b), 1.0) for i, b in enumerate(texts)]
    d.text_labels = [TextLabel(i, f"t{i}", tuple(b), 1.0, (i,)) for i, b in enumerate(texts)]
    return d


def _rect_image(h=120, w=160, fill=(200, 220, 250)):
    img = np.full((h, w, 3), 255, np.uint8)
    img[30:70, 40:120] = fill
    return img


# ------------------------------------------------------------------ (a) the real model path


def test_tiny_sam_checkpoint_runs_through_the_parser_config(tmp_path, monkeypatch):
    import torch

    ckpt = tmp_path / "tiny_sam.pth"
    model = _save_tiny(ckpt)
    parser = Parser(_sam_cfg(ckpt))
    agent = parser.agents["shape_hunter"]
    backend = agent.backend
    assert parser.backends == {"shape_hunter": "sam"}
    assert isinstance(backend, sh.SAMShapes)

    # the checkpoint's weights were loaded (not a fresh random init), and the fingerprint names them
    loaded = backend.sam.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in model.state_dict().items())
    fp = parser.fingerprint()["models"]["shape_hunter"]
    assert fp["checkpoint_sha256"] == hashlib.sha256(ckpt.read_bytes()).hexdigest()
    assert fp["model_type"] == "custom" and fp["arch"]["encoder_embed_dim"] == 32
    # the device is a runtime setting: it reaches the model, not the fingerprint
    on_cpu = Parser(_sam_cfg(ckpt), device="cpu")
    assert on_cpu.agents["shape_hunter"].backend.device == "cpu"
    assert on_cpu.fingerprint() == parser.fingerprint()

    # count the masks the model produced on both paths (text prompts and automatic grid)
    calls = {"prompted": 0, "automatic": 0}
    real_predict, real_generate = backend.predictor.predict, backend.generator.generate

    def predict(*a, **k):
        out = real_predict(*a, **k)
        calls["prompted"] += len(out[0])
        return out

    def generate(image):
        out = real_generate(image)
        calls["automatic"] += len(out)
        return out

    monkeypatch.setattr(backend.predictor, "predict", predict)
    monkeypatch.setattr(backend.generator, "generate", generate)

    runs = []
    for _ in range(2):
        d = _diagram()
        agent.run(d)
        runs.append(d.shapes)
    assert calls["prompted"] == 2 * 3 * len(d.text_lines)  # 3 masks per label, twice
    assert calls["automatic"] > 0
    shapes = runs[0]
    h, w = d.image.shape[:2]
    assert shapes, "this seed's tiny model yields at least one shape"
    for i, s in enumerate(shapes):
        assert isinstance(s, Shape) and s.id == i
        x0, y0, x1, y1 = s.bbox
        assert 0 < x0 < x1 < w and 0 < y0 < y1 < h
        assert s.area >= 150 and 0.0 <= s.confidence <= 1.0
        assert s.parent is None or s.parent in {o.id for o in shapes}
    assert runs[0] == runs[1]
    assert d.evidence["shape_hunter"]["shapes"] == [(s.id, s.kind, s.bbox, s.parent) for s in shapes]

    # loading the same checkpoint again gives the same shapes
    again = sh.BACKENDS.create("sam", {"checkpoint": str(ckpt), "model_type": "custom", "custom": TINY, **LOOSE})
    d = _diagram()
    assert again.find(d.image, d.text_lines) == shapes


def test_text_prompt_keeps_the_smallest_valid_mask_holding_the_label(tmp_path, monkeypatch):
    ckpt = tmp_path / "tiny_sam.pth"
    _save_tiny(ckpt)
    backend = sh.BACKENDS.create(
        "sam", {"checkpoint": str(ckpt), "model_type": "custom", "custom": TINY, **LOOSE, "automatic": False}
    )
    img = np.full((200, 300, 3), 255, np.uint8)
    cv2.rectangle(img, (20, 20), (280, 180), (90, 90, 90), 2)  # a container
    cv2.rectangle(img, (60, 70), (200, 130), (200, 220, 250), -1)  # the node
    label = TextBox(0, "Encoder", (90.0, 92.0, 170.0, 108.0), 1.0)
    text_only = np.zeros((200, 300), bool)
    text_only[92:108, 90:170] = True
    node = np.zeros((200, 300), bool)
    node[70:131, 60:201] = True
    node[92:108, 90:170] = False  # glyphs cut a hole
    container = np.zeros((200, 300), bool)
    container[20:181, 20:281] = True
    seen = []

    def predict(point_coords, point_labels, box, multimask_output):
        seen.append((point_coords.tolist(), point_labels.tolist(), box))
        return np.stack([text_only, node, container]), np.array([0.99, 0.6, 0.9]), None

    monkeypatch.setattr(backend.predictor, "predict", predict)
    shapes = backend.find(img, [label])
    assert seen == [([[130.0, 100.0]], [1], None)]
    assert [(s.kind, s.bbox) for s in shapes] == [("rect", (60.0, 70.0, 201.0, 131.0))]
    assert shapes[0].fill == (200, 220, 250)  # the median of the mask's own pixels (not the hole)
    assert shapes[0].confidence == pytest.approx(0.99 * 0.6)

    # a box prompt when prompt_box_pad > 0; a mask scored under prompt_min_score is not a candidate
    backend.prompt_box_pad = 1.0
    backend.prompt_min_score = 0.7
    seen.clear()
    shapes = backend.find(img, [label])
    assert seen[0][2].tolist() == [74.0, 76.0, 186.0, 124.0]
    assert [s.bbox for s in shapes] == [(20.0, 20.0, 281.0, 181.0)]


def test_label_boxes_are_multi_line_labels_and_lone_lines():
    lines = [TextBox(0, "a", (10, 10, 50, 20), 1.0), TextBox(1, "b", (10, 22, 50, 32), 1.0)]
    lone = TextBox(2, "c", (100, 10, 150, 20), 1.0)
    multi = TextBox(-1, "a b", (10, 10, 50, 32), 1.0)
    assert sh.label_boxes([*lines, lone, multi]) == [multi, lone]
    assert sh.label_boxes([lone]) == [lone]


# ------------------------------------------------------------------ (b) mask -> Shape


def test_mask_to_shape_filled_rectangle():
    img = _rect_image()
    m = np.zeros(img.shape[:2], bool)
    m[30:70, 40:120] = True
    s = sh.mask_to_shape(m, img, min_area=150, score=0.8, shape_id=4)
    assert s is not None
    assert (s.id, s.kind, s.bbox, s.area) == (4, "rect", (40.0, 30.0, 120.0, 70.0), 3200.0)
    assert s.fill == (200, 220, 250)
    assert s.confidence == pytest.approx(0.99 * 0.8)
    # a small rectangle is still a rect (a pixel-centre contour would make it look rounded)
    m = np.zeros(img.shape[:2], bool)
    m[50:64, 60:80] = True
    assert sh.mask_to_shape(m, img, min_area=150).kind == "rect"


@pytest.mark.parametrize(("axes", "kind"), [((50, 25), "ellipse"), ((30, 30), "circle"), ((9, 6), "ellipse")])
def test_mask_to_shape_ellipse_and_circle(axes, kind):
    img = np.full((120, 160, 3), 255, np.uint8)
    m = np.zeros((120, 160), np.uint8)
    cv2.ellipse(m, (80, 60), axes, 0, 0, 360, 1, -1)
    s = sh.mask_to_shape(m, img, min_area=10)
    assert s is not None and s.kind == kind
    ys, xs = np.nonzero(m)
    assert s.bbox == (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


def test_mask_to_shape_drops_small_border_and_text_masks():
    img = _rect_image()
    tiny = np.zeros(img.shape[:2], bool)
    tiny[50:55, 50:60] = True  # 50 px
    assert sh.mask_to_shape(tiny, img, min_area=150) is None
    assert sh.mask_to_shape(tiny, img, min_area=50) is not None
    assert sh.mask_to_shape(np.ones(img.shape[:2], bool), img, min_area=150) is None  # the whole image
    edge = np.zeros(img.shape[:2], bool)
    edge[0:40, 20:80] = True  # touches the border: background
    assert sh.mask_to_shape(edge, img, min_area=150) is None
    word = np.zeros(img.shape[:2], bool)
    word[42:56, 50:110] = True
    line = TextBox(0, "Encoder", (48.0, 40.0, 112.0, 58.0), 1.0)
    assert sh.mask_to_shape(word, img, min_area=150, text_boxes=[line]) is None
    assert sh.mask_to_shape(word, img, min_area=150) is not None


def test_mask_to_shape_largest_component_with_holes_filled():
    img = _rect_image()
    m = np.zeros(img.shape[:2], bool)
    m[30:70, 40:120] = True
    m[40:60, 60:100] = False  # a hole (the label)
    m[90:100, 10:20] = True  # a stray fragment
    s = sh.mask_to_shape(m, img, min_area=150)
    assert s is not None and s.kind == "rect" and s.bbox == (40.0, 30.0, 120.0, 70.0) and s.area == 3200.0
    with pytest.raises(ValueError, match="mask shape"):
        sh.mask_to_shape(m[:-1], img, min_area=150)


# ------------------------------------------------------------------ (c) configuration and errors


def test_default_config_keeps_opencv_and_knows_every_sam_key():
    cfg = load_config()
    table = cfg.parser["shape_hunter"]
    assert table["backend"] == "opencv"
    assert table["sam"]["checkpoint"] == "" and table["sam"]["model_type"] == "vit_b"
    assert sh.check_sam_arch(table["sam"]["custom"])["encoder_global_attn_indexes"] == [2, 5, 8, 11]
    assert set(table["sam"]["custom"]) == set(sh.SAM_ARCH_KEYS)


def test_sam_errors_are_clear(tmp_path):
    ckpt = tmp_path / "tiny_sam.pth"
    _save_tiny(ckpt)
    create = sh.BACKENDS.create
    with pytest.raises(RuntimeError, match="needs .*checkpoint"):
        create("sam", {})
    with pytest.raises(RuntimeError, match="does not exist"):
        create("sam", {"checkpoint": str(tmp_path / "none.pth"), "model_type": "custom", "custom": TINY})
    with pytest.raises(RuntimeError, match="unknown model_type 'vit_tiny'"):
        create("sam", {"checkpoint": str(ckpt), "model_type": "vit_tiny"})
    with pytest.raises(ConfigError, match="unknown key.*point_per_side"):
        create("sam", {"checkpoint": str(ckpt), "point_per_side": 8})
    with pytest.raises(ConfigError, match="unknown key.*embed_dim"):
        create("sam", {"checkpoint": str(ckpt), "model_type": "custom", "custom": {**TINY, "embed_dim": 8}})
    with pytest.raises(ConfigError, match="multiple of 8"):
        create("sam", {"checkpoint": str(ckpt), "model_type": "custom", "custom": {**TINY, "prompt_embed_dim": 20}})
    with pytest.raises(ConfigError, match="both false"):
        create("sam", {"checkpoint": str(ckpt), "automatic": False, "text_prompts": False})
    # a checkpoint of another architecture
    with pytest.raises(RuntimeError, match="does not match model_type 'custom'.*other shape"):
        create("sam", {"checkpoint": str(ckpt), "model_type": "custom", "custom": {**TINY, "decoder_mlp_dim": 64}})
    with pytest.raises(RuntimeError, match="does not match.*missing"):
        create("sam", {"checkpoint": str(ckpt), "model_type": "custom", "custom": {**TINY, "encoder_depth": 2}})
    bad = tmp_path / "bad.pth"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(RuntimeError, match="cannot read checkpoint"):
        create("sam", {"checkpoint": str(bad), "model_type": "custom", "custom": TINY})
