"""Texts of the ``paper`` style: vocabulary (words, math, short labels, annotations), the text
record every drawn string gets, and its SVG markup.

A :class:`Text` is drawn as one SVG ``<text>`` (one ``<tspan>`` per line; sub- and
superscripts as nested ``<tspan baseline-shift>``); its truth string writes sub- and
superscripts inline (``h_{t-1}`` -> ``ht-1``) and joins lines with spaces, as the annotation
protocol asks. Sizes come from the browser: every text is measured once at the origin
(:func:`measure_page`) before layout, and measured again where it was drawn.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from html import escape
from typing import Any

from sciflow.bench.synth.common import CLUSTER_LABELS, EDGE_LABELS, MODIFIERS, sample_labels

Run = tuple[str, str, bool]  # (text, "" | "sub" | "sup", italic)

SHORT = ["MLP", "FFN", "Conv", "LN", "Attn", "GRU", "LSTM", "512", "64", "256", "CLS", "ViT", "LoRA", "BN",
         "ReLU", "GELU", "Pool", "Norm", "Concat", "Linear", "Q", "K", "V", "1x1", "3x3", "Emb", "Head", "RNN",
         "CNN", "VAE", "GAN", "SSM", "MoE", "Top-k", "Gate", "KV", "PE", "Mask", "Loss", "Stem", "Proj", "SiLU"]
MATH_BASES = ["x", "y", "z", "h", "s", "c", "q", "k", "v", "o", "a", "W", "Q", "K", "V", "E", "D", "F", "M",
              "f", "g", "p", "u", "e", "θ", "μ", "σ", "α", "ε", "Φ", "π", "L", "ŷ", "â", "x̃"]
MATH_SUBS = ["t", "t-1", "t+1", "0", "1", "2", "i", "k", "θ", "φ", "img", "txt", "enc", "dec", "cls", "T", "N", "L"]
MATH_FUNCS = ["f", "g", "q", "p", "E", "D", "ε", "π", "s"]
MATH_ARGS = ["(x)", "(z)", "(o, a)", "(x, t)", "(·)", "(h)"]
PANEL_TITLES = CLUSTER_LABELS + ["Pre-training", "Fine-tuning", "Preprocess", "Embedding", "Encoder", "Decoder",
                                 "Recycle", "Training", "Inference", "Data Generation", "Model Overview",
                                 "Retrieval", "Planning", "Execution", "Stage 1: Alignment", "Stage 2: Tuning"]
CONTAINER_TITLES = CLUSTER_LABELS + ["Transformer Block", "repeated N times", "Stage 3", "Frozen Modules",
                                     "Visual Abstractor", "Policy Network", "Memory Bank", "Shared Weights"]
CARD_ROWS = ["Worker 1", "Worker 2", "search", "math", "llm", "...", "D0 D1 D2 D3", "Tokenizer", "Layer 1",
             "Layer 2", "Layer N", "LoRA", "Adapter", "Cache", "Tools", "Prompt", "Devices"]
CAPTIONS = ["Input Image", "RGB Image", "LiDAR BEV", "Point Cloud", "Video Frames", "Text Prompt", "Depth Map",
            "Observation", "Molecule", "Query Image", "Reference Photo", "Segmentation", "Audio Clip", "Scene"]
LEGEND = ["Trainable", "Frozen", "Forward pass", "Backward pass", "Data flow", "Gradient", "Inference only",
          "Training only", "Shared weights", "Input", "Output", "Optional"]
FOOTNOTES = ["* weights are frozen during fine-tuning", "† shared across all stages", "Dashed: optional path",
             "Best viewed in color.", "‡ used at inference only", "Grey blocks are not trained."]
NOTES = ["(4 templates)", "×N", "frozen", "shared", "optional", "N layers", "(b, r, c)", "×L", "repeated",
         "pretrained", "k steps", "(B, T, D)"]
HEADERS = ["input", "view", "representation", "projection", "prediction", "output", "encode", "decode",
           "features", "tokens", "fusion", "planning"]
EDGE_EXTRA = ["loss", "K iter", "sg", "update()", "env.step()", "policy()", "top-k", "concat", "copy", "sample",
              "Fetches Task", "feedback", "×N", "residual"]
SYLL = ["Fu", "Me", "Ta", "Vi", "Lo", "Ra", "Ne", "Xo", "Di", "Pro", "Gen", "Mo", "Sy", "Tro", "Ka", "Zen"]
TITLE_FORMS = ["Overview of {name}", "{name}: {mod} {comp} Framework", "The {name} Architecture",
               "{name} Pipeline", "Training and Inference of {name}"]
CAPTION_FORMS = ["Figure {k}: Overview of the proposed {name}. The {mod} {comp} is trained end to end.",
                 "Figure {k}: {name} architecture. Inputs are encoded and fused before decoding.",
                 "Fig. {k}. The {mod} pipeline of {name}; dashed lines are used only at inference.",
                 "Figure {k}: Illustration of {name} with a {mod} {comp}."]


@dataclass
class Text:
    """One drawn string. ``mb`` is its measured box (unrotated, relative to its anchor);
    ``cx, cy`` the centre where it is drawn; ``rotation`` counter-clockwise degrees
    (90: reads bottom to top)."""

    key: str
    lines: list[list[Run]]
    truth: str
    role: str
    family: str
    size: float
    weight: str = "normal"
    italic: bool = False
    fill: str = "#000000"
    rotation: int = 0
    halo: str | None = None
    owner: str | None = None  # node / arrow / container id this text belongs to
    mb: tuple[float, float, float, float] | None = None
    cx: float = 0.0
    cy: float = 0.0
    drawn: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def wh(self) -> tuple[float, float]:
        """Width and height as drawn (rotation applied)."""
        assert self.mb is not None, "text not measured"
        w, h = self.mb[2] - self.mb[0], self.mb[3] - self.mb[1]
        return (h, w) if self.rotation % 180 else (w, h)

    def box(self) -> tuple[float, float, float, float]:
        w, h = self.wh
        return (self.cx - w / 2, self.cy - h / 2, self.cx + w / 2, self.cy + h / 2)


def plain(s: str) -> list[list[Run]]:
    return [[(line, "", False)] for line in s.split("\n")]


def truth_of(lines: list[list[Run]]) -> str:
    return " ".join("".join(r[0] for r in line).strip() for line in lines).strip()


def math_label(rng: random.Random) -> list[list[Run]]:
    """A short math label: ``x``, ``z_t``, ``h_{t-1}``, ``W_1``, ``q_θ(z)``, ``M_{t+1}``, ``z′``…"""
    r = rng.random()
    if r < 0.2:
        f = rng.choice(MATH_FUNCS)
        return [[(f, "", True), (rng.choice(["θ", "φ", "ψ"]), "sub", True), (rng.choice(MATH_ARGS), "", False)]]
    base = rng.choice(MATH_BASES)
    runs: list[Run] = [(base, "", True)]
    if rng.random() < 0.65:
        runs.append((rng.choice(MATH_SUBS), "sub", False))
    if rng.random() < 0.2:
        runs.append((rng.choice(["l", "T", "2", "*"]), "sup", False))
    elif rng.random() < 0.15:
        runs.append(("′", "", False))
    if r > 0.93:
        runs = [("∇", "", False)] + runs
    return [runs]


def node_labels(rng: random.Random, n: int, mode: str, multiline: bool) -> list[list[list[Run]]]:
    """``n`` labels (as lines of runs) with distinct truths, drawn from ``mode``
    (words / math / short / mixed)."""
    words = sample_labels(rng, n + 4)
    shorts = rng.sample(SHORT, len(SHORT))
    out: list[list[list[Run]]] = []
    seen: set[str] = set()
    tries = 0
    while len(out) < n:
        tries += 1
        m = mode if mode != "mixed" else rng.choice(["words", "words", "math", "short"])
        if tries > 40 * n:
            m = "words"
        if m == "math":
            lab = math_label(rng)
        elif m == "short" and shorts:
            lab = plain(shorts.pop())
        else:
            if not words:
                words = sample_labels(rng, n + 4)
            w = words.pop()
            parts = w.split()
            if multiline and len(parts) >= 2 and rng.random() < 0.55:
                k = (len(parts) + 1) // 2 if rng.random() < 0.5 else len(parts) // 2
                lab = plain(" ".join(parts[:k]) + "\n" + " ".join(parts[k:]))
            elif multiline and len(parts) == 1 and rng.random() < 0.3:
                lab = plain(w + "\n" + rng.choice(["(frozen)", "Block", "×N", "(4 blocks)", "Layer"]))
            else:
                lab = plain(w)
        key = truth_of(lab).lower()
        if key and key not in seen:
            seen.add(key)
            out.append(lab)
    return out


def edge_label(rng: random.Random) -> list[list[Run]]:
    r = rng.random()
    if r < 0.2:
        return math_label(rng)
    if r < 0.4:
        return plain(rng.choice(EDGE_EXTRA))
    return plain(rng.choice(EDGE_LABELS))


def model_name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLL) for _ in range(rng.randint(2, 3))) + rng.choice(["", "Net", "-X", "Former"])


def title_text(rng: random.Random, name: str) -> str:
    from sciflow.bench.synth.common import COMPONENTS

    return rng.choice(TITLE_FORMS).format(name=name, mod=rng.choice(MODIFIERS), comp=rng.choice(COMPONENTS))


def caption_text(rng: random.Random, name: str) -> str:
    from sciflow.bench.synth.common import COMPONENTS

    s = rng.choice(CAPTION_FORMS).format(k=rng.randint(1, 7), name=name, mod=rng.choice(MODIFIERS).lower(),
                                         comp=rng.choice(COMPONENTS).lower())
    words = s.split()
    if len(words) > 9 and rng.random() < 0.5:  # a two-line caption
        k = len(words) // 2 + 1
        return " ".join(words[:k]) + "\n" + " ".join(words[k:])
    return s


def _run_svg(run: Run) -> str:
    s, pos, italic = run
    s = escape(s, quote=False)
    attrs = ' font-style="italic"' if italic else ""
    if pos == "sub":
        return f'<tspan baseline-shift="sub" font-size="70%"{attrs}>{s}</tspan>'
    if pos == "sup":
        return f'<tspan baseline-shift="super" font-size="70%"{attrs}>{s}</tspan>'
    return f"<tspan{attrs}>{s}</tspan>" if attrs else s


def text_svg(t: Text, color: str | None = None) -> str:
    """The ``<text>`` element of ``t`` at the origin (lines centred on x = 0, first baseline
    at y = 0)."""
    lh = round(t.size * 1.22, 2)
    parts = []
    for i, line in enumerate(t.lines):
        pos = 'y="0"' if i == 0 else f'dy="{lh}"'
        parts.append(f'<tspan x="0" {pos}>' + "".join(_run_svg(r) for r in line) + "</tspan>")
    style = ' font-style="italic"' if t.italic else ""
    halo = ""
    if t.halo:
        halo = (f' stroke="{t.halo}" stroke-width="{round(t.size * 0.28, 2)}" paint-order="stroke"'
                ' stroke-linejoin="round"')
    return (f'<text font-family="{t.family}" font-size="{t.size}" font-weight="{t.weight}"{style}'
            f' fill="{color or t.fill}" text-anchor="middle"{halo}>' + "".join(parts) + "</text>")


def placed_svg(t: Text) -> str:
    """``t`` drawn centred at ``(cx, cy)`` with its rotation, tagged for measuring."""
    assert t.mb is not None
    mx, my = (t.mb[0] + t.mb[2]) / 2, (t.mb[1] + t.mb[3]) / 2
    rot = f" rotate({-t.rotation})" if t.rotation else ""
    return (f'<g data-text="{t.key}" transform="translate({t.cx:.2f},{t.cy:.2f}){rot} '
            f'translate({-mx:.3f},{-my:.3f})">{text_svg(t)}</g>')


MEASURE_JS = """
document.fonts.ready.then(() => {
  try {
    const R = {};
    document.querySelectorAll('g[data-m]').forEach(g => {
      const b = g.getBBox(); R[g.dataset.m] = [b.x, b.y, b.x + b.width, b.y + b.height];
    });
    window.__result = R;
  } catch (e) { window.__error = String(e); }
  window.__ready = true;
});
"""


def measure_page(texts: list[Text]) -> str:
    """A page that measures every text at the origin (``window.__result``: key -> box)."""
    body = "".join(f'<g data-m="{t.key}">{text_svg(t)}</g>' for t in texts)
    return ("<!doctype html><html><head><meta charset='utf-8'><style>html,body{margin:0;overflow:hidden}"
            "svg{display:block}</style></head><body><svg width='8' height='8' overflow='visible'>"
            f"{body}</svg><script>{MEASURE_JS}</script></body></html>")
