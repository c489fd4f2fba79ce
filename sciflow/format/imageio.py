"""Image loading for the parser: every input becomes an RGB ``uint8`` array ``(H, W, 3)``.

Accepted: PNG, JPEG, WebP, BMP, TIFF (first frame), GIF (first frame), SVG and PDF (first
page), plus in-memory PIL images and numpy arrays.

Normalisation (exact behaviour):

* alpha (RGBA, LA, palette with transparency) is composited on white;
* palette, grayscale, CMYK and YCbCr are converted to RGB;
* 16-bit integer images (``I;16``/``I``) are scaled by ``255 / 65535`` (or by the image
  maximum when it exceeds 65535); float images (``F``) are scaled by their maximum;
* numpy arrays: ``(H, W)``, ``(H, W, 1)``, ``(H, W, 3)`` or ``(H, W, 4)``; ``uint16`` is
  divided by 257, floats in ``[0, 1]`` are multiplied by 255;
* SVG is rasterised with ``cairosvg`` (or Debian ``rsvg-convert`` when cairosvg is not
  installed) at 2x its nominal size; PDF page 1 with ``pypdfium2`` at 144 dpi
  (:mod:`sciflow.format.vector`).

Decompression-bomb guard: a raster whose header declares more than ``max_pixels``
(default :data:`MAX_PIXELS`) pixels is refused before decoding; an SVG or a PDF page whose
raster would be over the limit is refused before rasterising, and an SVG is read with XML
entities and external references refused (:mod:`sciflow.format.vector` has the rules).

Every refusal is an :class:`ImageLoadError` whose message is one line naming the file:
``unreadable image <file>: <reason>``.
Resizing to the parser's working resolution is done by :func:`fit_working_size`.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from sciflow.format.graph import GraphFormatError

log = logging.getLogger(__name__)

#: Largest raster accepted (pixels), checked from the header before decoding.
MAX_PIXELS = 150_000_000
RASTER_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif"})
VECTOR_SUFFIXES = frozenset({".svg", ".pdf"})


class ImageLoadError(GraphFormatError):
    """What :func:`load_image` and :func:`to_rgb` raise for a file or object that cannot be read
    as an image: one line, ``unreadable image <source>: <reason>`` (``source`` and ``reason``
    are attributes).

    It is a :class:`~sciflow.format.graph.GraphFormatError` (``problems == [("$", reason)]``) and
    a ``ValueError``, so code that reports an unusable prediction by catching ``GraphFormatError``
    reports an image that cannot be read with this message; only its wording differs from an
    invalid graph file's."""

    def __init__(self, source: str, reason: str):
        self.source = str(source)
        self.reason = reason
        self.problems = [("$", reason)]
        ValueError.__init__(self, f"unreadable image {self.source}: {reason}")

    def __reduce__(self) -> Any:  # picklable across process pools
        return (type(self), (self.source, self.reason))


