"""The pinned configuration: backends, thresholds and weights, and its hash.

Defaults live in ``sciflow/configs/default.toml`` (shipped in the package). A user file
overrides any subset of keys; a key that the defaults do not know is an error, so a typo
never silently leaves a default in force. :attr:`Config.hash` is the SHA-256 of the
canonical JSON of the merged configuration and is written into every results file.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

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


@dataclass(frozen=True)
class Config:
    """The merged configuration. ``data`` is the full nested mapping that is hashed."""

    data: Mapping[str, Any] = field(default_factory=lambda: default_data())

    @cached_property
    def hash(self) -> str:
        canonical = json.dumps(self.data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

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
