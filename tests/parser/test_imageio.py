"""Image loading: formats, modes, bad inputs, size policy."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from sciflow.format.imageio import ImageLoadError, fit_working_size, load_image, to_rgb


def _png_header_only(path, w: int, h: int) -> None:
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 10)))


def test_corrupt_empty_and_text_files_raise_naming_the_file(tmp_path):
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    text = tmp_path / "notes.png"
    text.write_text("hello, not an image")
    corrupt = tmp_path / "broken.png"
    good = tmp_path / "good.png"
    Image.new("RGB", (64, 64), "red").save(good)
    corrupt.write_bytes(good.read_bytes()[:60])
    for p, why in ((empty, "empty"), (text, "not a recognised image"), (corrupt, "")):
        with pytest.raises(ImageLoadError) as ei:
            load_image(p)
        assert str(p) in str(ei.value) and why in str(ei.value)
    with pytest.raises(ImageLoadError, match="cannot read"):
        load_image(tmp_path / "missing.png")


def test_decompression_bomb_guard(tmp_path):
    p = tmp_path / "bomb.png"
    _png_header_only(p, 60000, 60000)
    with pytest.raises(ImageLoadError, match="decompression-bomb"):
        load_image(p)


def test_modes_rgba_palette_gray16(tmp_path):
    rgba = Image.new("RGBA", (20, 10), (255, 0, 0, 0))
    rgba.save(tmp_path / "a.png")
    out = load_image(tmp_path / "a.png")
    assert out.shape == (10, 20, 3) and out.dtype == np.uint8
    assert (out == 255).all()  # transparent -> white
    pal = Image.new("P", (8, 8), 3)
    pal.putpalette([0, 0, 0, 10, 10, 10, 20, 20, 20, 0, 128, 255] + [0] * 756)
    pal.save(tmp_path / "p.gif")
    assert tuple(load_image(tmp_path / "p.gif")[0, 0]) == (0, 128, 255)
    g16 = Image.fromarray(np.full((6, 6), 65535, dtype=np.uint16))
    g16.save(tmp_path / "g16.png")
    assert (load_image(tmp_path / "g16.png") == 255).all()
    Image.new("L", (5, 5), 7).save(tmp_path / "g.bmp")
    assert tuple(load_image(tmp_path / "g.bmp")[0, 0]) == (7, 7, 7)
    for ext in ("jpg", "webp", "tiff"):
        Image.new("RGB", (16, 16), (0, 0, 255)).save(tmp_path / f"x.{ext}")
        assert load_image(tmp_path / f"x.{ext}").shape == (16, 16, 3)


def test_arrays_and_pil_objects():
    assert to_rgb(np.zeros((4, 5), np.uint16)).shape == (4, 5, 3)
    assert to_rgb(np.ones((4, 5, 4), np.float32))[0, 0].tolist() == [255, 255, 255]
    assert to_rgb(Image.new("LA", (3, 3))).shape == (3, 3, 3)
    with pytest.raises(ImageLoadError):
        to_rgb(np.zeros((0, 3)))
    with pytest.raises(ImageLoadError):
        to_rgb(42)


def test_svg_and_pdf_first_page(tmp_path):
    pytest.importorskip("cairosvg")
    svg = tmp_path / "d.svg"
    svg.write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
        '<rect x="0" y="0" width="40" height="20" fill="#00ff00"/></svg>'
    )
    img = load_image(svg)
    assert img.shape == (40, 80, 3) and tuple(img[10, 40]) == (0, 255, 0)
    pytest.importorskip("pypdfium2")
    pdf = tmp_path / "d.pdf"
    pages = [Image.new("RGB", (100, 50), "blue"), Image.new("RGB", (100, 50), "red")]
    pages[0].save(pdf, save_all=True, append_images=pages[1:])
    out = load_image(pdf)
    assert out.shape[2] == 3 and out[out.shape[0] // 2, out.shape[1] // 2, 2] > 200  # blue page 1


def test_working_size_policy():
    big = np.zeros((1000, 5000, 3), np.uint8)
    out, s = fit_working_size(big, max_side=2400, min_side=500)
    assert max(out.shape[:2]) == 2400 and s == pytest.approx(0.48)
    small = np.zeros((50, 100, 3), np.uint8)
    out, s = fit_working_size(small, max_side=2400, min_side=500)
    assert out.shape[:2] == (250, 500) and s == 5.0
    same = np.zeros((600, 800, 3), np.uint8)
    assert fit_working_size(same, max_side=2400, min_side=500)[1] == 1.0
