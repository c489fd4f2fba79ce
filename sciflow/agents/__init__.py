"""Parser agents, one module each, every backend registered by name.

``text_spotter`` (OCR), ``shape_hunter`` (shapes, containers, operators), ``layout``
(optional detector), ``grounder`` (node candidates and groups), ``topology_coder``
(connectors and direction) and ``graph_architect`` (the DiagramGraph). ``diagram`` holds the
:class:`~sciflow.agents.diagram.Diagram` and its evidence dataclasses; ``registry`` the
name -> class registries. Agents never import :mod:`sciflow.metrics`.
"""
