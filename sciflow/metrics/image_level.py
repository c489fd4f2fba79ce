"""Image-level score: 0.4 semantic consistency + 0.2 perceptual similarity + 0.4 visual flow.

Definition (weights and constants from the ``[image]`` config table, :class:`~sciflow.config.ImageConfig`)
-------------------------------------------------------------------------------------------------------
``I = semantic_weight * S + perceptual_weight * P + flow_weight * F`` (defaults 0.4 / 0.2 / 0.4).
Every term lies in [0, 1]. A term that is unavailable (``None``) is left out and the remaining
weights are renormalised to sum to 1; the result is then marked ``partial``. ``I`` is ``None``
only when no term with a positive weight is left. All numbers are rounded to 6 decimals.

S, semantic consistency (backend ``clip``; SciFlow-Bench / CLIPScore, Hessel et al. 2021)
    The image is padded to a square on white (so CLIP's centre crop removes nothing) and
    embedded. The prompt text is split into chunks that fit CLIP's context (see
    :func:`chunk_text`: lines, then sentences, packed greedily under ``context_length - 2``
    tokens of the model's own tokenizer; never truncated). With ``cos_i`` the cosine between
    the image and chunk ``i`` (``n_i`` tokens), ``cos = sum(n_i cos_i) / sum(n_i)`` and
    ``S = clip(w * max(cos, 0), 0, 1)`` with ``w = image.clip_scale = 2.5``.
    An empty prompt leaves S unavailable.

S, FALLBACK backend ``ocr-text-embedding`` (when CLIP weights are absent)
    The text read in the image is the predicted graph's node labels, non-empty ones, sorted
    case-folded and joined with ``"; "``. That text and the prompt are both chunked for
    MiniLM's 256-token window, each chunk embedded; ``S = sum(n_a n_b c_ab) / sum(n_a n_b)`` over
    label chunks ``a`` and prompt chunks ``b`` with ``c_ab`` the cosine clipped to [0, 1] (no
    CLIPScore scaling: it is a different model). When the prompt lists relations
    (:mod:`sciflow.metrics.prompt_relations`), ``S = 0.5 * that cosine + 0.5 * relation
    agreement`` (the F1 of the drawn arrows against the prompt's relations, labels located by
    :func:`~sciflow.metrics.prompt_relations.locate`), so reversed arrows or labels in the wrong
    boxes lower it; labels alone cannot see either. No labels gives S = 0. The result is flagged
    ``fallback`` with a note: it is not the paper's metric.

P, perceptual similarity (backend ``lpips``)
    Both images are padded to a square on white (centred) and resized to
    ``common_size x common_size`` (256, Pillow bicubic), scaled to [-1, 1];
    ``P = 1 - clip(LPIPS_alex(gen, source), 0, 1)``. FALLBACK ``ssim``: the SSIM map of the
    grayscale images at the same size, averaged over the *ink* of either image (pixels darker than
    the white page by more than 0.1, grown by 2 px), ``P = clip(that mean, 0, 1)``: plain SSIM
    averaged over the whole square gave a blank page 0.87-0.92 against a diagram, because most of
    a diagram is white page (see :class:`sciflow.models.image_models.SsimPerceptual`). Without a
    source figure P is unavailable.

F, visual flow: :func:`visual_flow` (exact definition there).

Example
-------
>>> from sciflow.format.graph import DiagramGraph
>>> g = DiagramGraph.from_dict({"id": "g", "nodes": [
...     {"id": "a", "label": "A", "bbox": [0, 0, 100, 50]},
...     {"id": "b", "label": "B", "bbox": [200, 0, 300, 50]},
...     {"id": "c", "label": "C", "bbox": [400, 0, 500, 50]}],
...     "edges": [{"source": "a", "target": "b"}, {"source": "c", "target": "b"}]})
>>> score, d = visual_flow(g)
>>> score, d["direction"], d["dominant"]
(0.8, 0.5, 'left-to-right')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from sciflow.config import Config, ImageConfig
from sciflow.format.graph import DiagramGraph, Node
from sciflow.format.imageio import to_rgb
from sciflow.metrics.prompt_relations import locate, prompt_relations, relation_agreement
from sciflow.models.image_models import ImageModels, get_image_models

DECIMALS = 6
#: the fallback semantic term's weight on relation agreement (module docstring)
FALLBACK_RELATION_WEIGHT = 0.5
WHITE = (255, 255, 255)
LR, TB = "left-to-right", "top-to-bottom"


def _r(x: float) -> float:
    return round(float(x), DECIMALS)


@dataclass(frozen=True)
class ImageLevelResult:
    score: float | None
    semantic_consistency: float | None
    perceptual_similarity: float | None
    visual_flow: float
    partial: bool
    backends: dict[str, dict] = field(default_factory=dict)
    details: dict = field(default_factory=dict)

    @property
    def fallback(self) -> bool:
        """True when a term was computed by a substitute for the paper's model."""
        return bool(self.details.get("fallback", False))

    def to_dict(self) -> dict[str, Any]:
        return {
            "score": self.score,
            "semantic_consistency": self.semantic_consistency,
            "perceptual_similarity": self.perceptual_similarity,
            "visual_flow": self.visual_flow,
            "partial": self.partial,
            "fallback": self.fallback,
            "backends": {k: dict(v) for k, v in self.backends.items()},
            "details": self.details,
        }


