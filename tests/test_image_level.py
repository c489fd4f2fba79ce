"""Image-level metric: visual flow on hand-made geometry, prompt chunking, the combination rule,
fallback labelling and determinism. Real-model loading is in test_image_models.py."""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest
from PIL import Image, ImageDraw

from sciflow.config import ConfigError, ImageConfig, load_config
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.image_level import (
    ImageLevelResult,
    chunk_text,
    image_level,
    pad_square,
    readable_arrowhead,
    visual_flow,
)


def boxed(nodes: dict[str, tuple[float, float, float, float] | None], edges: Sequence[tuple] = (),
          gid: str = "g") -> DiagramGraph:
    """Nodes id -> bbox (label = id); edges (u, v) or (u, v, style, confidence)."""
    ns = [{"id": k, "label": k, **({"bbox": list(b)} if b is not None else {})} for k, b in nodes.items()]
    es = []
    for e in edges:
        d = {"source": e[0], "target": e[1]}
        if len(e) > 2 and e[2] is not None:
            d["style"] = e[2]
        if len(e) > 3 and e[3] is not None:
            d["confidence"] = e[3]
        es.append(d)
    return DiagramGraph.from_dict({"id": gid, "nodes": ns, "edges": es})


def row(n: int, y: float = 0.0) -> dict[str, tuple[float, float, float, float]]:
    """n boxes 100x50 in a row, 100 px apart: a, b, c, ..."""
    return {chr(97 + i): (200.0 * i, y, 200.0 * i + 100, y + 50) for i in range(n)}


def column(n: int) -> dict[str, tuple[float, float, float, float]]:
    return {chr(97 + i): (0.0, 150.0 * i, 100.0, 150.0 * i + 50) for i in range(n)}


# ------------------------------------------------------------------ visual flow
def test_left_to_right_chain_scores_one():
    f, d = visual_flow(boxed(row(3), [("a", "b"), ("b", "c")]))
    assert f == 1.0
    assert (d["direction"], d["crossings"], d["overlaps"], d["arrowheads"]) == (1.0, 1.0, 1.0, 1.0)
    assert d["dominant"] == "left-to-right" and d["defined"] is True


def test_top_to_bottom_chain_scores_one():
    f, d = visual_flow(boxed(column(3), [("a", "b"), ("b", "c")]))
    assert f == 1.0 and d["dominant"] == "top-to-bottom"


def test_one_reversed_edge_costs_half_the_direction_weight():
    f, d = visual_flow(boxed(row(3), [("a", "b"), ("c", "b")]))
    assert d["direction"] == 0.5
    assert f == pytest.approx(1.0 - 0.4 * 0.5)
    assert d["per_direction"]["left-to-right"]["against"] == [["c", "b"]]


def test_fully_reversed_and_upward_chains_lose_the_direction_term():
    f, d = visual_flow(boxed(row(3), [("c", "b"), ("b", "a")]))
    assert (f, d["direction"]) == (0.6, 0.0)
    f, d = visual_flow(boxed(column(3), [("c", "b"), ("b", "a")]))  # bottom to top
    assert (f, d["direction"]) == (0.6, 0.0)


def test_l_shaped_flow_follows_reading_order():
    # a -> b to the right, then b -> c straight down: row-major reading order, no penalty
    nodes = {"a": (0, 0, 100, 50), "b": (200, 0, 300, 50), "c": (200, 150, 300, 200)}
    f, d = visual_flow(boxed(nodes, [("a", "b"), ("b", "c")]))
    assert f == 1.0 and d["dominant"] == "left-to-right"


def test_back_edge_of_a_cycle_is_allowed():
    f, d = visual_flow(boxed(row(3), [("a", "b"), ("b", "c"), ("c", "a")]))
    assert d["per_direction"]["left-to-right"]["back_edges"] == [["c", "a"]]
    assert d["per_direction"]["left-to-right"]["counted"] == 2
    assert f == 1.0


def test_crossing_pair():
    # a top-left, c top-right, b bottom-left, d bottom-right; a->d and b->c cross
    nodes = {"a": (0, 0, 100, 50), "c": (300, 0, 400, 50), "b": (0, 300, 100, 350), "d": (300, 300, 400, 350)}
    f, d = visual_flow(boxed(nodes, [("a", "d"), ("b", "c")]))
    assert (d["crossing_count"], d["possible_crossings"], d["crossings"]) == (1, 1, 0.0)
    assert f == pytest.approx(0.8)
    # the same boxes wired without a crossing
    f2, d2 = visual_flow(boxed(nodes, [("a", "c"), ("b", "d")]))
    assert (d2["crossing_count"], f2) == (0, 1.0)


