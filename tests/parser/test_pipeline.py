"""End-to-end parsing, config-selected backends, determinism, debug overlays, fingerprints."""

from __future__ import annotations

import pytest

from sciflow.agents import text_spotter
from sciflow.agents.diagram import TextBox
from sciflow.agents.registry import AGENTS, RegistryError
from sciflow.bench.synth import graphviz_render, pillow_render
from sciflow.config import load_config
from sciflow.pipeline import Parser, ParseResult

from .drawing import Canvas, edges_by_label, labels

dot_missing = pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")


@dot_missing
@pytest.mark.parametrize(
    "force",
    [
        {"n": 5, "topology": "linear", "rankdir": "LR", "splines": "spline", "shape": "box", "dpi": 96},
        {"n": 6, "topology": "branching", "rankdir": "TB", "splines": "ortho", "shape": "rounded", "dpi": 96},
        {"n": 5, "topology": "merging", "rankdir": "LR", "splines": "polyline", "shape": "ellipse", "dpi": 96},
    ],
)
def test_graphviz_renders_parse_exactly(parser, force):
    import random

    n = force.pop("n")
    spec = graphviz_render.make_spec(random.Random(7), n, edge_label_p=0.0, dashed_p=0.0, clusters=False, **force)
    d = graphviz_render.render(spec)
    g = parser(d.image).graph
    assert labels(g) == labels(d.graph)
    assert edges_by_label(g) == edges_by_label(d.graph)


def test_pillow_render_parses_exactly(parser):
    d = pillow_render.generate(
        3,
        n=5,
        topology="linear",
        rankdir="LR",
        route="straight",
        head="filled",
        dashed_p=0.0,
        label_p=0.0,
        free_text_p=0.0,
    )
    g = parser(d.image).graph
    assert labels(g) == labels(d.graph)
    assert edges_by_label(g) == edges_by_label(d.graph)


def test_result_shape_determinism_and_debug_dir(parser, tmp_path):
    c = Canvas(620, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 420, 50)
    c.arrow([(180, 75), (420, 75)])
    img = c.array()
    r1 = parser(img, item_id="toy", debug_dir=tmp_path)
    r2 = parser(img, item_id="toy")
    assert isinstance(r1, ParseResult)
    assert r1.graph == r2.graph
    assert r1.graph.id == "toy"
    assert set(r1.timings) >= set(parser.agent_names)
    assert r1.backends["text_spotter"] == "rapidocr"
    pngs = sorted(p.name for p in tmp_path.glob("toy.*.png"))
    assert len(pngs) == len(parser.agent_names)
    n = r1.graph.nodes[0]
    assert n.bbox is not None and n.confidence is not None and n.kind == "rect"


def test_input_file_coordinates_are_in_input_pixels(parser, tmp_path):
    from PIL import Image

    c = Canvas(620, 160)
    c.box("Encoder", 30, 50)
    c.box("Decoder", 420, 50)
    c.arrow([(180, 75), (420, 75)])
    small = c.img.resize((310, 80))  # below min_side: parsed upscaled, reported in input pixels
    p = tmp_path / "small.png"
    small.save(p)
    g = parser(p).graph
    assert g.id == "small"
    b = {n.label: n.bbox for n in g.nodes}["Decoder"]
    assert abs(b[0] - 210) <= 4 and abs(b[2] - 285) <= 4
    Image.open(p)


class FakeText(text_spotter.TextBackend):
    """A test backend that 'reads' fixed labels at fixed places."""

    def read(self, image):
        k = image.shape[1] / 620.0  # the agent may hand the backend an upscaled copy
        return [
            TextBox(0, "Alpha", (70.0 * k, 62.0 * k, 140.0 * k, 88.0 * k), 0.99),
            TextBox(1, "Omega", (460.0 * k, 62.0 * k, 530.0 * k, 88.0 * k), 0.99),
        ]


def test_backend_switch_through_config():
    text_spotter.BACKENDS.add("fake-test", FakeText)
    try:
        cfg = load_config(overrides={"parser": {"text_spotter": {"backend": "fake-test"}}})
        p = Parser(cfg)
        assert p.backends["text_spotter"] == "fake-test"
        c = Canvas(620, 160)
        c.box("Encoder", 30, 50)
        c.box("Decoder", 420, 50)
        c.arrow([(180, 75), (420, 75)])
        g = p(c.array()).graph
        assert edges_by_label(g) == {("alpha", "omega")}
        fp = p.fingerprint()
        assert fp["backends"]["text_spotter"] == "fake-test"
        assert fp["parser_config_hash"] != Parser.__init__.__name__
    finally:
        text_spotter.BACKENDS.remove("fake-test")


def test_unknown_backend_is_a_clear_error():
    cfg = load_config(overrides={"parser": {"shape_hunter": {"backend": "nope"}}})
    with pytest.raises(RegistryError, match="unknown shape_hunter backend 'nope'"):
        Parser(cfg)
    assert "topology_coder" in AGENTS.names()


def test_fingerprint_names_models(parser):
    fp = parser.fingerprint()
    assert fp["agents"] == parser.agent_names
    assert "PP-OCRv6_det_small.onnx" in fp["models"]["text_spotter"]["models"]
    assert len(fp["parser_config_hash"]) == 64
