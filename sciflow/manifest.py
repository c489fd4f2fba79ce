"""The manifest written beside every set of results: what produced these numbers."""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

from sciflow import __version__
from sciflow.config import Config

_PACKAGES = ("numpy", "scipy", "networkx", "rapidfuzz", "torch", "sentence-transformers", "rapidocr")


def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def build_manifest(config: Config, models: dict[str, Any]) -> dict[str, Any]:
    """Version, config hash and values, model names and weight hashes, thresholds,
    metric weights and platform. ``models`` maps a role ("embedder", "parser", ...) to the
    description its loader reported."""
    fallbacks = sorted(role for role, d in models.items() if isinstance(d, dict) and d.get("fallback"))
    return {
        "sciflow_version": __version__,
        "config_hash": config.hash,
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
        "platform": {
            "python": sys.version.split()[0],
            "implementation": platform.python_implementation(),
            "system": platform.system(),
            "machine": platform.machine(),
            "packages": package_versions(),
        },
    }