# ------------------------------------------------------------------ chunking
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def chunk_text(text: str, count_tokens: Callable[[str], int], max_tokens: int) -> list[tuple[str, int]]:
    """Split ``text`` into ``(chunk, n_tokens)`` pieces of at most ``max_tokens`` tokens each.

    Units are the non-empty lines of ``text``, each split after ``. ! ? ;`` followed by
    whitespace. A unit longer than ``max_tokens`` is split into words (whitespace), and a word
    longer than that into characters. Units are packed greedily in order, joined by one space,
    while ``count_tokens(joined) <= max_tokens``. Nothing is dropped: every non-space character of
    ``text`` lands in exactly one chunk, in order (tested: for open_clip's tokenizer the chunks'
    token ids concatenate to the ids of the whole text).
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be >= 1")
    units: list[str] = []
    for line in text.splitlines():
        for sentence in _SENTENCE_END.split(line.strip()):
            if sentence.strip():
                units.extend(_split_long(sentence.strip(), count_tokens, max_tokens))
    chunks: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current} {unit}" if current else unit
        if current and count_tokens(candidate) > max_tokens:
            chunks.append(current)
            current = unit
        else:
            current = candidate
    if current:
        chunks.append(current)
    return [(c, count_tokens(c)) for c in chunks]


def _split_long(unit: str, count_tokens: Callable[[str], int], max_tokens: int) -> list[str]:
    if count_tokens(unit) <= max_tokens:
        return [unit]
    pieces: list[str] = []
    for word in unit.split():
        if count_tokens(word) <= max_tokens:
            pieces.append(word)
            continue
        part = ""
        for ch in word:
            if part and count_tokens(part + ch) > max_tokens:
                pieces.append(part)
                part = ch
            else:
                part += ch
        if part:
            pieces.append(part)
    return pieces


# --------------------------------------------------------------- images
def _load(image: np.ndarray | str | Path | Image.Image, name: str) -> Image.Image:
    """RGB PIL image; alpha composited on white (:func:`sciflow.format.imageio.to_rgb`)."""
    return Image.fromarray(to_rgb(image, name=name))


def pad_square(image: Image.Image) -> Image.Image:
    """``image`` centred on a white square canvas of side ``max(w, h)``."""
    w, h = image.size
    side = max(w, h)
    if w == h:
        return image
    canvas = Image.new("RGB", (side, side), WHITE)
    canvas.paste(image, ((side - w) // 2, (side - h) // 2))
    return canvas


def common_size(image: Image.Image, size: int) -> np.ndarray:
    """Padded to square on white, resized to ``size x size`` (bicubic), RGB float64 in [0, 1]."""
    sq = pad_square(image).resize((size, size), Image.Resampling.BICUBIC)
    return np.asarray(sq, dtype=np.float64) / 255.0


# -------------------------------------------------------------- semantic
def _semantic(models: ImageModels, image: Image.Image | None, prompt: str, graph: DiagramGraph,
              config: ImageConfig) -> tuple[float | None, dict[str, Any]]:
    backend = models.semantic
    if backend is None:
        return None, {"unavailable": "no semantic backend could be loaded"}
    prompt_chunks = chunk_text(prompt or "", backend.count_tokens, backend.max_tokens)
    if not prompt_chunks:
        return None, {"backend": backend.name, "unavailable": "empty prompt text"}
    texts = [c for c, _ in prompt_chunks]
    weights = np.array([n for _, n in prompt_chunks], dtype=np.float64)
    if backend.modality == "image":
        assert image is not None, "an image-modality backend needs the decoded image"
        img = backend.encode_image(pad_square(image))
        cos = np.round(backend.encode_texts(texts) @ img, DECIMALS)
        mean = float(np.dot(weights, cos) / weights.sum()) if weights.sum() > 0 else float(cos.mean())
        score = min(max(config.clip_scale * max(mean, 0.0), 0.0), 1.0)
        return _r(score), {
            "backend": backend.name,
            "rule": "clip(w * max(token-weighted mean cosine, 0), 0, 1)",
            "clip_scale": config.clip_scale,
            "cosine": _r(mean),
            "chunks": [{"tokens": int(n), "cosine": _r(c)} for n, c in zip(weights, cos, strict=True)],
        }
    labels = sorted((n.label.strip() for n in graph.nodes if n.label.strip()), key=lambda s: (s.casefold(), s))
    label_text = "; ".join(labels)
    label_chunks = chunk_text(label_text, backend.count_tokens, backend.max_tokens)
    base = {"backend": backend.name, "rule": "token-weighted mean cosine (clipped to [0, 1]) of label text vs prompt",
            "label_text": label_text, "prompt_chunks": [int(n) for n in weights]}
    relations = prompt_relations(prompt)
    agreement = relation_agreement(relations, graph) if relations else None
    base["relation_agreement"] = None if agreement is None else _r(agreement)
    if not label_chunks:
        return 0.0, {**base, "cosine": 0.0, "reason": "no text read in the image (no node labels)"}
    lw = np.array([n for _, n in label_chunks], dtype=np.float64)
    sims = np.round(np.clip(backend.encode_texts([c for c, _ in label_chunks]) @ backend.encode_texts(texts).T,
                            0.0, 1.0), DECIMALS)
    ww = np.outer(lw, weights)
    mean = float((ww * sims).sum() / ww.sum()) if ww.sum() > 0 else float(sims.mean())
    cosine = min(max(mean, 0.0), 1.0)
    score = cosine if agreement is None else FALLBACK_RELATION_WEIGHT * agreement + (
        1 - FALLBACK_RELATION_WEIGHT) * cosine
    return _r(score), {**base, "cosine": _r(mean), "label_chunks": [int(n) for n in lw],
                       "rule": f"{1 - FALLBACK_RELATION_WEIGHT:g} x label cosine + {FALLBACK_RELATION_WEIGHT:g} x "
                               "relation agreement (F1 of drawn arrows vs the prompt's relations)"
                       if agreement is not None else base["rule"]}


# ----------------------------------------------------------- visual flow
def _centre(b: tuple[float, float, float, float]) -> tuple[float, float]:
    return (b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _orient(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> int:
    v = (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])
    return (v > 1e-9) - (v < -1e-9)


def _crosses(p1: tuple[float, float], p2: tuple[float, float], q1: tuple[float, float],
             q2: tuple[float, float]) -> bool:
    """Proper crossing of segments p1p2 and q1q2 (touching or collinear overlap is not a crossing)."""
    return (_orient(p1, p2, q1) * _orient(p1, p2, q2) < 0) and (_orient(q1, q2, p1) * _orient(q1, q2, p2) < 0)


def _back_edges(nodes: list[Node], edges: list[tuple[str, str]], key: Callable[[Node], Any]) -> set[tuple[str, str]]:
    """Back edges of an iterative DFS that starts nodes and visits successors in ``key`` order."""
    order = sorted(nodes, key=key)
    rank = {n.id: i for i, n in enumerate(order)}
    succ: dict[str, list[str]] = {n.id: [] for n in order}
    for u, v in edges:
        succ[u].append(v)
    for u in succ:
        succ[u].sort(key=rank.__getitem__)
    state: dict[str, int] = {}  # 1 on stack, 2 done
    back: set[tuple[str, str]] = set()
    for root in order:
        if root.id in state:
            continue
        state[root.id] = 1
        stack = [(root.id, iter(succ[root.id]))]
        while stack:
            u, it = stack[-1]
            for v in it:
                if state.get(v) == 1:
                    back.add((u, v))
                elif v not in state:
                    state[v] = 1
                    stack.append((v, iter(succ[v])))
                    break
            else:
                state[u] = 2
                stack.pop()
    return back


def readable_arrowhead(style: str | None, confidence: float | None, min_confidence: float = 0.5) -> bool:
    """An edge shows a readable arrowhead when its style is not ``"undirected"`` (case-insensitive;
    no style counts as directed) **and** its confidence is unset or ``>= min_confidence``."""
    undirected = style is not None and style.strip().lower() == "undirected"
    return not undirected and (confidence is None or confidence >= min_confidence)


def visual_flow(graph: DiagramGraph, config: ImageConfig | None = None,
                prompt: str | None = None) -> tuple[float, dict[str, Any]]:
    """Visual flow ``F`` in [0, 1] of a parsed diagram, from its node boxes and edges. Pure.

    With a ``prompt`` that lists relations (:func:`~sciflow.metrics.prompt_relations.prompt_relations`;
    ``image_level`` always passes it), ``D`` is measured on the *prompt's* relations as drawn:
    each relation ``A -> B`` whose two labels name located drawn nodes
    (:func:`~sciflow.metrics.prompt_relations.locate`) is the pair ``(A's node, B's node)``, and
    ``D`` is the share of those pairs (out of all the prompt's relations) that follow the dominant
    direction below. So the drawing must read in the order the prompt describes: a drawing whose
    arrows all run backwards lays its boxes out against that order, one with its labels shuffled
    puts them out of order. Without a prompt, or a prompt without relations, ``D`` is measured on
    the drawn edges as follows (and ``details["direction_source"]`` says which).

    ``F = flow_direction * D + flow_crossings * X + flow_overlaps * O + flow_arrowheads * A``
    (defaults 0.4 / 0.2 / 0.2 / 0.2). Geometry uses the nodes that have a bbox (``located``
    nodes) and their box centres; self-loops are ignored throughout.

    D, reading direction
        Edges between two located nodes. For each candidate direction, left-to-right (LR,
        row-major reading order) and top-to-bottom (TB, column-major), back edges of cycles are
        excluded: a DFS visits nodes (and successors) in that reading order (centre along the
        direction, then across it, then label, then id) and the edges it finds closing a cycle
        are allowed, i.e. not counted. A counted edge ``u -> v`` with centre offset
        ``(dx, dy)`` *follows* LR when ``dx > t_x``, or ``|dx| <= t_x`` and ``dy > t_y``; it
        follows TB when ``dy > t_y``, or ``|dy| <= t_y`` and ``dx > t_x``; with
        ``t_x = flow_align_tol * min(width_u, width_v)`` and ``t_y`` the same with heights
        (centres within half the narrower box are aligned). ``D`` is the share of counted edges
        that follow the dominant direction: the one with the larger share; on a tie, the one
        with more edges advancing along its own axis (``dx > t_x`` for LR, ``dy > t_y`` for
        TB); then LR.
        No edge between located nodes gives ``D = 0`` (no visible flow).
    X, crossings
        Straight segments between the centres of located endpoints, one per unordered node pair.
        Possible pairs: segment pairs with four distinct endpoints; a crossing is a proper
        intersection (touching and collinear overlap do not count).
        ``X = 1 - crossings / possible`` (1 when no pair is possible).
    O, overlaps
        ``O = 1 - (located pairs with IoU > flow_overlap_iou) / (located pairs)``.
    A, arrowheads
        Share of all edges with a readable arrowhead (:func:`readable_arrowhead`:
        style not ``"undirected"`` and confidence unset or >= ``arrow_min_confidence``).
        No edges gives ``A = 0``.

    Fewer than two located nodes: ``F = 0`` (no flow can be seen), ``details["defined"] = False``.
    """
    cfg = config or ImageConfig()
    located = [n for n in graph.nodes if n.bbox is not None]
    edges = [e for e in graph.edges if e.source != e.target]
    base: dict[str, Any] = {
        "nodes": len(graph.nodes), "located_nodes": len(located), "edges": len(edges),
        "weights": {"direction": cfg.flow_direction, "crossings": cfg.flow_crossings,
                    "overlaps": cfg.flow_overlaps, "arrowheads": cfg.flow_arrowheads},
    }
    if len(located) < 2:
        return 0.0, {**base, "defined": False,
                     "reason": "fewer than two nodes with a bbox: no flow can be seen (F = 0)"}
    box = {n.id: n.bbox for n in located}
    cen = {k: _centre(b) for k, b in box.items()}
    geo = [(e.source, e.target) for e in edges if e.source in box and e.target in box]
    relations = prompt_relations(prompt) if prompt else []
    flow_pairs, n_reference = geo, 0
    if relations:
        where = locate([x for r in relations for x in r], graph)
        flow_pairs = sorted({(where[a].id, where[b].id) for a, b in relations
                             if a in where and b in where and where[a].id in box and where[b].id in box
                             and where[a].id != where[b].id})
        n_reference = len(set(relations))

    # D: reading direction, back edges allowed
    per_dir: dict[str, dict[str, Any]] = {}
    for d in (LR, TB):
        along, across = (0, 1) if d == LR else (1, 0)

        def key(n: Node, along: int = along, across: int = across) -> tuple[float, float, str, str]:
            c = cen[n.id]
            return (c[along], c[across], n.label, n.id)

        back = _back_edges(located, flow_pairs, key)
        counted = [uv for uv in flow_pairs if uv not in back]
        follow = primary = 0
        against: list[list[str]] = []
        for u, v in counted:
            bu, bv = box[u], box[v]
            dx, dy = cen[v][0] - cen[u][0], cen[v][1] - cen[u][1]
            t = (cfg.flow_align_tol * min(bu[2] - bu[0], bv[2] - bv[0]),
                 cfg.flow_align_tol * min(bu[3] - bu[1], bv[3] - bv[1]))
            delta = (dx, dy)
            primary += delta[along] > t[along]
            ok = delta[along] > t[along] or (abs(delta[along]) <= t[along] and delta[across] > t[across])
            if ok:
                follow += 1
            else:
                against.append([u, v])
        denom = len(counted) + max(0, n_reference - len(flow_pairs)) if relations else len(counted)
        share = follow / denom if denom else 0.0
        per_dir[d] = {"counted": len(counted), "follow": follow, "share": _r(share), "advance": int(primary),
                      "back_edges": sorted([list(b) for b in back]), "against": against}
    rank = {d: (per_dir[d]["share"], per_dir[d]["advance"]) for d in (LR, TB)}
    dominant = LR if rank[LR] >= rank[TB] else TB
    direction = per_dir[dominant]["share"]

    # X: crossings
    segs = sorted({tuple(sorted(uv)) for uv in geo})
    possible = crossings = 0
    crossing_pairs = []
    for (a, b), (c, d2) in combinations(segs, 2):
        if len({a, b, c, d2}) < 4:
            continue
        possible += 1
        if _crosses(cen[a], cen[b], cen[c], cen[d2]):
            crossings += 1
            crossing_pairs.append([[a, b], [c, d2]])
    x_score = 1.0 - crossings / possible if possible else 1.0

    # O: overlaps
    pairs = list(combinations(located, 2))
    overlapping = [[p.id, q.id] for p, q in pairs if _iou(p.bbox, q.bbox) > cfg.flow_overlap_iou]
    o_score = 1.0 - len(overlapping) / len(pairs)

    # A: arrowheads
    readable = [e for e in edges if readable_arrowhead(e.style, e.confidence, cfg.arrow_min_confidence)]
    a_score = len(readable) / len(edges) if edges else 0.0

    flow = (cfg.flow_direction * direction + cfg.flow_crossings * x_score + cfg.flow_overlaps * o_score
            + cfg.flow_arrowheads * a_score)
    return _r(min(max(flow, 0.0), 1.0)), {
        **base, "defined": True,
        "direction": _r(direction), "dominant": dominant, "per_direction": per_dir,
        "direction_source": "prompt relations" if relations else "drawn edges",
        "prompt_relations": n_reference, "prompt_relations_located": len(flow_pairs) if relations else None,
        "crossings": _r(x_score), "crossing_count": crossings, "possible_crossings": possible,
        "crossing_pairs": crossing_pairs,
        "overlaps": _r(o_score), "overlapping_pairs": overlapping, "box_pairs": len(pairs),
        "arrowheads": _r(a_score), "readable_edges": len(readable),
        "unreadable_edges": [[e.source, e.target] for e in edges if e not in readable],
    }


# ---------------------------------------------------------------- combine
def image_level(
    image: np.ndarray | str | Path,
    prompt_text: str,
    pred_graph: DiagramGraph,
    source_image: np.ndarray | str | Path | None,
    config: ImageConfig | Config | None = None,
    models: ImageModels | None = None,
) -> ImageLevelResult:
    """The image-level score of one generated diagram (definition in the module docstring).

    ``image``: the generated diagram; ``prompt_text``: the prompt it was generated from;
    ``pred_graph``: the graph parsed from ``image`` (labels and boxes); ``source_image``: the
    source figure of the item, or ``None`` when there is none (P unavailable, row ``partial``).
    ``models`` defaults to :func:`~sciflow.models.image_models.get_image_models` ``(config)``.
    ``config`` is the ``[image]`` table or a whole :class:`~sciflow.config.Config` (its ``image``);
    None: the pinned defaults.
    """
    config = config.image if isinstance(config, Config) else (config or ImageConfig())
    models = models or get_image_models(config)
    # decoded only when a term reads pixels (CLIP, the perceptual term): the label fallback and
    # the flow read the parsed graph, and re-scoring from the parse cache should not decode
    needs_pixels = source_image is not None or getattr(models.semantic, "modality", None) == "image"
    gen = _load(image, "generated image") if needs_pixels else None
    backends = models.describe()
    s, s_details = _semantic(models, gen, prompt_text, pred_graph, config)
    if source_image is None:
        p, p_details = None, {"backend": models.perceptual.name, "unavailable": "no source figure for this item"}
    else:
        src = _load(source_image, "source figure")
        assert gen is not None
        a, b = common_size(gen, config.common_size), common_size(src, config.common_size)
        sim, raw = models.perceptual.similarity(a, b)
        p = _r(sim)
        p_details = {"backend": models.perceptual.name, "raw": _r(raw), "size": config.common_size,
                     "rule": getattr(models.perceptual, "rule", None)}
    f, f_details = visual_flow(pred_graph, config, prompt_text)

    terms = {"semantic_consistency": (s, config.semantic_weight),
             "perceptual_similarity": (p, config.perceptual_weight),
             "visual_flow": (f, config.flow_weight)}
    avail = {k: (v, w) for k, (v, w) in terms.items() if v is not None}
    total = sum(w for _, w in avail.values())
    used = {k: _r(w / total) for k, (_, w) in avail.items()} if total > 0 else {}
    score = _r(sum(v * w for v, w in avail.values()) / total) if total > 0 else None
    if score is not None:
        score = min(max(score, 0.0), 1.0)
    partial = len(avail) < len(terms)
    fallback_roles = [r for r, key in (("semantic", s), ("perceptual", p))
                      if key is not None and backends[r].get("fallback")]
    notes = [backends[r]["note"] for r in fallback_roles if backends[r].get("note")]
    details = {
        "weights": {k: w for k, (_, w) in terms.items()},
        "weights_used": used,
        "unavailable": {k: (s_details if k == "semantic_consistency" else p_details).get("unavailable")
                        for k, (v, _) in terms.items() if v is None},
        "fallback": bool(fallback_roles),
        "fallback_terms": fallback_roles,
        "notes": notes,
        "semantic": s_details,
        "perceptual": p_details,
        "flow": f_details,
    }
    return ImageLevelResult(
        score=score, semantic_consistency=s, perceptual_similarity=p, visual_flow=f, partial=partial,
        backends={"semantic": backends["semantic"], "perceptual": backends["perceptual"]}, details=details,
    )


__all__ = ["ImageLevelResult", "chunk_text", "common_size", "image_level", "pad_square", "readable_arrowhead",
           "visual_flow"]
