"""Image models: the one loader for the models behind the image-level metric.

Two roles, each a registry of backends chosen by name in the ``[image]`` config table:

semantic (``image.semantic_backend``)
    ``clip``: an open_clip model (default ``ViT-B-32`` with the ``openai`` weights) that embeds
    the generated image and the prompt text. ``image.clip_model`` is any open_clip model name,
    ``hf-hub:org/repo`` or ``local-dir:/path`` (a folder with ``open_clip_config.json`` and a
    weights file); ``image.clip_pretrained`` is the pretrained tag; ``image.clip_checkpoint``
    (a local weights file) replaces the tag's download (a tag known for the model still sets
    QuickGELU and the image normalisation). When the tag was trained with QuickGELU (``openai``
    is), the model is built with QuickGELU so the weights mean what they meant.

    ``ocr-text-embedding`` (FALLBACK): all-MiniLM-L6-v2 (:func:`sciflow.models.embedding.get_embedder`
    ``("minilm")``) embeds the text read in the image, i.e. the parsed node labels, and the
    prompt text. It never claims to be the paper's CLIP score.

perceptual (``image.perceptual_backend``)
    ``lpips``: LPIPS v0.1 with the AlexNet trunk (``lpips`` package; its linear heads ship in the
    wheel). The AlexNet ImageNet weights are a torchvision state dict read from
    ``image.lpips_backbone`` or from ``<cache>/checkpoints/alexnet-owt-7be5be79.pth`` (``<cache>``:
    ``image.cache_dir`` or ``torch.hub.get_dir()``).

    ``ssim`` (FALLBACK): scikit-image structural similarity on grayscale.

``"auto"`` tries the real model first (``clip``, ``lpips``) and falls back to the substitute
when its weights cannot be loaded here; the reason is kept in :meth:`ImageModels.describe`.
Naming a backend explicitly never falls back: it raises :class:`ImageModelUnavailable`.

Offline: when ``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE`` or ``SCIFLOW_OFFLINE`` is set, nothing
is downloaded (weights must already be in the caches, see :mod:`sciflow.models.download`); otherwise
the same loading code fetches missing weights into the usual caches. Every model is loaded once
per process (loaders are cached on their parameters) and every backend reports
``describe()``: backend, model name, weight file(s) and SHA-256, device, ``fallback`` and, for a
fallback, a ``note``.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from PIL import Image

from sciflow.config import ImageConfig
from sciflow.format.extras import extra_hint
from sciflow.format.hashing import file_sha256
from sciflow.models.embedding import EmbedderUnavailable, get_embedder

if TYPE_CHECKING:
    from sciflow.models.embedding_store import EmbeddingStore

log = logging.getLogger(__name__)

#: torchvision's AlexNet ImageNet weights (``AlexNet_Weights.IMAGENET1K_V1``), the LPIPS trunk.
ALEXNET_URL = "https://download.pytorch.org/models/alexnet-owt-7be5be79.pth"
ALEXNET_FILE = "alexnet-owt-7be5be79.pth"
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "SCIFLOW_OFFLINE")
AUTO_ORDER = {"semantic": ("clip", "ocr-text-embedding"), "perceptual": ("lpips", "ssim")}


class ImageModelUnavailable(RuntimeError):
    """A configured image model cannot be loaded here (missing weights, offline, bad file)."""


def offline() -> bool:
    """True when any of :data:`OFFLINE_VARS` is set to a true value."""
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in OFFLINE_VARS)


@cache
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(path)


def weights_sha256(path: str | Path) -> str:
    """SHA-256 of a weight file, computed once per process per (path, size, mtime)."""
    st = os.stat(path)
    return _sha256(str(path), st.st_size, st.st_mtime_ns)


def cache_root(cache_dir: str) -> Path:
    """The torch-hub style cache folder: ``cache_dir`` or ``torch.hub.get_dir()``."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    import torch

    return Path(torch.hub.get_dir())


def alexnet_path(config: ImageConfig) -> Path:
    """Where the LPIPS trunk weights are read from."""
    if config.lpips_backbone:
        return Path(config.lpips_backbone).expanduser()
    return cache_root(config.cache_dir) / "checkpoints" / ALEXNET_FILE