def load_image(path: str | Path, *, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Read ``path`` into an RGB ``uint8`` array (see module docstring for the rules).

    Raises :class:`ImageLoadError` naming the file for a missing, empty, corrupt,
    non-image, unsafe or oversized file.
    """
    path = Path(path)
    name = str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageLoadError(name, f"cannot read file: {exc.strerror or exc}") from exc
    if not data:
        raise ImageLoadError(name, "empty file (0 bytes)")
    from sciflow.format import vector  # noqa: PLC0415 - vector imports this module

    suffix = path.suffix.lower()
    if suffix == ".pdf" or data[:5] == b"%PDF-":
        return vector.load_pdf(name, data, max_pixels)
    if suffix == ".svg" or vector.looks_like_svg(data):
        return vector.load_svg(name, data, max_pixels)
    return _load_raster(io.BytesIO(data), name, max_pixels)


def to_rgb(image: Any, *, name: str = "<image>", max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Normalise a path, PIL image or numpy array to RGB ``uint8`` (H, W, 3)."""
    if isinstance(image, (str, Path)):
        return load_image(image, max_pixels=max_pixels)
    if isinstance(image, Image.Image):
        _check_pixels(image.size, name, max_pixels)
        return _pil_to_rgb(image, name)
    if isinstance(image, np.ndarray):
        return _array_to_rgb(image, name)
    raise ImageLoadError(name, f"unsupported image object of type {type(image).__name__}")


def fit_working_size(rgb: np.ndarray, *, max_side: int, min_side: int) -> tuple[np.ndarray, float]:
    """Resize to the parser's working resolution. Returns ``(image, scale)``.

    Policy: if the longer side exceeds ``max_side`` the image is shrunk (INTER_AREA) so that
    it equals ``max_side``; else if the longer side is below ``min_side`` it is enlarged
    (INTER_CUBIC) so that it equals ``min_side``; otherwise it is unchanged (scale 1.0).
    ``working = input * scale``.
    """
    import cv2

    h, w = rgb.shape[:2]
    long_side = max(h, w)
    if long_side > max_side:
        s = max_side / long_side
        interp = cv2.INTER_AREA
    elif long_side < min_side:
        s = min_side / long_side
        interp = cv2.INTER_CUBIC
    else:
        return rgb, 1.0
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    return cv2.resize(rgb, (nw, nh), interpolation=interp), s


# ------------------------------------------------------------------ internals
def _check_pixels(size: tuple[int, int], name: str, max_pixels: int) -> None:
    w, h = size
    if w <= 0 or h <= 0:
        raise ImageLoadError(name, f"image has no pixels ({w}x{h})")
    if w * h > max_pixels:
        raise ImageLoadError(
            name, f"image is {w}x{h} = {w * h} pixels, over the limit of {max_pixels} (decompression-bomb guard)"
        )


@contextlib.contextmanager
def _own_bomb_guard() -> Iterator[None]:
    """PIL's own guard off: ours (:func:`_check_pixels`) runs instead, with a message naming the file."""
    old = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = old


def _load_raster(fp: io.BytesIO, name: str, max_pixels: int) -> np.ndarray:
    with _own_bomb_guard():
        try:
            im = Image.open(fp)
        except UnidentifiedImageError as exc:
            raise ImageLoadError(name, "not a recognised image file") from exc
        except Exception as exc:  # noqa: BLE001 - PIL raises many types on corrupt data
            raise ImageLoadError(name, f"cannot open image: {_one_line(exc)}") from exc
        _check_pixels(im.size, name, max_pixels)
        try:
            im.seek(0)
            im.load()
        except Exception as exc:  # noqa: BLE001
            raise ImageLoadError(name, f"corrupt or truncated image: {_one_line(exc)}") from exc
        return _pil_to_rgb(im, name)


def _one_line(exc: BaseException | str, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _pil_to_rgb(im: Image.Image, name: str) -> np.ndarray:
    with contextlib.suppress(Exception):  # broken EXIF must not stop loading
        im = ImageOps.exif_transpose(im)
    mode = im.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        arr = np.asarray(im).astype(np.float64)
        top = 65535.0 if mode.startswith("I;16") else max(float(arr.max()), 1.0)
        if mode == "I" and arr.max() <= 65535:
            top = 65535.0 if arr.max() > 255 else 255.0
        arr = np.clip(arr * (255.0 / top), 0, 255).round().astype(np.uint8)
        return np.ascontiguousarray(np.stack([arr] * 3, axis=-1))
    if mode == "P" and "transparency" in im.info:
        im = im.convert("RGBA")
    elif mode == "P":
        im = im.convert("RGB")
    if mode in ("RGBa", "La"):
        im = im.convert("RGBA")
    if im.mode in ("RGBA", "LA"):
        rgba = im.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        im = Image.alpha_composite(white, rgba)
    try:
        rgb = im.convert("RGB")
    except Exception as exc:  # noqa: BLE001
        raise ImageLoadError(name, f"cannot convert image mode {mode!r} to RGB: {_one_line(exc)}") from exc
    return np.ascontiguousarray(np.asarray(rgb, dtype=np.uint8))


def _array_to_rgb(a: np.ndarray, name: str) -> np.ndarray:
    if a.size == 0:
        raise ImageLoadError(name, "empty array")
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.dtype == np.uint16:
        a = (a.astype(np.float64) / 257.0).round().astype(np.uint8)
    elif a.dtype.kind == "f":
        scale = 255.0 if float(np.nanmax(a)) <= 1.0 else 1.0
        a = np.clip(np.nan_to_num(a) * scale, 0, 255).round().astype(np.uint8)
    elif a.dtype == np.bool_:
        a = a.astype(np.uint8) * 255
    elif a.dtype != np.uint8:
        a = np.clip(a, 0, 255).astype(np.uint8)
    if a.ndim == 2:
        return np.ascontiguousarray(np.stack([a] * 3, axis=-1))
    if a.ndim == 3 and a.shape[2] == 3:
        return np.ascontiguousarray(a)
    if a.ndim == 3 and a.shape[2] == 4:
        alpha = a[:, :, 3:4].astype(np.float64) / 255.0
        out = a[:, :, :3].astype(np.float64) * alpha + 255.0 * (1.0 - alpha)
        return np.ascontiguousarray(out.round().astype(np.uint8))
    raise ImageLoadError(name, f"unsupported array shape {a.shape}")