def test_edges_sharing_a_node_never_count_as_crossing():
    nodes = {"a": (0, 0, 100, 50), "b": (300, 0, 400, 50), "c": (300, 300, 400, 350)}
    _, d = visual_flow(boxed(nodes, [("a", "b"), ("a", "c")]))
    assert d["possible_crossings"] == 0 and d["crossings"] == 1.0


def test_overlapping_boxes():
    nodes = {"a": (0, 0, 100, 100), "b": (80, 0, 180, 100)}  # IoU = 2000 / 18000 > 0.02
    f, d = visual_flow(boxed(nodes, [("a", "b")]))
    assert (d["overlaps"], d["overlapping_pairs"]) == (0.0, [["a", "b"]])
    assert f == pytest.approx(0.8)
    nodes["c"] = (400, 0, 500, 100)
    f, d = visual_flow(boxed(nodes, [("a", "b"), ("b", "c")]))
    assert d["overlaps"] == pytest.approx(1 - 1 / 3, abs=1e-6)
    assert f == pytest.approx(0.8 + 0.2 * (1 - 1 / 3), abs=1e-6)
    # a sliver below the threshold is not an overlap
    _, d = visual_flow(boxed({"a": (0, 0, 100, 100), "b": (99, 0, 199, 100)}, [("a", "b")]))
    assert d["overlaps"] == 1.0


def test_arrowheads_from_style_and_confidence():
    assert readable_arrowhead(None, None) and readable_arrowhead("dashed", 0.5)
    assert not readable_arrowhead("undirected", 0.9) and not readable_arrowhead("Undirected", None)
    assert not readable_arrowhead("solid", 0.49)
    edges = [("a", "b", "solid", 0.9), ("b", "c", "undirected", 0.9), ("c", "d", None, 0.2), ("a", "c")]
    f, d = visual_flow(boxed(row(4), edges))
    assert (d["arrowheads"], d["readable_edges"]) == (0.5, 2)
    assert d["unreadable_edges"] == [["b", "c"], ["c", "d"]]


def test_defined_values_for_degenerate_graphs():
    assert visual_flow(boxed({}))[0] == 0.0
    f, d = visual_flow(boxed({"a": (0, 0, 10, 10)}))
    assert (f, d["defined"]) == (0.0, False)
    f, d = visual_flow(boxed({"a": None, "b": None, "c": None}, [("a", "b"), ("b", "c")]))
    assert (f, d["defined"]) == (0.0, False)
    # boxes but no edges: no flow to read (D = 0, A = 0), nothing crosses or overlaps
    f, d = visual_flow(boxed(row(2)))
    assert (f, d["direction"], d["arrowheads"]) == (pytest.approx(0.4), 0.0, 0.0)


def test_partly_located_graph_uses_located_nodes_and_all_edges_for_arrowheads():
    nodes = {**row(2), "z": None}
    f, d = visual_flow(boxed(nodes, [("a", "b"), ("b", "z", "undirected")]))
    assert d["located_nodes"] == 2 and d["direction"] == 1.0 and d["arrowheads"] == 0.5
    assert f == pytest.approx(0.9)


def test_flow_weights_come_from_config():
    cfg = ImageConfig(flow_direction=1.0, flow_crossings=0.0, flow_overlaps=0.0, flow_arrowheads=0.0)
    assert visual_flow(boxed(row(3), [("a", "b"), ("c", "b")]), cfg)[0] == 0.5


def test_flow_is_invariant_to_ids_and_order_and_in_unit_interval():
    rng = random.Random(7)
    for trial in range(60):
        n = rng.randint(0, 7)
        boxes = {}
        for i in range(n):
            x, y = rng.uniform(0, 800), rng.uniform(0, 500)
            boxes[f"n{i}"] = (x, y, x + rng.uniform(0, 150), y + rng.uniform(0, 80))
        ids = list(boxes)
        edges = list({(rng.choice(ids), rng.choice(ids)) for _ in range(rng.randint(0, 10))} if ids else [])
        f, _ = visual_flow(boxed(boxes, edges))
        assert 0.0 <= f <= 1.0
        # rename ids (labels stay) and reverse document order: same score
        ren = {k: f"q{trial}_{k[::-1]}x" for k in ids}
        g2 = DiagramGraph.from_dict({
            "id": "g2",
            "nodes": [{"id": ren[k], "label": k, "bbox": list(b)} for k, b in reversed(boxes.items())],
            "edges": [{"source": ren[u], "target": ren[v]} for u, v in reversed(edges)],
        })
        assert visual_flow(g2)[0] == f


