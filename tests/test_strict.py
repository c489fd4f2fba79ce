"""Strict mode (sciflow/models/strict.py): --strict / [trust] strict = true refuses a run whose
backends would fall back, in one line naming what is missing and how to get it (rc 2, no
traceback), and passes with a tiny test-built CLIP and LPIPS; without it the terminal's last
line names every fallback with what replaced it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from sciflow.cli import main
from sciflow.config import load_config
from sciflow.models.strict import StrictError, check_strict, fallback_line, planned_fallbacks
from tests.parser.drawing import Canvas

TINY_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 16, "heads": 2, "layers": 1},
}


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory) -> tuple[Path, Path]:
    """(open_clip local-dir folder, AlexNet trunk state dict) built and saved here."""
    import open_clip
    import torchvision

    folder = tmp_path_factory.mktemp("tiny_clip")
    torch.manual_seed(0)
    model = open_clip.CLIP(**TINY_CLIP).eval()
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": TINY_CLIP}))
    torch.save(model.state_dict(), folder / "open_clip_pytorch_model.bin")
    features = torchvision.models.alexnet(weights=None).features
    alex = tmp_path_factory.mktemp("alexnet") / "alexnet.pth"
    torch.save({f"features.{k}": v for k, v in features.state_dict().items()}, alex)
    return folder, alex


@pytest.fixture(scope="module")
def image_item(tmp_path_factory) -> tuple[Path, Path]:
    """(prediction folder with one drawn image, reference folder)."""
    root = tmp_path_factory.mktemp("strict_item")
    preds, refs = root / "preds", root / "refs"
    preds.mkdir()
    refs.mkdir()
    c = Canvas(520, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 330, 50)
    c.arrow([(180, 75), (326, 75)])
    c.img.save(preds / "x.png")
    (refs / "x.json").write_text(json.dumps({
        "id": "x", "nodes": [{"id": "a", "label": "Encoder"}, {"id": "b", "label": "Decoder"}],
        "edges": [{"source": "a", "target": "b"}]}))
    return preds, refs


def last_line(text: str) -> str:
    return " ".join([ln for ln in text.splitlines() if ln.strip()][-1].split())


def test_strict_refuses_offline_in_one_line_naming_what_and_how(image_item, tmp_path, capsys):
    preds, refs = image_item
    rc = main(["score", str(preds), "--refs", str(refs), "--out", str(tmp_path / "out"), "--strict"])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: strict mode: refusing to run")
    text = " ".join(err[err.index("error:"):].split())
    assert "image_semantic (clip → ocr-text-embedding" in text and "image_perceptual (lpips → ssim" in text
    assert "sciflow download-models" in text and "clip_checkpoint" in text and "lpips_backbone" in text
    assert not (tmp_path / "out" / "results.jsonl").exists()  # refused before anything ran


def test_strict_in_the_config_refuses_too(image_item, tmp_path, capsys):
    preds, refs = image_item
    cfg = tmp_path / "strict.toml"
    cfg.write_text("[trust]\nstrict = true\n")
    assert main(["score", str(preds), "--refs", str(refs), "--config", str(cfg)]) == 2
    assert "strict mode: refusing to run" in capsys.readouterr().err


def test_strict_names_string_only_matching_the_judge_and_sam():
    cfg = load_config(overrides={"matching": {"embedder": "none"}, "text": {"alignment_backend": "judge"},
                                 "parser": {"shape_hunter": {"backend": "sam"}}})
    roles = {f.role: f for f in planned_fallbacks(cfg, image=False)}
    assert set(roles) == {"embedder", "text_judge", "shape_hunter"}
    assert roles["embedder"].line() == "embedder: minilm → string similarity only"
    assert "text.judge.base_url" in roles["text_judge"].missing
    with pytest.raises(StrictError, match="shape_hunter \\(sam → none"):
        check_strict(cfg, image=False)


def test_parse_strict_refuses_sam_without_checkpoint(image_item, tmp_path, capsys):
    preds, _ = image_item
    cfg = tmp_path / "sam.toml"
    cfg.write_text('[parser.shape_hunter]\nbackend = "sam"\n')
    assert main(["parse", str(preds), "-o", str(tmp_path / "p"), "--config", str(cfg), "--strict"]) == 2
    err = capsys.readouterr().err
    assert "shape_hunter (sam → none (the parser cannot run)" in " ".join(err.split()) and "Traceback" not in err


def test_strict_passes_with_tiny_clip_and_lpips(image_item, tiny_models, tmp_path, capsys):
    preds, refs = image_item
    clip_dir, alex = tiny_models
    cfg = tmp_path / "tiny.toml"
    cfg.write_text(f'[image]\nclip_model = "local-dir:{clip_dir}"\nclip_pretrained = ""\n'
                   f'lpips_backbone = "{alex}"\n')
    rc = main(["score", str(preds), "--refs", str(refs), "--out", str(tmp_path / "out"), "--config", str(cfg),
               "--strict"])
    err = capsys.readouterr().err
    assert rc == 0, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["fallbacks"] == [] and manifest["fallback_details"] == []
    assert "FALLBACK" not in err


def test_without_strict_the_last_line_names_every_fallback(image_item, tmp_path, capsys):
    preds, refs = image_item
    assert main(["score", str(preds), "--refs", str(refs), "--out", str(tmp_path / "out")]) == 0
    line = last_line(capsys.readouterr().err)
    assert line == "FALLBACK: image_perceptual: lpips → ssim; image_semantic: clip → ocr-text-embedding"
    row = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert 0.0 <= row["parse_reliability"] <= 1.0 and isinstance(row["reliability_signals"], dict)
    assert row["low_reliability"] is (row["parse_reliability"] < 0.5)


def test_fallback_line_from_manifest_models():
    models = {"embedder": {"fallback": False}, "image_semantic": {"backend": "ocr-text-embedding", "fallback": True,
                                                                   "requested": "auto"}}
    assert fallback_line(models) == "FALLBACK: image_semantic: clip → ocr-text-embedding"
    assert fallback_line({"embedder": {"fallback": False}}) is None
