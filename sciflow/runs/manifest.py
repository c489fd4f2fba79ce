"""The manifest written beside every set of results: what produced these numbers."""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

from sciflow import __version__
from sciflow.config import Config
from sciflow.metrics import METRIC_VERSION
from sciflow.models.device import CPU

_PACKAGES = ("numpy", "scipy", "networkx", "rapidfuzz", "torch", "sentence-transformers", "rapidocr", "onnxruntime",
             "onnxruntime-gpu")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def build_manifest(
    config: Config,
    models: dict[str, Any],
    device: dict[str, Any] | None = None,
    references: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Version, metric version, config hash and values, the reference set, model names and
    weight hashes, thresholds, metric weights, the device the models ran on and platform.

    ``models`` maps a role ("embedder", "parser", ...) to the description its loader
    reported; ``device`` is :meth:`sciflow.models.device.DeviceSpec.to_dict` of the device actually
    used (CPU when not given). The device is a runtime setting: it is recorded here and never
    enters the config hash. ``metric_version`` is :data:`sciflow.metrics.METRIC_VERSION`.
    ``references`` is the fingerprint of the reference set scored against
    (:func:`sciflow.runs.scoring.reference_fingerprint`: ``{"dir", "n", "sha256"}``), recorded as
    given (None when not given)."""
    fallbacks = sorted(role for role, d in models.items() if isinstance(d, dict) and d.get("fallback"))
    return {
        "sciflow_version": __version__,
        "metric_version": METRIC_VERSION,
        "config_hash": config.hash,
        "references": references,
        "config": config.to_dict(),
        "thresholds": {"node_match": config.matching.threshold},
        "metric_weights": {
            "graph": {"edge_f1": config.graph.edge_weight, "node_f1": config.graph.node_weight},
            "overall": {
                "graph": config.overall.graph,
                "text": config.overall.text,
                "image": config.overall.image,
            },
        },
        "models": models,
        "fallbacks": fallbacks,
        "device": device if device is not None else CPU.to_dict(),
        "platform": {
            "python": sys.version.split()[0],
            "implementation": platform.python_implementation(),
            "system": platform.system(),
            "machine": platform.machine(),
            "packages": package_versions(),
        },
    }
