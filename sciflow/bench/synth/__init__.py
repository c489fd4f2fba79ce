"""Synthetic framework diagrams with exact ground truth, for benchmarks and tests.

* :mod:`sciflow.bench.synth.graphviz_render`: Graphviz (``dot``) renders; ground truth from the
  graph the renderer was given, node boxes from Graphviz ``-Tjson``.
* :mod:`sciflow.bench.synth.pillow_render`: boxes and arrows drawn directly with Pillow.

Both return :class:`SynthDiagram`.
"""

from __future__ import annotations

from sciflow.bench.synth.common import SynthDiagram, random_topology, sample_labels

__all__ = ["SynthDiagram", "random_topology", "sample_labels"]
