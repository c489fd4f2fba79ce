"""Synthetic framework diagrams with exact ground truth, for benchmarks and tests.

* :mod:`sciflow.bench.synth.graphviz_render`: Graphviz (``dot``) renders; ground truth from the
  graph the renderer was given, node boxes from Graphviz ``-Tjson``.
* :mod:`sciflow.bench.synth.pillow_render`: boxes and arrows drawn directly with Pillow.
* :mod:`sciflow.bench.synth.mermaid_render`: random flowcharts drawn by the real Mermaid renderer
  in headless Chromium; ground truth from Mermaid's own parser, boxes from the SVG.
* :mod:`sciflow.bench.synth.paper_render`: framework figures in the visual language of ML papers,
  laid out in Python and drawn as SVG/HTML in Chromium; every box from the browser's geometry.

All return :class:`SynthDiagram`; :mod:`sciflow.bench.synth.styles` names them and writes items
(``sciflow synth``).
"""

from __future__ import annotations

from sciflow.bench.synth.common import SynthDiagram, random_topology, sample_labels

__all__ = ["SynthDiagram", "random_topology", "sample_labels"]
