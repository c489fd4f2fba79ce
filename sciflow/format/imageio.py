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
  installed) at 2x its nominal size; PDF page 1 with ``pypdfium2`` at 144 dpi.

Decompression-bomb guard: a raster whose header declares more than ``max_pixels``
(default :data:`MAX_PIXELS`) pixels is refused with :class:`ImageLoadError` before decoding.
Resizing to the parser's working resolution is done by :func:`fit_working_size`.
"""

from __future__ import annotations

import contextlib
import io
import logging
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

log = logging.getLogger(__name__)

#: Largest raster accepted (pixels), checked from the header before decoding.
MAX_PIXELS = 150_000_000
RASTER_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif"})
VECTOR_SUFFIXES = frozenset({".svg", ".pdf"})


class ImageLoadError(ValueError):
    """A file or object that cannot be read as an image; the message names the file."""


def load_image(path: str | Path, *, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Read ``path`` into an RGB ``uint8`` array (see module docstring for the rules).

    Raises :class:`ImageLoadError` naming the file for a missing, empty, corrupt,
    non-image or oversized file.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImageLoadError(f"{path}: cannot read file: {exc.strerror or exc}") from exc
    if not data:
        raise ImageLoadError(f"{path}: empty file")
    head = data[:1024].lstrip()
    suffix = path.suffix.lower()
    if suffix == ".pdf" or data[:5] == b"%PDF-":
        return _load_pdf(path, data, max_pixels)
    if suffix == ".svg" or head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in data[:4096]):
        return _load_svg(path, data, max_pixels)
    return _load_raster(io.BytesIO(data), str(path), max_pixels)


def to_rgb(image: Any, *, name: str = "<image>", max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """Normalise a path, PIL image or numpy array to RGB ``uint8`` (H, W, 3)."""
    if isinstance(image, (str, Path)):
        return load_image(image, max_pixels=max_pixels)
    if isinstance(image, Image.Image):
        _check_pixels(image.size, name, max_pixels)
        return _pil_to_rgb(image, name)
    if isinstance(image, np.ndarray):
        return _array_to_rgb(image, name)
    raise ImageLoadError(f"{name}: unsupported image object of type {type(image).__name__}")


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
        raise ImageLoadError(f"{name}: image has no pixels ({w}x{h})")
    if w * h > max_pixels:
        raise ImageLoadError(
            f"{name}: image is {w}x{h} = {w * h} pixels, over the limit of {max_pixels} (decompression-bomb guard)"
        )


def _load_raster(fp: io.BytesIO, name: str, max_pixels: int) -> np.ndarray:
    old = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None  # our own guard below, with a message naming the file
    try:
        try:
            im = Image.open(fp)
        except UnidentifiedImageError as exc:
            raise ImageLoadError(f"{name}: not a recognised image file") from exc
        except Exception as exc:  # noqa: BLE001 - PIL raises many types on corrupt data
            raise ImageLoadError(f"{name}: cannot open image: {exc}") from exc
        _check_pixels(im.size, name, max_pixels)
        try:
            im.seek(0)
            im.load()
        except Exception as exc:  # noqa: BLE001
            raise ImageLoadError(f"{name}: corrupt or truncated image: {exc}") from exc
        return _pil_to_rgb(im, name)
    finally:
        Image.MAX_IMAGE_PIXELS = old


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
        raise ImageLoadError(f"{name}: cannot convert image mode {mode!r} to RGB: {exc}") from exc
    return np.ascontiguousarray(np.asarray(rgb, dtype=np.uint8))


def _array_to_rgb(a: np.ndarray, name: str) -> np.ndarray:
    if a.size == 0:
        raise ImageLoadError(f"{name}: empty array")
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
    raise ImageLoadError(f"{name}: unsupported array shape {a.shape}")


def _load_svg(path: Path, data: bytes, max_pixels: int) -> np.ndarray:
    png: bytes | None = None
    try:
        import cairosvg  # noqa: PLC0415

        try:
            png = cairosvg.svg2png(bytestring=data, scale=2.0, background_color="white")
        except Exception as exc:  # noqa: BLE001
            raise ImageLoadError(f"{path}: cannot rasterise SVG: {exc}") from exc
    except ImportError:
        exe = shutil.which("rsvg-convert")
        if exe is None:
            raise ImageLoadError(f"{path}: SVG input needs the 'cairosvg' package or Debian 'librsvg2-bin'") from None
        proc = subprocess.run(
            [exe, "--zoom=2", "--background-color=white", "--format=png"],
            input=data,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            raise ImageLoadError(f"{path}: cannot rasterise SVG: {proc.stderr.decode()[:200]}") from None
        png = proc.stdout
    return _load_raster(io.BytesIO(png), str(path), max_pixels)


def _load_pdf(path: Path, data: bytes, max_pixels: int) -> np.ndarray:
    try:
        import pypdfium2 as pdfium  # noqa: PLC0415
    except ImportError:
        raise ImageLoadError(f"{path}: PDF input needs the 'pypdfium2' package") from None
    try:
        doc = pdfium.PdfDocument(data)
        if len(doc) == 0:
            raise ImageLoadError(f"{path}: PDF has no pages")
        page = doc[0]
        w, h = page.get_size()
        scale = 2.0
        if w * h * scale * scale > max_pixels:
            scale = (max_pixels / max(w * h, 1.0)) ** 0.5
        im = page.render(scale=scale).to_pil()
    except ImageLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - pdfium raises its own error types
        raise ImageLoadError(f"{path}: cannot render PDF: {exc}") from exc
    return _pil_to_rgb(im, str(path))