# ------------------------------------------------------------------ protocols
class SemanticBackend(Protocol):
    name: str
    is_fallback: bool
    #: "image": compares the image with the prompt; "labels": compares the parsed labels with it.
    modality: str
    #: most content tokens one text may have (context length less start/end tokens)
    max_tokens: int

    def count_tokens(self, text: str) -> int: ...

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised embeddings, shape (len(texts), d), float64."""

    def encode_image(self, image: Image.Image) -> np.ndarray:
        """L2-normalised embedding (d,) of an RGB image (only for modality "image")."""

    def describe(self) -> dict[str, Any]: ...


class PerceptualBackend(Protocol):
    name: str
    is_fallback: bool
    #: how ``similarity`` maps the raw backend value to [0, 1]
    rule: str

    def similarity(self, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
        """``(similarity in [0, 1], raw backend value)`` of two RGB float arrays in [0, 1] of the
        same shape (H, W, 3)."""

    def describe(self) -> dict[str, Any]: ...


_SEMANTIC: dict[str, Callable[[ImageConfig], SemanticBackend]] = {}
_PERCEPTUAL: dict[str, Callable[[ImageConfig], PerceptualBackend]] = {}


def register_semantic(name: str) -> Callable[[Callable[[ImageConfig], SemanticBackend]], Any]:
    def deco(factory: Callable[[ImageConfig], SemanticBackend]) -> Callable[[ImageConfig], SemanticBackend]:
        _SEMANTIC[name] = factory
        return factory

    return deco


def register_perceptual(name: str) -> Callable[[Callable[[ImageConfig], PerceptualBackend]], Any]:
    def deco(factory: Callable[[ImageConfig], PerceptualBackend]) -> Callable[[ImageConfig], PerceptualBackend]:
        _PERCEPTUAL[name] = factory
        return factory

    return deco


def _l2(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, dtype=np.float64)
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(n == 0, 1.0, n)


# ------------------------------------------------------------------------ CLIP
_WEIGHT_NAMES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin", "model.safetensors",
                 "pytorch_model.bin")


def _local_dir_weights(folder: Path) -> Path:
    for name in _WEIGHT_NAMES:
        if (folder / name).is_file():
            return folder / name
    found = sorted(p for ext in ("*.safetensors", "*.bin", "*.pt", "*.pth") for p in folder.glob(ext))
    if not found:
        raise ImageModelUnavailable(f"no CLIP weights file in {folder}")
    return found[0]


def _resolve_clip(model: str, pretrained: str, checkpoint: str, cache_dir: str) -> tuple[Path, dict[str, Any]]:
    """The weight file for the configured CLIP model and the pretrained-tag config (may be empty).
    Downloads only when not offline (the HF hub honours HF_HUB_OFFLINE itself)."""
    from open_clip.pretrained import download_pretrained, download_pretrained_from_hf, get_pretrained_cfg

    if checkpoint:
        path = Path(checkpoint).expanduser()
        if not path.is_file():
            raise ImageModelUnavailable(f"image.clip_checkpoint {path} is not a file")
        return path, (get_pretrained_cfg(model, pretrained) if pretrained else {}) or {}
    if model.startswith("local-dir:"):
        folder = Path(model.split(":", 1)[1]).expanduser()
        if not (folder / "open_clip_config.json").is_file():
            raise ImageModelUnavailable(f"{folder} has no open_clip_config.json")
        return _local_dir_weights(folder), {}
    cache = cache_dir or None
    if model.startswith("hf-hub:"):
        try:
            return Path(download_pretrained_from_hf(model.split(":", 1)[1], cache_dir=cache)), {}
        except Exception as exc:
            raise ImageModelUnavailable(f"CLIP weights for {model} unavailable: {exc}") from exc
    tag_cfg = get_pretrained_cfg(model, pretrained) if pretrained else {}
    if not tag_cfg:
        if pretrained and Path(pretrained).expanduser().is_file():
            return Path(pretrained).expanduser(), {}
        raise ImageModelUnavailable(f"unknown CLIP model/pretrained tag {model!r}/{pretrained!r}")
    if offline() and not tag_cfg.get("hf_hub") and tag_cfg.get("url"):
        path = Path(cache or "~/.cache/clip").expanduser() / os.path.basename(tag_cfg["url"])
        if not path.is_file():
            raise ImageModelUnavailable(f"CLIP weights {path} not cached and offline mode is set")
        return path, tag_cfg
    try:
        return Path(download_pretrained(tag_cfg, cache_dir=cache)), tag_cfg
    except Exception as exc:
        hint = " (offline mode is set; fetch them with `sciflow download-models`)" if offline() else ""
        raise ImageModelUnavailable(f"CLIP weights {model}/{pretrained} unavailable{hint}: {exc}") from exc


@cache
def _load_clip(model: str, pretrained: str, checkpoint: str, cache_dir: str, device: str) -> ClipSemantic:
    try:
        import open_clip
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise ImageModelUnavailable(f"the 'clip' backend needs the 'clip' extra: {extra_hint('clip')}") from exc
    path, tag_cfg = _resolve_clip(model, pretrained, checkpoint, cache_dir)
    schema = model.startswith(("local-dir:", "hf-hub:"))
    if schema:
        source = None
    elif checkpoint or not tag_cfg:
        source = str(path)
    else:
        source = pretrained
    pre_cfg = {k: tag_cfg[k] for k in ("mean", "std", "interpolation", "resize_mode") if k in tag_cfg}
    net, _, preprocess = open_clip.create_model_and_transforms(
        model, pretrained=source, device=device, cache_dir=cache_dir or None,
        force_quick_gelu=bool(tag_cfg.get("quick_gelu", False)),
        **({"image_mean": pre_cfg.get("mean"), "image_std": pre_cfg.get("std")} if checkpoint and pre_cfg else {}),
    )
    net.eval()
    tokenizer = open_clip.get_tokenizer(model)
    log.info("loaded CLIP %s (%s) from %s", model, pretrained, path)
    return ClipSemantic(model, None if schema else (pretrained or None), path, net, preprocess, tokenizer, device,
                        quick_gelu=bool(tag_cfg.get("quick_gelu", False)))


class ClipSemantic:
    """CLIP image and text towers (open_clip). Each text and image is encoded on its own."""

    name = "clip"
    is_fallback = False
    modality = "image"

    def __init__(self, model_name: str, pretrained: str | None, weights: Path, model: Any, preprocess: Any,
                 tokenizer: Any, device: str, quick_gelu: bool = False):
        self.model_name = model_name
        self.pretrained = pretrained
        self.weights = Path(weights)
        self.weights_sha256 = weights_sha256(weights)
        self.device = device
        self.quick_gelu = quick_gelu
        self._model = model
        self._preprocess = preprocess
        self._tokenizer = tokenizer
        self.context_length = int(getattr(tokenizer, "context_length", None) or 77)
        self.max_tokens = self.context_length - 2  # start and end tokens
        self._text_cache: dict[str, np.ndarray] = {}

    def token_ids(self, text: str) -> list[int]:
        tok = self._tokenizer
        if hasattr(tok, "encode") and hasattr(tok, "sot_token_id"):  # open_clip SimpleTokenizer
            return list(tok.encode(text))
        inner = getattr(tok, "tokenizer", tok)  # open_clip HFTokenizer wraps a transformers tokenizer
        return list(inner(text, add_special_tokens=False, truncation=False, verbose=False)["input_ids"])

    def count_tokens(self, text: str) -> int:
        return len(self.token_ids(text))

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        out = []
        for t in texts:
            vec = self._text_cache.get(t)
            if vec is None:
                n = self.count_tokens(t)
                if n > self.max_tokens:
                    raise ValueError(f"text of {n} tokens exceeds CLIP's {self.max_tokens}; chunk it first")
                with torch.inference_mode():
                    emb = self._model.encode_text(self._tokenizer([t]).to(self.device))
                vec = _l2(emb[0].float().cpu().numpy())
                self._text_cache[t] = vec
            out.append(vec)
        return np.stack(out) if out else np.zeros((0, 0))

    def encode_image(self, image: Image.Image) -> np.ndarray:
        import torch

        x = self._preprocess(image.convert("RGB")).unsqueeze(0).to(self.device)
        with torch.inference_mode():
            emb = self._model.encode_image(x)
        return _l2(emb[0].float().cpu().numpy())

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "clip",
            "model": self.model_name,
            "pretrained": self.pretrained,
            "weights": str(self.weights),
            "weights_sha256": self.weights_sha256,
            "quick_gelu": self.quick_gelu,
            "context_length": self.context_length,
            "device": self.device,
            "fallback": False,
        }


@register_semantic("clip")
def _clip(config: ImageConfig) -> SemanticBackend:
    return _load_clip(config.clip_model, config.clip_pretrained, config.clip_checkpoint, config.cache_dir,
                      config.device)


# ---------------------------------------------------------- OCR text embedding
class TextEmbeddingSemantic:
    """FALLBACK for CLIP: MiniLM cosine between the text read in the image and the prompt."""

    name = "ocr-text-embedding"
    is_fallback = True
    modality = "labels"

    def __init__(self, embedder: Any):
        st = getattr(embedder, "model", None)
        if st is None or not hasattr(embedder, "encode") or not hasattr(embedder, "n_tokens"):
            raise ImageModelUnavailable(f"embedder {getattr(embedder, 'name', embedder)!r} has no text encoder")
        self._embedder = embedder
        self.max_tokens = int(st.max_seq_length) - 2  # [CLS] and [SEP]

    def count_tokens(self, text: str) -> int:
        """Word pieces without the special tokens (the embedder's memoised count)."""
        return int(self._embedder.n_tokens(text))

    def encode_texts(self, texts: Sequence[str]) -> np.ndarray:
        for t in texts:
            if self.count_tokens(t) > self.max_tokens:
                raise ValueError(f"text exceeds the embedder's {self.max_tokens} tokens; chunk it first")
        return np.stack([_l2(self._embedder.encode(t)) for t in texts]) if texts else np.zeros((0, 0))

    def encode_image(self, image: Image.Image) -> np.ndarray:  # pragma: no cover - protocol only
        raise NotImplementedError("ocr-text-embedding compares parsed labels with the prompt, not pixels")

    def use_store(self, store: EmbeddingStore | None) -> None:
        """Back the MiniLM embedder's cache with an on-disk store (see
        :meth:`sciflow.models.embedding.SentenceTransformerEmbedder.use_store`)."""
        self._embedder.use_store(store)

    def describe(self) -> dict[str, Any]:
        d = dict(self._embedder.describe())
        return {
            "backend": "ocr-text-embedding",
            "model": d.get("model"),
            "weights_sha256": d.get("weights_sha256"),
            "device": d.get("device"),
            "max_tokens": self.max_tokens,
            "fallback": True,
            "note": "FALLBACK: MiniLM cosine between the parsed node labels (text read in the image) and the "
                    "prompt; not the paper's CLIP semantic consistency",
        }


@cache
def _load_text_embedding(device: str = "cpu") -> TextEmbeddingSemantic:
    try:
        return TextEmbeddingSemantic(get_embedder("minilm", device))
    except EmbedderUnavailable as exc:
        raise ImageModelUnavailable(str(exc)) from exc


@register_semantic("ocr-text-embedding")
def _ocr_text(config: ImageConfig) -> SemanticBackend:
    return _load_text_embedding(config.device)


# ------------------------------------------------------------------------ LPIPS
def _alexnet_features(state: Any, target_keys: Sequence[str]) -> dict[str, Any]:
    """Map a torchvision AlexNet state dict (``features.<i>.<p>``, or a bare ``features`` state dict
    ``<i>.<p>``) onto the LPIPS trunk's ``slice<k>.<i>.<p>`` keys."""
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise ImageModelUnavailable("LPIPS backbone file does not hold a state dict")
    plain = {re.sub(r"^(module\.)?(features\.)?", "", k): v for k, v in state.items()
             if not k.startswith(("classifier.", "module.classifier."))}
    out, missing = {}, []
    for key in target_keys:
        _, idx, param = key.split(".")
        src = f"{idx}.{param}"
        if src in plain:
            out[key] = plain[src]
        else:
            missing.append(f"features.{src}")
    if missing:
        raise ImageModelUnavailable(f"LPIPS backbone is not an AlexNet state dict (missing {', '.join(missing)})")
    return out


@cache
def _load_lpips(path: str, device: str) -> LpipsPerceptual:
    try:
        import lpips
        import torch
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise ImageModelUnavailable(f"the 'lpips' backend needs the 'lpips' extra: {extra_hint('lpips')}") from exc
    p = Path(path)
    if not p.is_file():
        if p.name != ALEXNET_FILE:
            raise ImageModelUnavailable(f"image.lpips_backbone {p} is not a file")
        if offline():
            raise ImageModelUnavailable(
                f"AlexNet ImageNet weights for LPIPS not in {p.parent} and offline mode is set "
                "(fetch them with `sciflow download-models`)")
        try:
            torch.hub.load_state_dict_from_url(ALEXNET_URL, model_dir=str(p.parent), progress=False, check_hash=True)
        except Exception as exc:
            raise ImageModelUnavailable(f"cannot download AlexNet weights for LPIPS: {exc}") from exc
    try:
        state = torch.load(p, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ImageModelUnavailable(f"cannot read LPIPS backbone {p}: {exc}") from exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torchvision's deprecation notes about `pretrained=`
        # pnet_rand=True: build the trunk without torchvision's download; its weights come next.
        model = lpips.LPIPS(pretrained=True, net="alex", version="0.1", pnet_rand=True, verbose=False)
    trunk = model.net
    trunk.load_state_dict(_alexnet_features(state, list(trunk.state_dict())), strict=True)
    model = model.eval().to(device)
    heads = Path(lpips.__file__).parent / "weights" / "v0.1" / "alex.pth"
    log.info("loaded LPIPS (alex) with trunk %s", p)
    return LpipsPerceptual(model, p, heads, device)


class LpipsPerceptual:
    """LPIPS v0.1, AlexNet trunk. ``similarity = 1 - clip(d, 0, 1)`` with ``d`` the LPIPS distance of
    the two images scaled to [-1, 1]."""

    name = "lpips"
    is_fallback = False
    rule = "1 - clip(LPIPS distance, 0, 1)"

    def __init__(self, model: Any, backbone: Path, heads: Path, device: str):
        self._model = model
        self.backbone = backbone
        self.heads = heads
        self.device = device
        self.backbone_sha256 = weights_sha256(backbone)
        self.heads_sha256 = weights_sha256(heads) if heads.is_file() else None

    def similarity(self, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
        import torch

        def tensor(x: np.ndarray) -> Any:
            return (torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).permute(2, 0, 1)[None] * 2 - 1).to(
                self.device)

        with torch.inference_mode():
            d = float(self._model(tensor(a), tensor(b)).reshape(-1)[0].item())
        return 1.0 - min(max(d, 0.0), 1.0), d

    def describe(self) -> dict[str, Any]:
        return {
            "backend": "lpips",
            "model": "LPIPS v0.1 (alex)",
            "weights": str(self.backbone),
            "weights_sha256": self.backbone_sha256,
            "heads": str(self.heads),
            "heads_sha256": self.heads_sha256,
            "device": self.device,
            "fallback": False,
        }


@register_perceptual("lpips")
def _lpips(config: ImageConfig) -> PerceptualBackend:
    return _load_lpips(str(alexnet_path(config)), config.device)


class SsimPerceptual:
    """FALLBACK for LPIPS: SSIM (scikit-image, 7x7 uniform window, data range 1) of the grayscale
    images (ITU-R 601 luma 0.299 R + 0.587 G + 0.114 B), its map averaged over the ink of either
    image: pixels whose luma is below ``1 - INK`` (``INK = 0.1``; both images are on a white page),
    grown by 2 px (a 5x5 square); ``similarity = clip(that mean, 0, 1)``. Two blank pages give 1.

    Why not the plain mean: most of a diagram is white page, which a blank image matches, so plain
    SSIM gave a blank image 0.87-0.92 against a diagram; on the ink a blank page scores near 0, and
    arrowheads that point the other way or labels in other boxes lower the mean where they differ."""

    name = "ssim"
    is_fallback = True
    rule = "clip(grayscale SSIM averaged over the ink of either image, 0, 1)"
    INK = 0.1

    def similarity(self, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
        from scipy.ndimage import binary_dilation
        from skimage.metrics import structural_similarity

        luma = np.array([0.299, 0.587, 0.114])
        ga, gb = np.asarray(a, np.float64) @ luma, np.asarray(b, np.float64) @ luma
        _, smap = structural_similarity(ga, gb, data_range=1.0, full=True)
        ink = binary_dilation((ga < 1 - self.INK) | (gb < 1 - self.INK), structure=np.ones((5, 5), bool))
        s = float(smap[ink].mean()) if ink.any() else float(smap.mean())
        return min(max(s, 0.0), 1.0), s

    def describe(self) -> dict[str, Any]:
        import skimage

        return {
            "backend": "ssim",
            "model": f"scikit-image {skimage.__version__} structural_similarity (grayscale)",
            "weights_sha256": None,
            "device": "cpu",
            "fallback": True,
            "note": "FALLBACK: grayscale SSIM over the ink of the generated image and the source figure; not "
                    "the paper's LPIPS perceptual similarity",
        }


@register_perceptual("ssim")
def _ssim(config: ImageConfig) -> PerceptualBackend:
    return SsimPerceptual()


# ------------------------------------------------------------------- bundle
def _build(role: str, wanted: str, config: ImageConfig,
           registry: dict[str, Callable[[ImageConfig], Any]]) -> tuple[Any, list[str]]:
    if wanted != "auto":
        if wanted not in registry:
            raise ImageModelUnavailable(f"unknown {role} backend {wanted!r}; registered: {', '.join(sorted(registry))}")
        return registry[wanted](config), []
    reasons: list[str] = []
    for name in AUTO_ORDER[role]:
        try:
            return registry[name](config), reasons
        except Exception as exc:  # auto: any load failure means "use the next backend"
            reasons.append(f"{name}: {exc}")
            log.warning("image %s backend %s unavailable, trying the next: %s", role, name, exc)
    return None, reasons


class ImageModels:
    """The image-level backends for one :class:`ImageConfig`, built once (see :func:`get_image_models`).

    ``semantic`` is ``None`` only when no semantic backend loads at all (semantic consistency is
    then unavailable); ``perceptual`` always loads (``ssim`` needs no weights).
    """

    def __init__(self, config: ImageConfig):
        self.config = config
        self.semantic, self._semantic_reasons = _build("semantic", config.semantic_backend, config, _SEMANTIC)
        self.perceptual, self._perceptual_reasons = _build(
            "perceptual", config.perceptual_backend, config, _PERCEPTUAL)

    def _role(self, backend: Any, requested: str, reasons: list[str]) -> dict[str, Any]:
        if backend is None:
            d: dict[str, Any] = {"backend": None, "fallback": True,
                                 "note": "UNAVAILABLE: no backend could be loaded; the term is left out"}
        else:
            d = dict(backend.describe())
        d["requested"] = requested
        if reasons:
            d["fallback_reason"] = "; ".join(reasons)
        return d

    def use_embedding_store(self, store: EmbeddingStore | None) -> None:
        """Attach an on-disk embedding store to the semantic backend when it encodes with a label
        embedder (``ocr-text-embedding``); CLIP and the perceptual backends keep nothing on disk."""
        use = getattr(self.semantic, "use_store", None)
        if use is not None:
            use(store)

    def describe(self) -> dict[str, Any]:
        """For the manifest: one entry per role plus ``fallback`` (true when either role runs a
        substitute for the paper's model)."""
        sem = self._role(self.semantic, self.config.semantic_backend, self._semantic_reasons)
        per = self._role(self.perceptual, self.config.perceptual_backend, self._perceptual_reasons)
        return {"semantic": sem, "perceptual": per, "fallback": bool(sem["fallback"] or per["fallback"])}


def get_image_models(config: ImageConfig, device: str | None = None) -> ImageModels:
    """The process-wide :class:`ImageModels` for ``config`` (models themselves are shared between
    configs that name the same weights). ``device`` (a torch device string from
    :func:`sciflow.models.device.resolve_device`) is the runtime device and replaces ``image.device``,
    which stays in the pinned config only so that old config files keep loading."""
    if device is not None and device != config.device:
        if config.device != "cpu":
            log.warning("image.device = %r in the config is superseded by the runtime device %r", config.device, device)
        config = replace(config, device=device)
    return _image_models(config)


@cache
def _image_models(config: ImageConfig) -> ImageModels:
    return ImageModels(config)
