"""Framework figures in the visual language of ML papers, with exact ground truth (style
``paper``).

Laid out by Python code and drawn as SVG in the shared headless Chromium
(:class:`sciflow.bench.synth.browser.Browser`); every box of the ground truth is what the
browser measured on the drawn page (texts are measured once before layout, then every node,
group, text, arrowhead and arrow path where it was drawn), never a layout estimate.

What varies (:data:`KNOBS`, each sampled per item from ``random.Random(seed)`` and each
forceable, recorded in ``SynthDiagram.knobs``): light / dark theme and transparent variants
(composited on white or on the theme colour), direction, size, scale, fonts, word / math /
short / multi-line / rotated labels, node shapes, outlines (solid, none, dashed, dash-dot),
flat / gradient / white fills, shadows, pastel panels and dashed containers with titles,
arrows between panels (the panels are then nodes), cards (containers of content rows that
arrows attach to), icons, photo-like pictures (unlabelled, or named by a caption: then a
node), free-text inputs and outputs, operators (⊕, ⊗) fed by lines with or without heads,
straight / elbow / curved routes, line widths and dash styles, filled / open / chevron /
barbed / block arrowheads, double-headed arrows, bus and brace fans, forced crossings, arrow
labels beside the line, in their own box or on a halo, titles, captions, notes, column
headers, legends and footnotes. Modules: ``paper_knobs`` (knobs), ``paper_scene`` (the
abstract figure), ``paper_text`` (vocabulary, text markup), ``paper_layout`` (sizes, ranks,
coordinates, groups), ``paper_route`` (arrows), ``paper_geom`` (path geometry), ``paper_place`` (bands, texts),
``paper_draw``, ``paper_icons`` and ``paper_theme`` (SVG, pictures, colours), ``paper_page``
(the measuring page), ``paper_truth`` (graph, elements, record).

``SynthDiagram.knobs`` holds the knob values the item was drawn with (what was asked for; a
knob whose effect the figure could not take, e.g. a brace fan next to a container border that
became a bus, is still recorded as asked); ``meta`` says what was realised: arrows per route
kind, crossings, container nodes, dropped arrows, page colour and what a transparent figure was
composited on.

>>> # with Browser() as b: d = generate(7, browser=b, theme="dark", fan="brace")
"""

from __future__ import annotations

import random
from typing import Any

from sciflow.bench.synth.browser import Browser
from sciflow.bench.synth.common import SynthDiagram
from sciflow.bench.synth.paper_draw import figure_svg
from sciflow.bench.synth.paper_knobs import KNOBS, coerce, sample
from sciflow.bench.synth.paper_layout import layout, node_sizes
from sciflow.bench.synth.paper_page import page_html
from sciflow.bench.synth.paper_place import bands, panel_arrow, place_all, to_figure_axes
from sciflow.bench.synth.paper_route import Router
from sciflow.bench.synth.paper_scene import Scene, build
from sciflow.bench.synth.paper_text import measure_page
from sciflow.bench.synth.paper_truth import build as build_truth

__all__ = ["KNOBS", "coerce", "generate"]


def _measure(browser: Browser, sc: Scene) -> None:
    _, res = browser.render(measure_page(sc.texts), 8, 8)
    for t in sc.texts:
        b = res[t.key]
        t.mb = (round(b[0], 3), round(b[1], 3), round(b[2], 3), round(b[3], 3))


def _hide_lonely_operators(sc: Scene) -> None:
    used = {x for e in sc.edges if e.drawn for x in (e.src, e.dst)}
    for nd in sc.nodes.values():
        if nd.kind == "operator" and nd.id not in used:
            nd.style["hidden"] = True


def generate(seed: int, browser: Browser | None = None, **knobs: Any) -> SynthDiagram:
    """One ``paper`` figure from ``seed`` (deterministic: same seed and knobs, same PNG bytes
    and JSON). ``knobs`` force values of :data:`KNOBS` (CLI strings accepted). Without
    ``browser`` a Chromium is opened and closed for this item only."""
    rng = random.Random(seed)
    k, _forced = sample(rng, knobs)
    sc = build(rng, k)
    own = browser is None
    br = browser if browser is not None else Browser()
    try:
        _measure(br, sc)
        node_sizes(sc, rng)
        sc.meta["gap"] = rng.choice([0.0, 0.0, 1.0, 1.5])
        lay = layout(sc, rng)
        router = Router(sc, lay, rng)
        router.classify()
        bands(sc, lay, router, rng)
        router.route_all()
        panel_arrow(sc)
        _hide_lonely_operators(sc)
        to_figure_axes(sc, lay)
        place_all(sc, lay, rng)
        svg, w, h = figure_svg(sc)
        img, res = br.render(page_html(svg, sc.theme.page, float(k["scale"])), w, h)
    finally:
        if own:
            br.close()
    if img.shape[0] != h or img.shape[1] != w:
        img = img[:h, :w]
    return build_truth(sc, img, res, f"paper-{seed}")
