"""What people look at, under one name: ``from sciflow.views import viz`` then ``viz.diff_dot(...)``.

A facade; each function lives in the module of its idea:

- :mod:`sciflow.bench.drawing`: :func:`to_dot` and :func:`rankdir_for`, the exact Graphviz
  drawing of one graph (the benchmark's ``graphviz`` generator draws with it);
- :mod:`sciflow.views.diff`: :func:`diff_dot`, :func:`legend_dot`, :data:`COLORS`,
  :func:`graph_diagnostics` and :func:`render_graph` (``.svg`` / ``.png`` of a graph, or of its
  diff against a reference);
- :mod:`sciflow.views.overlays`: :func:`overlay` and :func:`load_image`;
- :mod:`sciflow.views.results`: :func:`load_results`, :func:`resolve_path`, :func:`item_graphs`;
- :mod:`sciflow.views.notebook`: :func:`show_graph`, :func:`show_diff`,
  :func:`diagnostics_table`, :func:`diagnostics_rows` and :class:`DiagnosticsTable`.

Example
-------
>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({"id": "toy", "nodes": [{"id": "a", "label": "Encoder"},
...     {"id": "b", "label": "Decoder"}], "edges": [{"source": "a", "target": "b"}]})
>>> dot = to_dot(g)
>>> dot.graph_attr["rankdir"], "Encoder" in dot.source
('LR', True)
>>> rows = diagnostics_table({"missing_nodes": [{"id": "n2", "label": "Head"}]})
>>> [(r["kind"], r["item"]) for r in rows]
[('missing node', 'Head')]
"""

from __future__ import annotations

from sciflow.bench.drawing import rankdir_for, to_dot
from sciflow.views.diff import COLORS, diff_dot, graph_diagnostics, legend_dot, render_graph
from sciflow.views.notebook import DiagnosticsTable, diagnostics_rows, diagnostics_table, show_diff, show_graph
from sciflow.views.overlays import load_image, overlay
from sciflow.views.results import item_graphs, load_results, resolve_path

__all__ = [
    "COLORS",
    "DiagnosticsTable",
    "diagnostics_rows",
    "diagnostics_table",
    "diff_dot",
    "graph_diagnostics",
    "item_graphs",
    "legend_dot",
    "load_image",
    "load_results",
    "overlay",
    "render_graph",
    "resolve_path",
    "rankdir_for",
    "show_diff",
    "show_graph",
    "to_dot",
]