# ---------------------------------------------------------------- chunking
def words(text: str) -> int:
    return len(text.split())


def test_chunking_packs_sentences_under_the_limit_without_dropping_anything():
    text = "One two three. Four five six seven.\nEight nine.\n\nTen eleven twelve thirteen fourteen fifteen sixteen."
    chunks = chunk_text(text, words, 5)
    assert [c for c, _ in chunks] == [
        "One two three.", "Four five six seven.", "Eight nine. Ten eleven twelve",
        "thirteen fourteen fifteen sixteen.",
    ]
    assert all(n <= 5 for _, n in chunks)
    assert " ".join(c for c, _ in chunks).split() == text.split()


def test_chunking_splits_an_overlong_word_into_characters():
    chunks = chunk_text("ab " + "x" * 12, len, 5)
    assert "".join(c for c, _ in chunks).replace(" ", "") == "ab" + "x" * 12
    assert all(n <= 5 for _, n in chunks)


def test_empty_prompt_gives_no_chunks():
    assert chunk_text("  \n ", words, 5) == []
    with pytest.raises(ValueError):
        chunk_text("x", words, 0)


def test_chunking_with_clip_tokenizer_keeps_every_token():
    from open_clip import get_tokenizer

    tok = get_tokenizer("ViT-B-32")
    count = lambda t: len(tok.encode(t))  # noqa: E731
    sentence = ("The image encoder (a ViT-B/16 backbone) maps each patch to a token; "
                "cross-attention fuses z_img with the text embedding, and the loss L_cls supervises it. ")
    body = "Framework overview:\n" + sentence * 12
    chunks = chunk_text(body, count, tok.context_length - 2)
    assert len(chunks) > 3 and all(0 < n <= 75 for _, n in chunks)
    # the chunks' token ids, in order, are exactly the ids of the whole prompt
    assert [i for c, _ in chunks for i in tok.encode(c)] == tok.encode(body)
    # an over-long "word" is split, never dropped
    odd = body + "\n" + "x" * 400
    chunks = chunk_text(odd, count, 75)
    assert all(n <= 75 for _, n in chunks)
    assert "".join(c for c, _ in chunks).replace(" ", "") == "".join(odd.split())


# ------------------------------------------------------- combination (stub models)
class StubSemantic:
    """'image' modality: cosine per chunk is given by the first word of the chunk."""

    name = "stub-clip"
    is_fallback = False
    modality = "image"
    max_tokens = 4

    def __init__(self, cosines: dict[str, float]):
        self.cosines = cosines

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def encode_image(self, image: Image.Image) -> np.ndarray:
        return np.array([1.0, 0.0])

    def encode_texts(self, texts):
        out = []
        for t in texts:
            c = self.cosines[t.split()[0]]
            out.append([c, float(np.sqrt(1 - c * c))])
        return np.array(out)

    def describe(self):
        return {"backend": self.name, "fallback": False}


class StubModels:
    def __init__(self, semantic, perceptual):
        self.semantic, self.perceptual = semantic, perceptual

    def describe(self):
        s = self.semantic.describe() if self.semantic else {"backend": None, "fallback": True}
        p = self.perceptual.describe()
        return {"semantic": s, "perceptual": p, "fallback": bool(s["fallback"] or p["fallback"])}


def ssim_backend():
    from sciflow.models.image_models import SsimPerceptual

    return SsimPerceptual()


def chain_graph() -> DiagramGraph:
    return boxed(row(3), [("a", "b"), ("b", "c")])


def white(w: int = 120, h: int = 80) -> np.ndarray:
    return np.full((h, w, 3), 255, np.uint8)


def test_clipscore_token_weighted_chunks_and_renormalised_weights():
    sem = StubSemantic({"alpha": 0.3, "beta": 0.1})
    prompt = "alpha one two three. beta one."  # chunks of 4 and 2 tokens
    r = image_level(white(), prompt, chain_graph(), None, ImageConfig(), StubModels(sem, ssim_backend()))
    cos = (4 * 0.3 + 2 * 0.1) / 6
    assert r.details["semantic"]["cosine"] == pytest.approx(cos, abs=1e-6)
    assert r.semantic_consistency == pytest.approx(min(2.5 * cos, 1.0), abs=1e-6)
    assert r.perceptual_similarity is None and r.partial is True
    assert r.details["weights_used"] == {"semantic_consistency": 0.5, "visual_flow": 0.5}
    assert r.score == pytest.approx((0.4 * r.semantic_consistency + 0.4 * 1.0) / 0.8, abs=1e-6)
    assert r.details["unavailable"] == {"perceptual_similarity": "no source figure for this item"}
    assert r.fallback is False and r.details["fallback_terms"] == []  # ssim was not used: no source


