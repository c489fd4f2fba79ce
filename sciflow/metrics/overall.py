"""Overall score (SciFlow-Bench, App. A.4): a fixed, a-priori weighting of the three levels.

    overall = graph_w * graph + text_w * text + image_w * image      (defaults 0.4 / 0.3 / 0.3)

The weights are ``[overall]`` in the pinned configuration (non-negative, summing to 1, so the
overall score lies in [0, 1] whenever the three levels do).

>>> from sciflow.config import OverallWeights
>>> round(overall_score(1.0, 0.5, 0.0, OverallWeights()), 6)
0.55
>>> from sciflow.config import load_config
>>> config = load_config(overrides={"overall": {"graph": 0.5, "text": 0.5, "image": 0.0}})
>>> round(overall_score(1.0, 0.5, 0.0, config), 6)
0.75
"""

from __future__ import annotations

from sciflow.config import Config, OverallWeights


def overall_score(graph: float, text: float, image: float, weights: OverallWeights | Config | None = None) -> float:
    """The weighted sum of the three level scores (module docstring); ``weights`` is the
    ``[overall]`` table or a whole :class:`~sciflow.config.Config`."""
    w = weights.overall if isinstance(weights, Config) else (weights or OverallWeights())
    return w.graph * graph + w.text * text + w.image * image
