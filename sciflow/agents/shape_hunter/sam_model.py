"""The Segment Anything model of the ``sam`` backend: architecture keys, building and loading."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sciflow.format.extras import MissingExtra

#: The SAM architecture parameters of ``[parser.shape_hunter.sam.custom]`` (their defaults equal
#: segment-anything's ``vit_b``), used when ``model_type = "custom"``.
SAM_ARCH_KEYS = (
    "image_size",
    "patch_size",
    "encoder_embed_dim",
    "encoder_depth",
    "encoder_num_heads",
    "encoder_global_attn_indexes",
    "encoder_window_size",
    "encoder_mlp_ratio",
    "prompt_embed_dim",
    "mask_in_chans",
    "decoder_depth",
    "decoder_mlp_dim",
    "decoder_num_heads",
    "iou_head_depth",
    "iou_head_hidden_dim",
)
#: Runtime settings the :class:`~sciflow.pipeline.Parser` puts into the backend table, outside
#: the hashed configuration: ``device`` (a torch device string, see :mod:`sciflow.models.device`).
SAM_RUNTIME_KEYS = ("device",)
#: ``model_type`` values besides ``custom``: segment-anything's ``sam_model_registry`` builders.
SAM_REGISTRY_TYPES = ("vit_h", "vit_l", "vit_b")


def check_sam_arch(arch: Mapping[str, Any]) -> dict[str, Any]:
    """Validate a custom SAM architecture table; returns it with typed values.
    Raises :class:`~sciflow.config.ConfigError` on an unknown key or an inconsistent shape."""
    from sciflow.config import ConfigError  # noqa: PLC0415

    unknown = sorted(set(arch) - set(SAM_ARCH_KEYS))
    if unknown:
        raise ConfigError(
            f"[parser.shape_hunter.sam.custom]: unknown key(s) {', '.join(unknown)}; known: {', '.join(SAM_ARCH_KEYS)}"
        )
    missing = [k for k in SAM_ARCH_KEYS if k not in arch]
    if missing:
        raise ConfigError(f"[parser.shape_hunter.sam.custom]: missing key(s) {', '.join(missing)}")
    non_int = ("encoder_global_attn_indexes", "encoder_mlp_ratio")
    a: dict[str, Any] = {k: int(arch[k]) for k in SAM_ARCH_KEYS if k not in non_int}
    a["encoder_mlp_ratio"] = float(arch["encoder_mlp_ratio"])
    a["encoder_global_attn_indexes"] = [int(i) for i in arch["encoder_global_attn_indexes"]]
    problems = []
    if any(v <= 0 for k, v in a.items() if isinstance(v, int) and k != "encoder_window_size"):
        problems.append("sizes must be positive (encoder_window_size may be 0: global attention everywhere)")
    if a["encoder_window_size"] < 0 or a["encoder_mlp_ratio"] <= 0:
        problems.append("encoder_window_size must be >= 0 and encoder_mlp_ratio > 0")
    if a["image_size"] <= 0 or a["patch_size"] <= 0 or a["image_size"] % a["patch_size"]:
        problems.append("image_size must be a positive multiple of patch_size")
    if a["encoder_embed_dim"] <= 0 or a["encoder_num_heads"] <= 0 or a["encoder_embed_dim"] % a["encoder_num_heads"]:
        problems.append("encoder_embed_dim must be a multiple of encoder_num_heads")
    if a["encoder_depth"] <= 0 or any(not 0 <= i < a["encoder_depth"] for i in a["encoder_global_attn_indexes"]):
        problems.append("encoder_global_attn_indexes must lie in [0, encoder_depth)")
    # the mask decoder upsamples to prompt_embed_dim // 8 channels; its cross-attention works
    # at half width, split over decoder_num_heads heads
    if a["prompt_embed_dim"] <= 0 or a["prompt_embed_dim"] % 8:
        problems.append("prompt_embed_dim must be a positive multiple of 8")
    if a["decoder_num_heads"] <= 0 or (a["prompt_embed_dim"] // 2) % a["decoder_num_heads"]:
        problems.append("prompt_embed_dim / 2 must be a multiple of decoder_num_heads")
    if min(a["decoder_depth"], a["decoder_mlp_dim"], a["mask_in_chans"], a["iou_head_depth"]) <= 0:
        problems.append("decoder_depth, decoder_mlp_dim, mask_in_chans and iou_head_depth must be positive")
    if problems:
        raise ConfigError("[parser.shape_hunter.sam.custom]: " + "; ".join(problems))
    return a


def build_sam(model_type: str, arch: Mapping[str, Any] | None = None) -> Any:
    """An untrained ``segment_anything.modeling.Sam`` in eval mode: ``vit_h``/``vit_l``/``vit_b``
    from segment-anything's ``sam_model_registry``, or ``custom`` from ``arch`` (the keys of
    :data:`SAM_ARCH_KEYS`) with the same classes and fixed choices as segment-anything's own
    builder (LayerNorm eps 1e-6, relative positions, three multimask outputs, the ImageNet pixel
    mean and std)."""
    from functools import partial  # noqa: PLC0415

    try:
        import torch  # noqa: PLC0415
        from segment_anything import sam_model_registry  # noqa: PLC0415
        from segment_anything.modeling import (  # noqa: PLC0415
            ImageEncoderViT,
            MaskDecoder,
            PromptEncoder,
            Sam,
            TwoWayTransformer,
        )
    except ImportError as exc:
        raise MissingExtra("shape_hunter backend 'sam'", "sam") from exc
    if model_type in SAM_REGISTRY_TYPES:
        return sam_model_registry[model_type](checkpoint=None).eval()
    if model_type != "custom":
        raise RuntimeError(
            f"shape_hunter backend 'sam': unknown model_type {model_type!r}; "
            f"use one of {', '.join(SAM_REGISTRY_TYPES)} or 'custom' (with [parser.shape_hunter.sam.custom])"
        )
    a = check_sam_arch(arch or {})
    grid = a["image_size"] // a["patch_size"]
    sam = Sam(
        image_encoder=ImageEncoderViT(
            depth=a["encoder_depth"],
            embed_dim=a["encoder_embed_dim"],
            img_size=a["image_size"],
            mlp_ratio=a["encoder_mlp_ratio"],
            norm_layer=partial(torch.nn.LayerNorm, eps=1e-6),
            num_heads=a["encoder_num_heads"],
            patch_size=a["patch_size"],
            qkv_bias=True,
            use_rel_pos=True,
            global_attn_indexes=tuple(a["encoder_global_attn_indexes"]),
            window_size=a["encoder_window_size"],
            out_chans=a["prompt_embed_dim"],
        ),
        prompt_encoder=PromptEncoder(
            embed_dim=a["prompt_embed_dim"],
            image_embedding_size=(grid, grid),
            input_image_size=(a["image_size"], a["image_size"]),
            mask_in_chans=a["mask_in_chans"],
        ),
        mask_decoder=MaskDecoder(
            num_multimask_outputs=3,
            transformer=TwoWayTransformer(
                depth=a["decoder_depth"],
                embedding_dim=a["prompt_embed_dim"],
                mlp_dim=a["decoder_mlp_dim"],
                num_heads=a["decoder_num_heads"],
            ),
            transformer_dim=a["prompt_embed_dim"],
            iou_head_depth=a["iou_head_depth"],
            iou_head_hidden_dim=a["iou_head_hidden_dim"],
        ),
        pixel_mean=[123.675, 116.28, 103.53],
        pixel_std=[58.395, 57.12, 57.375],
    )
    return sam.eval()


def load_sam(
    checkpoint: str | Path, model_type: str, arch: Mapping[str, Any] | None = None, device: str = "cpu"
) -> Any:
    """:func:`build_sam`, then the checkpoint's state dict (a segment-anything ``.pth``: a plain
    ``state_dict``, read with ``weights_only=True`` onto the CPU) loaded strictly: a checkpoint of
    another architecture is an error naming the mismatched parameters."""
    import torch  # noqa: PLC0415

    sam = build_sam(model_type, arch)
    try:
        state = torch.load(str(checkpoint), map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001  (pickle, zip and torch errors alike)
        raise RuntimeError(f"shape_hunter backend 'sam': cannot read checkpoint {checkpoint}: {exc}") from exc
    if not isinstance(state, Mapping):
        raise RuntimeError(f"shape_hunter backend 'sam': checkpoint {checkpoint} is not a state dict")
    own = sam.state_dict()
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    resized = sorted(k for k in set(own) & set(state) if tuple(own[k].shape) != tuple(state[k].shape))
    if missing or unexpected or resized:
        parts = [
            f"{what} {len(keys)} ({', '.join(keys[:3])}{', ...' if len(keys) > 3 else ''})"
            for what, keys in (("missing", missing), ("unexpected", unexpected), ("other shape", resized))
            if keys
        ]
        raise RuntimeError(
            f"shape_hunter backend 'sam': checkpoint {checkpoint} does not match model_type {model_type!r}: "
            + "; ".join(parts)
        )
    sam.load_state_dict(state, strict=True)
    return sam.to(device)
