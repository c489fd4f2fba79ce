"""Augmentations for detector training images that keep every box exact.

Each function takes an RGB ``uint8`` image, its element boxes ``[(cls, (x0, y0, x1, y1))]``
and a :class:`random.Random`, and returns the new image and boxes. Boxes only change under
geometric operations (:func:`rescale`); photometric ones (:func:`jpeg`, :func:`blur`,
:func:`noise`, :func:`colour_shift`) and underlays (:func:`background_panels`,
:func:`decorative_icons`, which paint only on background pixels or empty space) leave them as
they are, so a box still lies on its drawn element.
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

Box = tuple[float, float, float, float]
Elements = list[tuple[str, Box]]

PANEL_COLOURS = [(235, 243, 252), (240, 248, 235), (253, 242, 230), (245, 240, 250), (242, 242, 242), (255, 250, 225)]


def _background(image: np.ndarray) -> np.ndarray:
    """Mask of near-white pixels (the page)."""
    return np.all(image >= 245, axis=2)


def background_panels(image: np.ndarray, elements: Elements, rng: random.Random) -> tuple[np.ndarray, Elements]:
    """Tint 1-3 rectangles that each underlay a few node boxes, as papers shade a stage.

    Only page (near-white) pixels are tinted, so every drawn element stays as it was. Panels
    are decoration, not groups: they carry no border or label and are not labelled."""
    nodes = [b for c, b in elements if c == "node"]
    if len(nodes) < 2:
        return image, elements
    out = image.copy()
    h, w = image.shape[:2]
    bg = _background(image)
    for _ in range(rng.randint(1, 3)):
        pick = rng.sample(nodes, k=min(len(nodes), rng.randint(1, 4)))
        m = rng.uniform(6, 24)
        x0 = int(max(0, min(b[0] for b in pick) - m))
        y0 = int(max(0, min(b[1] for b in pick) - m))
        x1 = int(min(w, max(b[2] for b in pick) + m))
        y1 = int(min(h, max(b[3] for b in pick) + m))
        region = np.zeros_like(bg)
        region[y0:y1, x0:x1] = True
        out[region & bg] = rng.choice(PANEL_COLOURS)
    return out, elements


def _icon(rng: random.Random, size: int) -> Image.Image:
    """A small pictogram: bar chart, photo-like smooth noise, patch grid or stacked discs."""
    kind = rng.choice(["bars", "photo", "grid", "discs"])
    icon = Image.new("RGB", (size, size), (255, 255, 255))
    d = ImageDraw.Draw(icon)
    colours = [(rng.randrange(40, 230), rng.randrange(40, 230), rng.randrange(40, 230)) for _ in range(4)]
    if kind == "bars":
        k = rng.randint(3, 5)
        bw = size / (k * 1.5)
        for i in range(k):
            top = rng.uniform(0.1, 0.8) * size
            d.rectangle([i * bw * 1.5, top, i * bw * 1.5 + bw, size - 1], fill=colours[i % 4])
    elif kind == "photo":
        arr = np.random.default_rng(rng.randrange(1 << 30)).integers(0, 255, (4, 4, 3), dtype=np.uint8)
        icon = Image.fromarray(arr).resize((size, size), Image.BICUBIC)
    elif kind == "grid":
        k = rng.randint(2, 4)
        c = size / k
        for i in range(k):
            for j in range(k):
                d.rectangle([i * c + 1, j * c + 1, (i + 1) * c - 2, (j + 1) * c - 2], fill=rng.choice(colours))
    else:
        for i in range(3):
            r = size * (0.45 - 0.1 * i)
            d.ellipse([size / 2 - r, size / 2 - r, size / 2 + r, size / 2 + r], fill=colours[i])
    return icon


def decorative_icons(image: np.ndarray, elements: Elements, rng: random.Random) -> tuple[np.ndarray, Elements]:
    """Paste 1-4 small pictograms where they touch no element (distractors, unlabelled)."""
    h, w = image.shape[:2]
    pil = Image.fromarray(image)
    occupied = [(b[0] - 8, b[1] - 8, b[2] + 8, b[3] + 8) for _, b in elements]
    for _ in range(rng.randint(1, 4)):
        size = rng.randint(18, 56)
        for _attempt in range(20):
            x, y = rng.randrange(0, max(1, w - size)), rng.randrange(0, max(1, h - size))
            box = (x, y, x + size, y + size)
            clear = all(box[2] < o[0] or box[0] > o[2] or box[3] < o[1] or box[1] > o[3] for o in occupied)
            # only where the page is blank: connectors are not element boxes
            if clear and _background(image[y : y + size, x : x + size]).all():
                pil.paste(_icon(rng, size), (x, y))
                occupied.append(box)
                break
    return np.asarray(pil), elements


def rescale(image: np.ndarray, elements: Elements, factor: float) -> tuple[np.ndarray, Elements]:
    """Resize by ``factor`` (area filter when shrinking); boxes scale with the image."""
    h, w = image.shape[:2]
    nw, nh = max(1, round(w * factor)), max(1, round(h * factor))
    out = np.asarray(Image.fromarray(image).resize((nw, nh), Image.BOX if factor < 1 else Image.BICUBIC))
    sx, sy = nw / w, nh / h
    return out, [(c, (b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy)) for c, b in elements]


def jpeg(image: np.ndarray, elements: Elements, rng: random.Random) -> tuple[np.ndarray, Elements]:
    """Re-encode as JPEG at quality 35-90."""
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="JPEG", quality=rng.randint(35, 90))
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB")), elements


def blur(image: np.ndarray, elements: Elements, rng: random.Random) -> tuple[np.ndarray, Elements]:
    """Gaussian blur, radius 0.4-1.1 px."""
    return np.asarray(Image.fromarray(image).filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 1.1)))), elements


def noise(image: np.ndarray, elements: Elements, rng: random.Random) -> tuple[np.ndarray, Elements]:
    """Additive Gaussian noise, sigma 2-8 grey levels."""
    g = np.random.default_rng(rng.randrange(1 << 30))
    noisy = image.astype(np.float32) + g.normal(0.0, rng.uniform(2, 8), image.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8), elements


def colour_shift(image: np.ndarray, elements: Elements, rng: random.Random) -> tuple[np.ndarray, Elements]:
    """Rotate the hue of the whole image (white and black stay as they are)."""
    hsv = np.asarray(Image.fromarray(image).convert("HSV")).copy()
    hsv[..., 0] = (hsv[..., 0].astype(np.int16) + rng.randrange(20, 236)) % 256
    return np.asarray(Image.fromarray(hsv, "HSV").convert("RGB")), elements


def augment(image: np.ndarray, elements: Elements, rng: random.Random) -> tuple[np.ndarray, Elements, list[str]]:
    """The training augmentation: each step applied with its own probability, in a fixed
    order (underlays before photometric changes). Returns the steps applied, by name."""
    steps = [
        (background_panels, 0.35),
        (decorative_icons, 0.35),
        (colour_shift, 0.2),
        (blur, 0.2),
        (noise, 0.2),
        (jpeg, 0.4),
    ]
    applied: list[str] = []
    for fn, p in steps:
        if rng.random() < p:
            image, elements = fn(image, elements, rng)
            applied.append(fn.__name__)
    return image, elements, applied
