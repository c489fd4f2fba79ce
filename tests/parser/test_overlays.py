"""Debug overlays: every agent draws its own (``draw_overlay``); the pipeline only calls it."""

from __future__ import annotations

import copy

import cv2
import numpy as np

import sciflow.pipeline  # noqa: F401  (registers the agents)
from sciflow.agents import overlay
from sciflow.agents.diagram import (
    Diagram,
    EdgeEvidence,
    GroundedNode,
    LayoutBox,
    Stroke,
    TextBox,
    TextLabel,
)
from sciflow.agents.registry import AGENTS
from sciflow.format.graph import DiagramGraph, Edge, Node
from sciflow.format.imageio import fit_working_size

from .drawing import Canvas


def _rect(b):
    return ((b[0], b[1]), (b[2], b[1]), (b[2], b[3]), (b[0], b[3]))


def _diagram() -> Diagram:
    d = Diagram(image=np.full((120, 300, 3), 255, np.uint8))
    a, b = (20.0, 40.0, 80.0, 80.0), (200.0, 40.0, 260.0, 80.0)
    d.text_lines = [TextBox(0, "Alpha", (30.0, 50.0, 70.0, 64.0), 0.99)]
    d.text_labels = [TextLabel(0, "Alpha", (28.0, 48.0, 72.0, 66.0), 0.99, (0,))]
    d.layout = [LayoutBox((190.0, 30.0, 270.0, 90.0), "node", 0.9)]
    d.nodes = [
        GroundedNode("s0", "Alpha", a, "rect", 0.9, _rect(a)),
        GroundedNode("t0", "note", b, "text", 0.9, _rect(b), candidate=True),
    ]
    d.strokes = [Stroke(0, ((80.0, 60.0), (200.0, 60.0)), (("s0", 80.0, 60.0, False), ("t0", 200.0, 60.0, True)),
                        "solid", 2.0, (80.0, 58.0, 200.0, 62.0))]
    d.edges = [EdgeEvidence("s0", "t0", 0.9, "solid", None, 0)]
    d.scale = 2.0  # the graph is in input pixels: half the working image's
    d.graph = DiagramGraph("g", nodes=(Node("s0", "Alpha", bbox=(10.0, 20.0, 40.0, 40.0)),
                                       Node("t0", "note", bbox=(100.0, 20.0, 130.0, 40.0))),
                           edges=(Edge("s0", "t0"),))
    return d


def _drawn(name: str, d: Diagram) -> np.ndarray:
    canvas = overlay.faded(d.image)
    AGENTS.get(name).draw_overlay(None, d, canvas)  # the drawing reads the diagram only
    return canvas


def test_every_agent_draws_its_own_overlay():
    for name in AGENTS.names():
        assert callable(getattr(AGENTS.get(name), "draw_overlay", None)), name


def test_each_agent_draws_what_it_added():
    d = _diagram()
    px = lambda im, x, y: tuple(int(v) for v in im[y, x])  # noqa: E731
    im = _drawn("text_spotter", d)
    assert px(im, 30, 57) == overlay.BLUE and px(im, 28, 57) == overlay.RED
    im = _drawn("layout", d)
    assert px(im, 190, 60) == overlay.PURPLE
    im = _drawn("grounder", d)
    assert px(im, 20, 60) == overlay.GREEN and px(im, 200, 60) == overlay.GREY
    im = _drawn("topology_coder", d)
    assert px(im, 80, 57) == overlay.BLUE and px(im, 200, 57) == overlay.RED  # tail, head
    assert px(im, 140, 60) == overlay.ORANGE  # the edge, centre to centre
    im = _drawn("graph_architect", d)
    assert px(im, 20, 60) == overlay.GREEN and px(im, 140, 60) == overlay.RED
    d.graph = None
    assert (_drawn("graph_architect", d) == overlay.faded(d.image)).all()


class _Blank:
    """An agent that draws nothing of its own."""

    def run(self, diagram: Diagram) -> None:
        pass


def test_an_agent_without_draw_overlay_gets_the_plain_faded_image(parser, tmp_path):
    c = Canvas(620, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 420, 50)
    c.arrow([(180, 75), (420, 75)])
    p = copy.copy(parser)
    p.agents = {**parser.agents, "blank": _Blank()}
    p(c.array(), item_id="toy", debug_dir=tmp_path)
    names = sorted(f.name for f in tmp_path.glob("toy.*.png"))
    assert len(names) == len(parser.agents) + 1
    work, _ = fit_working_size(c.array(), max_side=p.max_side, min_side=p.min_side)
    band = overlay.TITLE_BAND
    blank = cv2.imread(str(tmp_path / f"toy.{len(parser.agents) + 1}_blank.png"))[:, :, ::-1]
    assert (blank[band:] == overlay.faded(work)).all()  # below the title band, untouched
    grounder = list(parser.agents).index("grounder") + 1
    drawn = cv2.imread(str(tmp_path / f"toy.{grounder}_grounder.png"))[:, :, ::-1]
    assert (drawn[band:] != overlay.faded(work)).any()


def test_every_overlay_has_a_title_band_and_the_agents_legend(parser, tmp_path):
    c = Canvas(620, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 420, 50)
    c.arrow([(180, 75), (420, 75)])
    parser(c.array(), item_id="toy", debug_dir=tmp_path)
    work, _ = fit_working_size(c.array(), max_side=parser.max_side, min_side=parser.min_side)
    step = list(parser.agents).index("topology_coder") + 1
    topo = cv2.imread(str(tmp_path / f"toy.{step}_topology_coder.png"))[:, :, ::-1]
    assert topo.shape[0] == work.shape[0] + overlay.TITLE_BAND and topo.shape[1] == work.shape[1]
    band = topo[: overlay.TITLE_BAND]
    assert (band < 100).all(axis=2).any()  # the title is written in black
    # one swatch per legend entry, in the entry's colour
    from sciflow.agents.topology_coder import TopologyCoder

    for _meaning, color in TopologyCoder.overlay_legend:
        assert (np.abs(band.astype(int) - np.array(color)).max(axis=2) == 0).sum() >= 100


def test_the_topology_overlay_draws_each_block_arrow_from_tail_to_tip(parser, tmp_path):
    from .test_block_arrows import arrow_polygon

    c = Canvas(560, 160)
    c.box("Encoder", 30, 55, w=150)
    c.box("Decoder", 380, 55, w=150)
    c.d.polygon(arrow_polygon(200, 80, 360, 80), outline="#444444", fill="white", width=2)
    parser(c.array(), item_id="toy", debug_dir=tmp_path)
    step = list(parser.agents).index("topology_coder") + 1
    topo = cv2.imread(str(tmp_path / f"toy.{step}_topology_coder.png"))[:, :, ::-1]
    body = topo[overlay.TITLE_BAND:].astype(int)
    purple = (np.abs(body - np.array(overlay.PURPLE)).max(axis=2) == 0)
    ys, xs = np.nonzero(purple)
    assert xs.size > 0
    # along the arrow's axis, from near its tail to near its tip (in working-size pixels)
    work, scale = fit_working_size(c.array(), max_side=parser.max_side, min_side=parser.min_side)
    assert abs(np.median(ys) - 80 * scale) <= 4 * scale
    assert xs.min() <= 210 * scale and xs.max() >= 350 * scale
