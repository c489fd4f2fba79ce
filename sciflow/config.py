"""The pinned configuration: backends, thresholds and weights, and its hash.

Defaults live in ``sciflow/configs/default.toml`` (shipped in the package). A user file
overrides any subset of keys; a key that the defaults do not know is an error, so a typo
never silently leaves a default in force. :attr:`Config.hash` is the SHA-256 of the
canonical JSON of the merged configuration and is written into every results file.

Every key of the metric tables (``matching``, ``graph``, ``text``, ``text.judge``,
``overall``, ``image``, ``critique``) is checked against the type of its default (a bool is
never a number; an integer is a valid float) and against its range (weights >= 0, each group
of weights summing to 1, thresholds in their documented intervals, backends among the known
ones). A problem is a :class:`ConfigError` whose message is one line naming the dotted key,
the value and what is expected, e.g. ``graph.edge_weight = -0.5: must be >= 0``. The
``[parser]`` table is open: each agent validates its own parameters.
"""

from __future__ import annotations

import copy
import math
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Any

from sciflow.format.hashing import json_sha256

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib


class ConfigError(ValueError):
    """A configuration file or override that sciflow cannot use."""


# ------------------------------------------------------------------ value checks
@dataclass(frozen=True)
class _Range:
    """An interval of allowed numbers; ``None`` for an open end at infinity."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def __contains__(self, v: float) -> bool:
        if self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo):
            return False
        return not (self.hi is not None and (v >= self.hi if self.hi_open else v > self.hi))

    def __str__(self) -> str:
        if self.hi is None:
            return f"must be {'>' if self.lo_open else '>='} {_num(self.lo)}"
        if self.lo is None:
            return f"must be {'<' if self.hi_open else '<='} {_num(self.hi)}"
        return (f"must lie in {'(' if self.lo_open else '['}{_num(self.lo)}, "
                f"{_num(self.hi)}{')' if self.hi_open else ']'}")


_NONNEG = _Range(0.0)
_POSITIVE = _Range(0.0, lo_open=True)
_UNIT = _Range(0.0, 1.0)

# Ranges by dotted key (keys not listed: any value of the right type).
_RANGES: dict[str, _Range] = {
    "matching.string_weight": _UNIT,
    "matching.threshold": _Range(0.0, 1.0, lo_open=True),
    "graph.edge_weight": _NONNEG,
    "graph.node_weight": _NONNEG,
    "text.coverage": _NONNEG,
    "text.faithfulness": _NONNEG,
    "text.alignment": _NONNEG,
    "text.relation_weight": _NONNEG,
    "text.embedding_weight": _NONNEG,
    "text.judge.temperature": _NONNEG,
    "text.judge.timeout_s": _POSITIVE,
    "text.judge.max_retries": _NONNEG,
    "overall.graph": _NONNEG,
    "overall.text": _NONNEG,
    "overall.image": _NONNEG,
    "image.semantic_weight": _NONNEG,
    "image.perceptual_weight": _NONNEG,
    "image.flow_weight": _NONNEG,
    "image.clip_scale": _POSITIVE,
    "image.common_size": _Range(32.0),
    "image.flow_direction": _NONNEG,
    "image.flow_crossings": _NONNEG,
    "image.flow_overlaps": _NONNEG,
    "image.flow_arrowheads": _NONNEG,
    "image.flow_overlap_iou": _Range(0.0, 1.0, hi_open=True),
    "image.flow_align_tol": _NONNEG,
    "image.arrow_min_confidence": _UNIT,
    "claims.min_parse_reliability": _UNIT,
    "claims.ambiguity_margin": _UNIT,
    "claims.longest_path_budget": _Range(1.0),
    "critique.misspell_threshold": _UNIT,
    "critique.local_edit_limit": _NONNEG,
    "critique.max_steps": _NONNEG,
    "trust.min_reliability_flag": _UNIT,
}

_IMAGE_SEMANTIC_BACKENDS = ("auto", "clip", "ocr-text-embedding")
_IMAGE_PERCEPTUAL_BACKENDS = ("auto", "lpips", "ssim")

_CHOICES: dict[str, tuple[str, ...]] = {
    "text.alignment_backend": ("deterministic", "judge"),
    "image.semantic_backend": _IMAGE_SEMANTIC_BACKENDS,
    "image.perceptual_backend": _IMAGE_PERCEPTUAL_BACKENDS,
}

# Groups of weights that must sum to 1, by table.
_GROUPS: dict[str, tuple[tuple[str, ...], ...]] = {
    "graph": (("edge_weight", "node_weight"),),
    "overall": (("graph", "text", "image"),),
    "text": (("coverage", "faithfulness", "alignment"), ("relation_weight", "embedding_weight")),
    "image": (
        ("semantic_weight", "perceptual_weight", "flow_weight"),
        ("flow_direction", "flow_crossings", "flow_overlaps", "flow_arrowheads"),
    ),
}

# The tables checked key by key (``parser`` is open).
CHECKED_TABLES = ("matching", "graph", "text", "text.judge", "overall", "image", "critique", "trust", "claims")


def _num(v: float | None) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _show(value: Any) -> str:
    """The value as the TOML file spells it, where that differs from Python (true, false)."""
    text = ("true" if value else "false") if isinstance(value, bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _problem(key: str, value: Any, expected: str) -> ConfigError:
    return ConfigError(f"{key} = {_show(value)}: {expected}")


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_type(key: str, value: Any, default: Any) -> None:
    """``value`` has the type of ``default`` (an int also passes for a float; a bool never
    passes for a number); numbers must be finite."""
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise _problem(key, value, "expected true or false")
    elif isinstance(default, int):
        if not (isinstance(value, int) and not isinstance(value, bool)):
            raise _problem(key, value, "expected an integer")
    elif isinstance(default, float):
        if not _is_number(value):
            raise _problem(key, value, "expected a number")
        if not math.isfinite(value):
            raise _problem(key, value, "expected a finite number")
    elif isinstance(default, str):
        if not isinstance(value, str):
            raise _problem(key, value, "expected a string")
    elif isinstance(default, Mapping) and not isinstance(value, Mapping):
        raise _problem(key, value, "expected a table")


def check_table(table: str, values: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    """Check one table's scalar keys against ``defaults`` (types) and sciflow's ranges, choices
    and weight groups. Raises :class:`ConfigError` with a one-line message naming the dotted
    key (``table.key``). Sub-tables are left to their own call."""
    for name, default in defaults.items():
        if isinstance(default, Mapping) or name not in values:
            continue
        key, value = f"{table}.{name}", values[name]
        _check_type(key, value, default)
        rng = _RANGES.get(key)
        if rng is not None and value not in rng:
            raise _problem(key, value, str(rng))
        choices = _CHOICES.get(key)
        if choices is not None and value not in choices:
            raise _problem(key, value, "expected one of " + ", ".join(map(repr, choices)))
    for group in _GROUPS.get(table, ()):
        vals = [values[k] for k in group if k in values]
        if len(vals) < len(group):
            continue
        total = math.fsum(vals)
        if abs(total - 1.0) > 1e-9:
            keys = " + ".join(f"{table}.{k}" for k in group)
            shown = " + ".join(_num(float(v)) for v in vals)
            raise ConfigError(f"{keys} = {shown} = {total:.6g}: must sum to 1")


def _dataclass_check(table: str, obj: Any, exclude: Iterable[str] = ()) -> None:
    skip = set(exclude)
    defaults = {f.name: f.default for f in fields(obj) if f.name not in skip}
    check_table(table, {name: getattr(obj, name) for name in defaults}, defaults)


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
        _dataclass_check("image", self)


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
        _dataclass_check("critique", self)


@dataclass(frozen=True)
class TrustConfig:
    """The ``[trust]`` table: when to trust a score. ``min_reliability_flag``: a parsed item whose
    ``parse_reliability`` is below it is flagged ``low_reliability`` (``sciflow/agents/reliability.py``);
    ``strict``: refuse to run when any backend would fall back (``sciflow/models/strict.py``)."""

    min_reliability_flag: float = 0.5
    strict: bool = False

    def __post_init__(self) -> None:
        _dataclass_check("trust", self)


@dataclass(frozen=True)
class ClaimsConfig:
    """The ``[claims]`` table: structural claim checking (``sciflow/claims/check.py``)."""

    min_parse_reliability: float = 0.5
    ambiguity_margin: float = 0.05
    longest_path_budget: int = 2_000_000

    def __post_init__(self) -> None:
        _dataclass_check("claims", self)


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
    def claims(self) -> ClaimsConfig:
        return ClaimsConfig(**self.data.get("claims", {}))

    @property
    def trust(self) -> TrustConfig:
        return TrustConfig(**self.data.get("trust", {}))

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
    _check(data, default_data())
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


def _table(data: Mapping[str, Any], dotted: str) -> Any:
    for part in dotted.split("."):
        data = data[part]
    return data


def _check(data: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    """Every key of the :data:`CHECKED_TABLES` against the type of its default and its range."""
    for table in CHECKED_TABLES:
        parent, _, name = table.rpartition(".")
        value = _table(data, table)
        if not isinstance(value, Mapping):
            where = _table(data, parent) if parent else data
            raise _problem(table, where[name], "expected a table")
        check_table(table, value, _table(defaults, table))
