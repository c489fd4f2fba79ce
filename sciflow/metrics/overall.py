"""Overall score (SciFlow-Bench, App. A.4): a fixed, a-priori weighting of the three levels.

    overall = graph_w * graph + text_w * text + image_w * image      (defaults 0.4 / 0.3 / 0.3)

The weights are ``[overall]`` in the pinned configuration (non-negative, summing to 1, so the
overall score lies in [0, 1] whenever the three levels do).

>>> from sciflow.config import OverallWeights
>>> round(overall_score(1.0, 0.5, 0.0, OverallWeights()), 6)
0.55
"""

from __future__ import annotations

from sciflow.config import OverallWeights


def overall_score(graph: float, text: float, image: float, weights: OverallWeights | None = None) -> float:
    """The weighted sum of the three level scores (module docstring)."""
    w = weights or OverallWeights()
    return w.graph * graph + w.text * text + w.image * image
