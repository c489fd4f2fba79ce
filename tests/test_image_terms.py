"""The offline image terms discriminate: a blank image, a reversed drawing and a shuffled drawing
each score below the clean drawing on every image term (semantic consistency with the
``ocr-text-embedding`` fallback, perceptual similarity with the ``ssim`` fallback, visual flow).
The drawings and their graphs are made by hand here; nothing is parsed."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from sciflow.config import ImageConfig
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.image_level import image_level, visual_flow
from sciflow.metrics.prompt_relations import locate, prompt_relations, relation_agreement
from sciflow.models.image_models import SsimPerceptual, get_image_models
from tests.parser.drawing import font

PROMPT = ("Draw a scientific framework diagram with exactly the components and directed arrows listed below.\n"
          "Components (3):\n- Image Encoder\n- Fusion Module\n- Text Decoder\nGroups: none\n"
          "Relations (2):\n- Image Encoder -> Fusion Module\n- Fusion Module -> Text Decoder\nLayout: left-to-right")


def drawing(labels: list[str], offset: int = 0) -> tuple[np.ndarray, DiagramGraph]:
    """Boxes left to right labelled ``labels``, arrows from each box to the next (heads on the right)."""
    img = Image.new("RGB", (760, 200), "white")
    d = ImageDraw.Draw(img)
    nodes, edges = [], []
    for i, lab in enumerate(labels):
        x = 20 + offset + 250 * i
        box = [x, 70 + offset, x + 200, 130 + offset]
        d.rectangle(box, outline="black", width=3)
        d.text((x + 100, 100 + offset), lab, font=font(20), fill="black", anchor="mm")
        nodes.append({"id": f"n{i}", "label": lab, "bbox": box})
        if i:
            y = 100 + offset
            d.line([x - 50, y, x - 4, y], fill="black", width=3)
            d.polygon([(x, y), (x - 14, y - 7), (x - 14, y + 7)], fill="black")
            edges.append({"source": f"n{i - 1}", "target": f"n{i}"})
    return np.asarray(img), DiagramGraph.from_dict({"id": "d", "nodes": nodes, "edges": edges})


LABELS = ["Image Encoder", "Fusion Module", "Text Decoder"]


@pytest.fixture(scope="module")
def scored():
    models = get_image_models(ImageConfig(semantic_backend="ocr-text-embedding", perceptual_backend="ssim"))
    source, _ = drawing(LABELS, offset=2)  # the source figure: the same content drawn 2 px off
    cases = {
        "clean": drawing(LABELS),
        "reversed": drawing(LABELS[::-1]),  # every arrow reversed: the chain laid out the other way
        "shuffled": drawing([LABELS[1], LABELS[2], LABELS[0]]),  # labels in other boxes, same arrows
        "blank": (np.full((200, 760, 3), 255, np.uint8), DiagramGraph(id="blank")),
    }
    return {k: image_level(img, PROMPT, g, source, ImageConfig(), models) for k, (img, g) in cases.items()}


@pytest.mark.parametrize("term", ["semantic_consistency", "perceptual_similarity", "visual_flow", "score"])
@pytest.mark.parametrize("bad", ["blank", "reversed", "shuffled"])
def test_every_image_term_ranks_the_clean_drawing_first(scored, term, bad):
    assert getattr(scored[bad], term) < getattr(scored["clean"], term)


def test_the_terms_are_the_fallbacks_and_say_so(scored):
    r = scored["clean"]
    assert r.backends["semantic"]["backend"] == "ocr-text-embedding" and r.backends["perceptual"]["backend"] == "ssim"
    assert r.fallback and r.details["fallback_terms"] == ["semantic", "perceptual"]
    assert r.details["semantic"]["relation_agreement"] == 1.0
    assert scored["reversed"].details["semantic"]["relation_agreement"] == 0.0
    assert r.details["flow"]["direction_source"] == "prompt relations"


def test_ink_ssim_gives_a_blank_page_almost_nothing():
    img, _ = drawing(LABELS)
    a = img.astype(np.float64) / 255
    blank = np.ones_like(a)
    sim, _raw = SsimPerceptual().similarity(blank, a)
    assert sim < 0.2  # plain grayscale SSIM over the whole page gave ~0.9 here
    assert SsimPerceptual().similarity(a, a)[0] == pytest.approx(1.0)
    assert SsimPerceptual().similarity(blank, blank)[0] == pytest.approx(1.0)


def test_flow_direction_reads_the_prompt_order():
    _, clean = drawing(LABELS)
    _, backwards = drawing(LABELS[::-1])
    # without the prompt both read as a perfect left-to-right chain; with it only the clean one does
    assert visual_flow(clean)[1]["direction"] == visual_flow(backwards)[1]["direction"] == 1.0
    assert visual_flow(clean, None, PROMPT)[1]["direction"] == 1.0
    assert visual_flow(backwards, None, PROMPT)[1]["direction"] == 0.0


def test_prompt_relations_and_locate():
    assert prompt_relations(PROMPT) == [("Image Encoder", "Fusion Module"), ("Fusion Module", "Text Decoder")]
    assert prompt_relations("Components: A; B\nRelations:\nA -> B\nB -> C") == [("A", "B"), ("B", "C")]
    assert prompt_relations("Draw A and B.") == []
    g = DiagramGraph.from_dict({"id": "g", "nodes": [{"id": "x", "label": "Image Encodr"},
                                                     {"id": "y", "label": "Fusion Module"}],
                                "edges": [{"source": "x", "target": "y"}]})
    where = locate(["Image Encoder", "Fusion Module", "Text Decoder"], g)
    assert {k: v.id for k, v in where.items()} == {"Image Encoder": "x", "Fusion Module": "y"}
    # one of two relations drawn, the one drawn is right: P = 1, R = 1/2, F1 = 2/3
    assert relation_agreement(prompt_relations(PROMPT), g) == pytest.approx(2 / 3)
