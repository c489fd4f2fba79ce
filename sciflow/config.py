"""The pinned configuration: backends, thresholds and weights, and its hash.

Defaults live in ``sciflow/configs/default.toml`` (shipped in the package). A user file
overrides any subset of keys; a key that the defaults do not know is an error, so a typo
never silently leaves a default in force. :attr:`Config.hash` is the SHA-256 of the
canonical JSON of the merged configuration and is written into every results file.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from sciflow.hashing import json_sha256

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


class ConfigError(ValueError):
    """A configuration file or override that sciflow cannot use."""


@dataclass(frozen=True)
class MatchingConfig:
    string_weight: float = 0.6
    threshold: float = 0.6
    embedder: str = "minilm"


@dataclass(frozen=True)
class GraphWeights:
    edge_weight: float = 0.6
    node_weight: float = 0.4


@dataclass(frozen=True)
class JudgeConfig:
    base_url: str = ""
    model: str = ""
    api_key_env: str = "SCIFLOW_JUDGE_API_KEY"
    temperature: float = 0.0
    seed: int = 0
    timeout_s: float = 60.0
    max_retries: int = 2


@dataclass(frozen=True)
class TextConfig:
    coverage: float = 0.3
    faithfulness: float = 0.3
    alignment: float = 0.4
    alignment_backend: str = "deterministic"
    relation_weight: float = 0.6
    embedding_weight: float = 0.4
    judge: JudgeConfig = JudgeConfig()


@dataclass(frozen=True)
class OverallWeights:
    graph: float = 0.4
    text: float = 0.3
    image: float = 0.3


_IMAGE_SEMANTIC_BACKENDS = ("auto", "clip", "ocr-text-embedding")
_IMAGE_PERCEPTUAL_BACKENDS = ("auto", "lpips", "ssim")


@dataclass(frozen=True)
class ImageConfig:
    """The ``[image]`` table: image-level metric weights, backends and visual-flow constants
    (see ``sciflow/metrics/image_level.py`` for the exact definitions)."""

    semantic_weight: float = 0.4
    perceptual_weight: float = 0.2
    flow_weight: float = 0.4
    semantic_backend: str = "auto"
    clip_model: str = "ViT-B-32"
    clip_pretrained: str = "openai"
    clip_checkpoint: str = ""
    clip_scale: float = 2.5
    perceptual_backend: str = "auto"
    lpips_backbone: str = ""
    common_size: int = 256
    cache_dir: str = ""
    device: str = "cpu"
    flow_direction: float = 0.4
    flow_crossings: float = 0.2
    flow_overlaps: float = 0.2
    flow_arrowheads: float = 0.2
    flow_overlap_iou: float = 0.02
    flow_align_tol: float = 0.5
    arrow_min_confidence: float = 0.5

    def __post_init__(self) -> None:
        for name, keys in (
            ("image weights", ("semantic_weight", "perceptual_weight", "flow_weight")),
            ("image flow weights", ("flow_direction", "flow_crossings", "flow_overlaps", "flow_arrowheads")),
        ):
            values = [float(getattr(self, k)) for k in keys]
            if any(v < 0 for v in values) or abs(sum(values) - 1.0) > 1e-9:
                raise ConfigError(f"{name} ({', '.join(keys)}) must be >= 0 and sum to 1, got {values}")
        if self.semantic_backend not in _IMAGE_SEMANTIC_BACKENDS:
            raise ConfigError(f"image.semantic_backend must be one of {_IMAGE_SEMANTIC_BACKENDS}")
        if self.perceptual_backend not in _IMAGE_PERCEPTUAL_BACKENDS:
            raise ConfigError(f"image.perceptual_backend must be one of {_IMAGE_PERCEPTUAL_BACKENDS}")
        if not float(self.clip_scale) > 0 or int(self.common_size) < 32:
            raise ConfigError("image.clip_scale must be > 0 and image.common_size >= 32")
        if not 0.0 <= float(self.flow_overlap_iou) < 1.0 or float(self.flow_align_tol) < 0:
            raise ConfigError("image.flow_overlap_iou must lie in [0, 1) and image.flow_align_tol be >= 0")
        if not 0.0 <= float(self.arrow_min_confidence) <= 1.0:
            raise ConfigError("image.arrow_min_confidence must lie in [0, 1]")


@dataclass(frozen=True)
class CritiqueRuleSettings:
    """Which findings make a prediction fail, and when a label counts as misspelled (the
    fields of :class:`sciflow.critic.CritiqueRule`)."""

    fail_on_missing_node: bool = True
    fail_on_merged_node: bool = True
    fail_on_hallucinated_node: bool = True
    fail_on_swapped_labels: bool = True
    fail_on_reversed_edge: bool = True
    fail_on_missing_edge: bool = True
    fail_on_unsupported_edge: bool = True
    fail_on_unmatched_endpoint_edge: bool = True
    misspell_threshold: float = 0.999


@dataclass(frozen=True)
class CritiqueConfig(CritiqueRuleSettings):
    """The ``[critique]`` table: the pass/fail rule of ``sciflow critique`` and the rectification
    loop's policy (see ``sciflow/critic/critique.py`` and ``sciflow/critic/rectify.py``)."""

    local_edit_limit: int = 2
    max_steps: int = 10

    def __post_init__(self) -> None:
        if not 0.0 <= float(self.misspell_threshold) <= 1.0:
            raise ConfigError("critique.misspell_threshold must lie in [0, 1]")
        if int(self.local_edit_limit) < 0 or int(self.max_steps) < 0:
            raise ConfigError("critique.local_edit_limit and critique.max_steps must be >= 0")