def test_clipscore_clips_negative_and_large_cosines():
    graph = chain_graph()
    neg = image_level(white(), "alpha", graph, None, ImageConfig(), StubModels(StubSemantic({"alpha": -0.2}),
                                                                                ssim_backend()))
    big = image_level(white(), "alpha", graph, None, ImageConfig(), StubModels(StubSemantic({"alpha": 0.9}),
                                                                                ssim_backend()))
    assert (neg.semantic_consistency, big.semantic_consistency) == (0.0, 1.0)


def test_full_row_with_source_and_fallback_perceptual_is_flagged():
    img = Image.new("RGB", (300, 120), "white")
    ImageDraw.Draw(img).rectangle([20, 30, 120, 90], outline="black", width=3)
    src = img.copy()
    ImageDraw.Draw(src).rectangle([180, 30, 280, 90], outline="black", width=3)
    models = StubModels(StubSemantic({"alpha": 0.2}), ssim_backend())
    r = image_level(np.asarray(img), "alpha", chain_graph(), np.asarray(src), ImageConfig(), models)
    assert r.partial is False and 0.0 < r.perceptual_similarity < 1.0
    assert r.score == pytest.approx(0.4 * 0.5 + 0.2 * r.perceptual_similarity + 0.4 * 1.0, abs=1e-6)
    assert r.fallback is True and r.details["fallback_terms"] == ["perceptual"]
    assert r.backends["perceptual"]["backend"] == "ssim" and "FALLBACK" in r.details["notes"][0]
    d = r.to_dict()
    assert d["fallback"] is True and d["backends"]["perceptual"]["fallback"] is True
    for key in ("score", "semantic_consistency", "perceptual_similarity", "visual_flow"):
        assert 0.0 <= d[key] <= 1.0


def test_rgba_is_composited_on_white_and_identical_images_score_one(tmp_path):
    clear = Image.new("RGBA", (200, 100), (0, 0, 0, 0))
    path = tmp_path / "clear.png"
    clear.save(path)
    models = StubModels(StubSemantic({"alpha": 0.2}), ssim_backend())
    r = image_level(path, "alpha", chain_graph(), white(200, 100), ImageConfig(), models)
    assert r.perceptual_similarity == 1.0


def test_empty_prompt_and_no_semantic_backend_leave_s_out():
    g = chain_graph()
    r = image_level(white(), "   ", g, None, ImageConfig(), StubModels(StubSemantic({}), ssim_backend()))
    assert r.semantic_consistency is None and r.score == 1.0 and r.partial
    r = image_level(white(), "x", g, white(), ImageConfig(), StubModels(None, ssim_backend()))
    assert r.semantic_consistency is None and r.details["weights_used"]["perceptual_similarity"] == pytest.approx(
        1 / 3, abs=1e-6)


def test_pad_square_centres_on_white():
    sq = np.asarray(pad_square(Image.new("RGB", (40, 20), "black")))
    assert sq.shape == (40, 40, 3)
    assert (sq[:10] == 255).all() and (sq[30:] == 255).all() and (sq[10:30] == 0).all()


def test_result_type_and_determinism():
    models = StubModels(StubSemantic({"alpha": 0.25}), ssim_backend())
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (60, 90, 3), dtype=np.uint8)
    src = rng.integers(0, 256, (70, 50, 3), dtype=np.uint8)
    a = image_level(img, "alpha beta", chain_graph(), src, ImageConfig(), models)
    b = image_level(img.copy(), "alpha beta", chain_graph(), src.copy(), ImageConfig(), models)
    assert isinstance(a, ImageLevelResult) and a == b and a.to_dict() == b.to_dict()


# ------------------------------------------------------------------- config
def test_image_config_defaults_and_validation():
    cfg = load_config().image
    assert cfg == ImageConfig()
    assert (cfg.semantic_weight, cfg.perceptual_weight, cfg.flow_weight) == (0.4, 0.2, 0.4)
    assert (cfg.semantic_backend, cfg.clip_model, cfg.clip_pretrained, cfg.perceptual_backend) == (
        "auto", "ViT-B-32", "openai", "auto")
    assert load_config(overrides={"image": {"perceptual_backend": "ssim"}}).image.perceptual_backend == "ssim"
    with pytest.raises(ConfigError):
        ImageConfig(semantic_weight=0.5)
    with pytest.raises(ConfigError):
        ImageConfig(semantic_backend="siglip")
    with pytest.raises(ConfigError):
        load_config(overrides={"image": {"clip_modle": "x"}})