@dataclass(frozen=True)
class Config:
    """The merged configuration. ``data`` is the full nested mapping that is hashed."""

    data: Mapping[str, Any] = field(default_factory=lambda: default_data())

    @cached_property
    def hash(self) -> str:
        return json_sha256(self.data)

    @property
    def matching(self) -> MatchingConfig:
        return MatchingConfig(**self.data["matching"])

    @property
    def graph(self) -> GraphWeights:
        return GraphWeights(**self.data["graph"])

    @property
    def text(self) -> TextConfig:
        d = dict(self.data["text"])
        return TextConfig(**{**d, "judge": JudgeConfig(**d.get("judge", {}))})

    @property
    def overall(self) -> OverallWeights:
        return OverallWeights(**self.data["overall"])

    @property
    def image(self) -> ImageConfig:
        return ImageConfig(**self.data.get("image", {}))

    @property
    def critique(self) -> CritiqueConfig:
        return CritiqueConfig(**self.data.get("critique", {}))

    @property
    def parser(self) -> Mapping[str, Any]:
        return self.data.get("parser", {})

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy(dict(self.data))


def default_data() -> dict[str, Any]:
    text = resources.files("sciflow").joinpath("configs/default.toml").read_text("utf-8")
    return tomllib.loads(text)


def load_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Defaults, then the TOML file at ``path``, then ``overrides`` (a nested mapping)."""
    data = default_data()
    if path is not None:
        path = Path(path)
        try:
            user = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read config: {exc.strerror or exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
        _merge(data, user, str(path), [])
    if overrides:
        _merge(data, copy.deepcopy(dict(overrides)), "<overrides>", [])
    _check(data)
    return Config(data)


def _merge(base: dict[str, Any], new: Mapping[str, Any], source: str, path: list[str]) -> None:
    for key, value in new.items():
        here = path + [key]
        # The parser section is open: agents and backends are registered by name and
        # each backend validates its own parameters.
        if key not in base and not (path and path[0] == "parser"):
            raise ConfigError(f"{source}: unknown config key {'.'.join(here)!r}")
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value, source, here)
        else:
            base[key] = value


def _check(data: Mapping[str, Any]) -> None:
    m = data["matching"]
    if not 0.0 <= float(m["string_weight"]) <= 1.0:
        raise ConfigError("matching.string_weight must lie in [0, 1]")
    if not 0.0 < float(m["threshold"]) <= 1.0:
        raise ConfigError("matching.threshold must lie in (0, 1]")
    for section, keys in (
        ("graph", ("edge_weight", "node_weight")),
        ("overall", ("graph", "text", "image")),
        ("text", ("coverage", "faithfulness", "alignment")),
        ("text", ("relation_weight", "embedding_weight")),
    ):
        total = sum(float(data[section][k]) for k in keys)
        if abs(total - 1.0) > 1e-9:
            raise ConfigError(f"{section} weights {', '.join(keys)} must sum to 1, got {total}")
    if data["text"]["alignment_backend"] not in ("deterministic", "judge"):
        raise ConfigError("text.alignment_backend must be 'deterministic' or 'judge'")
