"""Bad inputs among good ones: one ``score`` run and one ``parse`` run over every kind (issue 19).

Each kind of bad input is one item, put beside the good examples (``examples/references`` and
``examples/predictions/careful-gen``) in ONE :func:`~sciflow.runs.scoring.run_scoring` run and
ONE :func:`~sciflow.runs.parse_batch.parse_many` run. For every item the test asserts the exact
status and message (a precise pattern where the text comes from a third-party decoder), and that
every good item is scored, with the scores of a clean run of the good items alone.

Score run: images (parsed by the real parser)
=============================================
A refused image is ``prediction_error``, every score 0, with the message ``unreadable image
<P>: <reason>`` (``<P>``: the prediction's path); "ok" is scored, and where the image is the
two-box diagram the parser reads both boxes (so decoding and normalisation were right).

=============  ==================================  ==============================================================
item           input                               behaviour (reason)
=============  ==================================  ==============================================================
img_zero       0-byte ``.png``                     ``empty file (0 bytes)``
img_truncated  PNG cut after 120 bytes             ``corrupt or truncated image: <PIL's reason>``
img_wrong_ext  PNG bytes named ``.jpg``            ok (the content decides the format)
img_text       text named ``.png``                 ``not a recognised image file``
img_1x1        1x1 PNG                             ok (a valid image; nothing found: graph 0)
img_huge       PNG header declaring 60000x60000    ``image is 60000x60000 = 3600000000 pixels, over the limit of
                                                   150000000 (decompression-bomb guard)``, before decoding
img_16bit      16-bit grayscale PNG                ok
img_rgba       RGBA, transparent background        ok (alpha composited on white)
img_palette    palette PNG                         ok
img_gray       8-bit grayscale PNG                 ok
img_cmyk       CMYK JPEG                           ok
img_anim_gif   3-frame GIF                         ok (first frame)
img_anim_webp  3-frame WebP                        ok (first frame)
img_multipage  3-page TIFF                         ok (first page)
img_bmp        BMP                                 ok
img_noise      uniform noise                       ok (scored, whatever the parser finds)
img_black      all black                           ok (nothing found: graph 0)
svg_ok         valid SVG                           ok
svg_xxe        ``<!ENTITY xxe SYSTEM "file:">``    ``SVG declares the XML entity 'xxe'; XML entities are refused
                                                   (billion-laughs / XXE guard)``
svg_laughs     billion laughs                      ``SVG declares the XML entity 'lol'; ...`` (the same)
svg_file_ref   ``<image href="file:///...">``      ``SVG references the external resource 'file:///etc/passwd' in
                                                   <image href>; only #id and data: references are allowed
                                                   (external files and URLs are never read)``
svg_huge       107 bytes declaring 16000x16000     ``SVG declares 16000x16000 px, 32000x32000 = 1024000000 pixels
                                                   at 2x, over the limit of 150000000 (decompression-bomb
                                                   guard)``, before rasterising
pdf_ok         valid one-page PDF                  ok
pdf_malformed  ``%PDF-`` then garbage              ``cannot render PDF: Failed to load document (PDFium: Data
                                                   format error).``
pdf_huge       one 14400x14400 pt page             ``PDF page 1 is 14400x14400 pt, 28800x28800 = 829440000 pixels
                                                   at 144 dpi, over the limit of 150000000 (decompression-bomb
                                                   guard)``, before rendering
=============  ==================================  ==============================================================

The message is what :mod:`sciflow.format.imageio` raises (:class:`ImageLoadError`); the target
is the row's error equal to it (the worker passes it on word for word).

Score run: graph files
======================
A refused prediction is ``prediction_error``, every score 0, with the message ``invalid graph
file <P>: <reason>``; a refused reference is ``reference_error``, no scores, ``invalid graph file
<R>: <reason>`` (``<R>``: the reference's path).

==================  ==============================  =========================================================
item                input                           behaviour (reason)
==================  ==============================  =========================================================
json_malformed      ``{"id": "x", "nodes": [``      ``not valid JSON: Expecting value at line 1 column 23``
json_empty          0-byte ``.json``                ``not valid JSON: empty document``
json_array          ``[1, 2, 3]``                   ``expected object, got list [1, 2, 3]``
json_missing_keys   no ``nodes``                    ``'nodes' is required``
json_dup_ids        two nodes ``a``                 ``$.nodes[1].id: duplicate node id 'a'``
json_unknown_end    edge to ``ghost``               ``$.edges[0].target: edge to unknown node 'ghost'``
json_label_int      ``"label": 42``                 ``$.nodes[0].label: expected string, got int 42``
json_long_label     a 100,000-character label       ok (a valid, if useless, label)
json_10k_nodes      10,000 nodes, 9,999 edges       ok
json_nan            bbox ``[NaN, 0, 10, 10]``       ``not valid JSON: NaN is not a JSON value (JSON has no NaN or
                                                    Infinity)``
json_infinity       bbox ``[0, 0, Infinity, 10]``   ``not valid JSON: Infinity is not a JSON value (...)``
json_bbox_inverted  bbox ``[10, 10, 0, 0]``         ``$.nodes[0].bbox: malformed bbox [10, 10, 0, 0]: expected
                                                    [x0, y0, x1, y1] with x0 <= x1, y0 <= y1``
json_bbox_negative  bbox ``[-10, -5, 20, 30]``      ok (off-canvas coordinates are allowed; the order is checked)
json_rtl            Arabic and Hebrew labels        ok
json_emoji          emoji labels and ids            ok
json_deep           100,000 nested lists            ``nested deeper than 64 levels``
json_deep_meta      ``meta`` nested 70 levels       ``nested deeper than 64 levels``
json_bom            UTF-8 BOM, then the document    ok
json_latin1         Latin-1 bytes                   ``not UTF-8 text: invalid continuation byte at byte 24``
json_png_bytes      PNG bytes named ``.json``       ``not UTF-8 text: invalid start byte at byte 0``
json_markup_ids     ids, labels ``[/bold]``...      ok (text is data, never markup)
json_markup_error   edge to node ``[/bold]``        ``$.edges[0].target: edge to unknown node '[/bold]'`` (verbatim)
json_empty_graph    no nodes, no edges              ok (graph 0)
link_outside        symlink to a graph elsewhere    ok (symlinks are followed, as by every Unix tool)
link_dangling       symlink to nothing              missing_prediction ``no prediction for this reference``
``with space``      a name with spaces              ok, id ``with space``
``ünïcødé-名前``    a non-ASCII name                ok, id kept
``new\\nline``      a name with a newline           ok, id kept
orphan              prediction without reference    no item; ``summary["unreferenced_predictions"] == ["orphan"]``
ref_only            reference without prediction    missing_prediction ``no prediction for this reference``
ref_malformed       malformed reference             reference_error ``not valid JSON: Expecting ...``
ref_deep            100,000 nested lists            reference_error ``nested deeper than 64 levels``
==================  ==============================  =========================================================

Parse run
=========
:func:`parse_many` over every image item above, plus a graph file handed to the parser
(``unreadable image <P>: not a recognised image file``): each image that loads has a graph and no
error (the two boxes read where drawn); each one refused has no graph, its error ends with the
image message of the table, and the header-checked ones (``*_huge``) take under a second; the
error equals the message (no exception type name in front).
"""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from sciflow.config import load_config
from sciflow.format.graph import GraphFormatError
from sciflow.format.imageio import ImageLoadError, load_image
from sciflow.format.jsonio import MAX_JSON_DEPTH, JSONError, json_depth, load_json, parse_json
from sciflow.runs.parse_batch import parse_many
from sciflow.runs.scoring import run_scoring

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GOOD_REFS = EXAMPLES / "references"
GOOD_PREDS = EXAMPLES / "predictions" / "careful-gen"
GOOD_IDS = sorted(p.stem for p in GOOD_REFS.glob("*.json"))
LIMIT = 150_000_000
CONFIG = load_config(overrides={"matching": {"embedder": "none"}})

# ------------------------------------------------------------------ fixture generators
SVG_NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'


def diagram(size: tuple[int, int] = (200, 100)) -> Image.Image:
    """A small two-box diagram: 'Encoder' -> 'Decoder'."""
    w, h = size
    im = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(im)
    d.rectangle([8, h // 3, w * 2 // 5, h * 2 // 3], outline="black", width=2)
    d.rectangle([w * 3 // 5, h // 3, w - 8, h * 2 // 3], outline="black", width=2)
    d.text((14, h // 2 - 6), "Encoder", fill="black")
    d.text((w * 3 // 5 + 6, h // 2 - 6), "Decoder", fill="black")
    d.line([(w * 2 // 5, h // 2), (w * 3 // 5, h // 2)], fill="black", width=2)
    d.polygon([(w * 3 // 5, h // 2), (w * 3 // 5 - 8, h // 2 - 5), (w * 3 // 5 - 8, h // 2 + 5)], fill="black")
    return im


def png_bytes(im: Image.Image, **kw) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "PNG", **kw)
    return buf.getvalue()


def png_header_only(w: int, h: int) -> bytes:
    """A PNG whose header declares w x h (a decompression bomb is refused from the header)."""

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 10))


def frames(n: int = 3) -> list[Image.Image]:
    first = diagram()
    return [first] + [Image.new("RGB", first.size, c) for c in ("red", "blue")][: n - 1]


def write_images(d: Path) -> None:
    """Every image kind of the table, written into ``d``."""
    im = diagram()
    (d / "img_zero.png").write_bytes(b"")
    (d / "img_truncated.png").write_bytes(png_bytes(im)[:120])
    (d / "img_wrong_ext.jpg").write_bytes(png_bytes(im))
    (d / "img_text.png").write_text("this is a note, not an image\n")
    Image.new("RGB", (1, 1), "white").save(d / "img_1x1.png")
    (d / "img_huge.png").write_bytes(png_header_only(60000, 60000))
    gray16 = (np.asarray(im.convert("L"), dtype=np.uint16) * 257).astype(np.uint16)
    Image.fromarray(gray16).save(d / "img_16bit.png")
    rgba = im.convert("RGBA")
    alpha = np.where(np.asarray(im.convert("L")) > 128, 0, 255).astype(np.uint8)  # white -> transparent
    rgba.putalpha(Image.fromarray(alpha))
    rgba.save(d / "img_rgba.png")
    im.convert("P", palette=Image.Palette.ADAPTIVE, colors=8).save(d / "img_palette.png")
    im.convert("L").save(d / "img_gray.png")
    im.convert("CMYK").save(d / "img_cmyk.jpg", "JPEG", quality=95)
    f = frames()
    f[0].save(d / "img_anim_gif.gif", save_all=True, append_images=f[1:], duration=100, loop=0)
    f[0].save(d / "img_anim_webp.webp", save_all=True, append_images=f[1:], duration=100, lossless=True)
    f[0].save(d / "img_multipage.tif", save_all=True, append_images=f[1:])
    im.save(d / "img_bmp.bmp")
    rng = np.random.default_rng(19)
    Image.fromarray(rng.integers(0, 256, (100, 200, 3), dtype=np.uint8)).save(d / "img_noise.png")
    Image.new("RGB", (200, 100), "black").save(d / "img_black.png")
    (d / "svg_ok.svg").write_text(
        f'<svg {SVG_NS} width="200" height="100">'
        '<rect x="8" y="33" width="72" height="34" fill="white" stroke="black" stroke-width="2"/>'
        '<rect x="120" y="33" width="72" height="34" fill="white" stroke="black" stroke-width="2"/>'
        '<text x="14" y="55" font-size="12">Encoder</text><text x="126" y="55" font-size="12">Decoder</text>'
        '<line x1="80" y1="50" x2="120" y2="50" stroke="black" stroke-width="2"/></svg>'
    )
    (d / "svg_xxe.svg").write_text(
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        f'<svg {SVG_NS} width="200" height="100"><text x="5" y="50">&xxe;</text></svg>'
    )
    lol = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))
    (d / "svg_laughs.svg").write_text(
        f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY lol "lol">{lol}]>'
        f'<svg {SVG_NS} width="200" height="100"><text x="5" y="50">&lol9;</text></svg>'
    )
    (d / "svg_file_ref.svg").write_text(
        f'<svg {SVG_NS} width="200" height="100"><image xlink:href="file:///etc/passwd" width="50" height="50"/></svg>'
    )
    # 107 bytes, the size of the SVG in the issue
    huge = '<svg xmlns="http://www.w3.org/2000/svg" width="16000" height="16000"><rect width="9" height="9"/></svg>'
    (d / "svg_huge.svg").write_text(huge)
    diagram().save(d / "pdf_ok.pdf")
    (d / "pdf_malformed.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage\n%%EOF\n")
    (d / "pdf_huge.pdf").write_bytes(pdf_one_page(14400, 14400))


def pdf_one_page(w: int, h: int) -> bytes:
    """A minimal valid PDF with one empty w x h pt page (offsets computed, so pdfium reads it as is)."""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w} {h}] >>".encode(),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


IMAGE_OK = ["img_wrong_ext", "img_1x1", "img_16bit", "img_rgba", "img_palette", "img_gray", "img_cmyk",
            "img_anim_gif", "img_anim_webp", "img_multipage", "img_bmp", "img_noise", "img_black", "svg_ok", "pdf_ok"]
# item -> (file name, the reason in ``unreadable image <P>: <reason>``: a literal, or a compiled pattern)
IMAGE_BAD: dict[str, tuple[str, str | re.Pattern[str]]] = {
    "img_zero": ("img_zero.png", "empty file (0 bytes)"),
    "img_truncated": ("img_truncated.png", re.compile(r"corrupt or truncated image: \S.*")),
    "img_text": ("img_text.png", "not a recognised image file"),
    "img_huge": ("img_huge.png", f"image is 60000x60000 = 3600000000 pixels, over the limit of {LIMIT} "
                                 "(decompression-bomb guard)"),
    "svg_xxe": ("svg_xxe.svg", "SVG declares the XML entity 'xxe'; XML entities are refused "
                               "(billion-laughs / XXE guard)"),
    "svg_laughs": ("svg_laughs.svg", "SVG declares the XML entity 'lol'; XML entities are refused "
                                     "(billion-laughs / XXE guard)"),
    "svg_file_ref": ("svg_file_ref.svg", "SVG references the external resource 'file:///etc/passwd' in "
                                         "<image href>; only #id and data: references are allowed (external files "
                                         "and URLs are never read)"),
    "svg_huge": ("svg_huge.svg", f"SVG declares 16000x16000 px, 32000x32000 = 1024000000 pixels at 2x, over the "
                                 f"limit of {LIMIT} (decompression-bomb guard)"),
    "pdf_malformed": ("pdf_malformed.pdf", "cannot render PDF: Failed to load document (PDFium: Data format error)."),
    "pdf_huge": ("pdf_huge.pdf", f"PDF page 1 is 14400x14400 pt, 28800x28800 = 829440000 pixels at 144 dpi, over "
                                 f"the limit of {LIMIT} (decompression-bomb guard)"),
}


def node_graph(gid: str, labels: list[str], ids: list[str] | None = None, **extra) -> dict:
    ids = ids or [f"n{i}" for i in range(len(labels))]
    edges = [{"source": a, "target": b} for a, b in zip(ids, ids[1:], strict=False)]
    return {"id": gid, "nodes": [{"id": i, "label": lab} for i, lab in zip(ids, labels, strict=True)],
            "edges": edges, **extra}


def write_graphs(d: Path, outside: Path) -> None:
    """Every graph-file kind of the table, written into ``d`` (``outside``: a folder beside it)."""

    def put(name: str, doc) -> None:
        (d / f"{name}.json").write_text(doc if isinstance(doc, str) else json.dumps(doc, ensure_ascii=False), "utf-8")

    put("json_malformed", '{"id": "x", "nodes": [')
    put("json_empty", "")
    put("json_array", "[1, 2, 3]")
    put("json_missing_keys", {"id": "x", "edges": []})
    put("json_dup_ids", {"id": "x", "nodes": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}], "edges": []})
    put("json_unknown_end", {"id": "x", "nodes": [{"id": "a", "label": "A"}],
                             "edges": [{"source": "a", "target": "ghost"}]})
    put("json_label_int", {"id": "x", "nodes": [{"id": "a", "label": 42}], "edges": []})
    put("json_long_label", node_graph("x", ["Image", "Patch Embedding " * 6250]))
    put("json_10k_nodes", node_graph("x", [f"Block {i}" for i in range(10_000)]))
    put("json_nan", '{"id": "x", "nodes": [{"id": "a", "label": "A", "bbox": [NaN, 0, 10, 10]}], "edges": []}')
    put("json_infinity", '{"id": "x", "nodes": [{"id": "a", "label": "A", "bbox": [0, 0, Infinity, 10]}], "edges": []}')
    put("json_bbox_inverted", {"id": "x", "nodes": [{"id": "a", "label": "A", "bbox": [10, 10, 0, 0]}], "edges": []})
    put("json_bbox_negative", {"id": "x", "nodes": [{"id": "a", "label": "Image", "bbox": [-10, -5, 20, 30]}],
                               "edges": []})
    put("json_rtl", node_graph("x", ["صورة", "ترميز الرقع", "מקודד", "Transformer Encoder"]))
    put("json_emoji", node_graph("x", ["🖼️ Image", "🧩 Patch Embedding", "🤖 Transformer Encoder"],
                                 ids=["🖼️", "🧩", "🤖"]))
    put("json_deep", "[" * 100_000 + "]" * 100_000)
    put("json_deep_meta", '{"id": "x", "nodes": [], "edges": [], "meta": ' + '{"a": ' * 70 + "1" + "}" * 71)
    (d / "json_bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(node_graph("x", ["Image", "MLP Head"])).encode())
    (d / "json_latin1.json").write_bytes('{"id": "x", "nodes": [{"é": 1}]}'.encode("latin-1"))
    (d / "json_png_bytes.json").write_bytes(png_bytes(Image.new("RGB", (4, 4))))
    put("json_markup_ids", node_graph("x", ["[/bold]", "[red]Image[/red]", "[nan, 0, 10, 10]"],
                                      ids=["[/bold]", "[red]", "[link=file:///etc/passwd]"]))
    put("json_markup_error", {"id": "x", "nodes": [{"id": "a", "label": "A"}],
                              "edges": [{"source": "a", "target": "[/bold]"}]})
    put("json_empty_graph", {"id": "x", "nodes": [], "edges": []})
    outside.mkdir(exist_ok=True)
    shutil.copy(GOOD_PREDS / "vit.json", outside / "elsewhere.json")
    (d / "link_outside.json").symlink_to(outside / "elsewhere.json")
    (d / "link_dangling.json").symlink_to(outside / "nothing-here.json")
    for odd in ("with space", "ünïcødé-名前", "new\nline"):
        shutil.copy(GOOD_PREDS / "vit.json", d / f"{odd}.json")
    shutil.copy(GOOD_PREDS / "vit.json", d / "orphan.json")


# item -> (status, the exact error with <P> for the prediction's path and <R> for the reference's, or a pattern)
GRAPH_EXPECTED: dict[str, tuple[str, str | re.Pattern[str] | None]] = {
    "json_malformed": ("prediction_error",
                       "invalid graph file <P>: not valid JSON: Expecting value at line 1 column 23"),
    "json_empty": ("prediction_error", "invalid graph file <P>: not valid JSON: empty document"),
    "json_array": ("prediction_error", "invalid graph file <P>: expected object, got list [1, 2, 3]"),
    "json_missing_keys": ("prediction_error", "invalid graph file <P>: 'nodes' is required"),
    "json_dup_ids": ("prediction_error", "invalid graph file <P>: $.nodes[1].id: duplicate node id 'a'"),
    "json_unknown_end": ("prediction_error", "invalid graph file <P>: $.edges[0].target: edge to unknown node 'ghost'"),
    "json_label_int": ("prediction_error", "invalid graph file <P>: $.nodes[0].label: expected string, got int 42"),
    "json_long_label": ("ok", None),
    "json_10k_nodes": ("ok", None),
    "json_nan": ("prediction_error",
                 "invalid graph file <P>: not valid JSON: NaN is not a JSON value (JSON has no NaN or Infinity)"),
    "json_infinity": ("prediction_error", "invalid graph file <P>: not valid JSON: Infinity is not a JSON value "
                                          "(JSON has no NaN or Infinity)"),
    "json_bbox_inverted": ("prediction_error", "invalid graph file <P>: $.nodes[0].bbox: malformed bbox "
                                               "[10, 10, 0, 0]: expected [x0, y0, x1, y1] with x0 <= x1, y0 <= y1"),
    "json_bbox_negative": ("ok", None),
    "json_rtl": ("ok", None),
    "json_emoji": ("ok", None),
    "json_deep": ("prediction_error", "invalid graph file <P>: nested deeper than 64 levels"),
    "json_deep_meta": ("prediction_error", "invalid graph file <P>: nested deeper than 64 levels"),
    "json_bom": ("ok", None),
    "json_latin1": ("prediction_error", "invalid graph file <P>: not UTF-8 text: invalid continuation byte at byte 24"),
    "json_png_bytes": ("prediction_error", "invalid graph file <P>: not UTF-8 text: invalid start byte at byte 0"),
    "json_markup_ids": ("ok", None),
    "json_markup_error": ("prediction_error",
                          "invalid graph file <P>: $.edges[0].target: edge to unknown node '[/bold]'"),
    "json_empty_graph": ("ok", None),
    "link_outside": ("ok", None),
    "link_dangling": ("missing_prediction", "no prediction for this reference"),
    "with space": ("ok", None),
    "ünïcødé-名前": ("ok", None),
    "new\nline": ("ok", None),
    "ref_only": ("missing_prediction", "no prediction for this reference"),
    "ref_malformed": ("reference_error", re.compile(r"invalid graph file <R>: not valid JSON: Expecting .+ at line 1 "
                                                    r"column \d+")),
    "ref_deep": ("reference_error", "invalid graph file <R>: nested deeper than 64 levels"),
}


#: the reference of every image item: what :func:`diagram` draws
DIAGRAM_REF = {
    "id": "diagram",
    "nodes": [{"id": "e", "label": "Encoder"}, {"id": "d", "label": "Decoder"}],
    "edges": [{"source": "e", "target": "d"}],
    "prompt": {"text": "An encoder feeds a decoder.", "components": ["Encoder", "Decoder"],
               "relations": [["Encoder", "Decoder"]]},
    "meta": {"area": "machine learning", "difficulty": "easy"},
}


def write_references(refs: Path, image_items: list[str], graph_items: list[str]) -> None:
    for f in GOOD_REFS.glob("*.json"):
        shutil.copy(f, refs / f.name)
    for item in image_items:
        (refs / f"{item}.json").write_text(json.dumps(DIAGRAM_REF), "utf-8")
    for item in graph_items:
        shutil.copy(GOOD_REFS / "vit.json", refs / f"{item}.json")
    (refs / "ref_malformed.json").write_text('{"id": "ref_malformed", "nodes": [}', "utf-8")
    (refs / "ref_deep.json").write_text("[" * 100_000 + "]" * 100_000, "utf-8")


@pytest.fixture(scope="module")
def battery(tmp_path_factory):
    root = tmp_path_factory.mktemp("battery")
    preds, refs, cache = root / "preds", root / "refs", root / "cache"
    for d in (preds, refs):
        d.mkdir()
    for f in GOOD_PREDS.glob("*.json"):
        shutil.copy(f, preds / f.name)
    write_images(preds)
    write_graphs(preds, root / "outside")
    write_references(refs, IMAGE_OK + list(IMAGE_BAD),
                     [k for k in GRAPH_EXPECTED if not k.startswith("ref_")] + ["ref_only"])
    # the predictions of the bad references are good graphs: only the reference is at fault
    for name in ("ref_malformed", "ref_deep"):
        shutil.copy(GOOD_PREDS / "vit.json", preds / f"{name}.json")
    res = run_scoring(preds, refs, root / "out", CONFIG, jobs=1, cache_dir=cache)
    return {"root": root, "preds": preds, "refs": refs, "cache": cache, "res": res,
            "rows": {r["id"]: r for r in res.rows}}


def expand(expected: str | re.Pattern[str], item: str, b, pred_name: str | None = None) -> str | re.Pattern[str]:
    """``<P>``/``<R>`` replaced by the item's prediction / reference path."""
    p = str(b["preds"] / (pred_name or f"{item}.json"))
    r = str(b["refs"] / f"{item}.json")
    if isinstance(expected, re.Pattern):
        return re.compile(expected.pattern.replace("<P>", re.escape(p)).replace("<R>", re.escape(r)), re.S)
    return expected.replace("<P>", p).replace("<R>", r)


def matches(text: str | None, expected: str | re.Pattern[str]) -> bool:
    if isinstance(expected, re.Pattern):
        return text is not None and expected.fullmatch(text) is not None
    return text == expected


# ------------------------------------------------------------------------------ the score run
def image_message(item: str, b) -> str | re.Pattern[str]:
    name, reason = IMAGE_BAD[item]
    path = str(b["preds"] / name)
    if isinstance(reason, re.Pattern):
        return re.compile(re.escape(f"unreadable image {path}: ") + reason.pattern, re.S)
    return f"unreadable image {path}: {reason}"


def image_file(item: str, b) -> Path:
    return next(p for p in b["preds"].iterdir() if p.stem == item)


def test_every_good_example_is_scored_as_in_a_clean_run(battery):
    clean = {r["id"]: r for r in run_scoring(GOOD_PREDS, GOOD_REFS, None, CONFIG, jobs=1).rows}
    assert sorted(clean) == GOOD_IDS
    for item in GOOD_IDS:
        row = battery["rows"][item]
        assert row["status"] == "ok" and row["error"] is None, item
        assert row["scores"] == clean[item]["scores"], item


def test_valid_images_are_scored(battery):
    out = battery["root"] / "out"
    for item in IMAGE_OK:
        row = battery["rows"][item]
        assert (row["status"], row["error"]) == ("ok", None), item
        assert row["prediction"] == str(image_file(item, battery))
        assert {"graph", "text", "image", "overall"} <= set(row["scores"]), item
        labels = {n["label"] for n in json.loads((out / row["parsed_graph"]).read_text("utf-8"))["nodes"]}
        if item in ("img_1x1", "img_black", "img_noise"):  # nothing to read: scored, and scored low
            assert row["scores"]["graph"] == 0.0, item
        else:  # the two boxes were read: the image was decoded and normalised right
            assert labels == {"Encoder", "Decoder"}, (item, labels)
            assert row["scores"]["graph"] > 0.0, item


def test_bad_images_are_prediction_errors_with_the_image_message(battery):
    for item in IMAGE_BAD:
        row = battery["rows"][item]
        assert row["status"] == "prediction_error", item
        assert row["prediction"] == str(image_file(item, battery))
        assert set(row["scores"].values()) == {0.0}, item
        expected = image_message(item, battery)
        if isinstance(expected, re.Pattern):
            assert expected.search(row["error"]), (item, row["error"])
        else:
            assert expected in row["error"], (item, row["error"])


def test_bad_image_rows_carry_the_image_message_verbatim(battery):
    for item in IMAGE_BAD:
        assert matches(battery["rows"][item]["error"], image_message(item, battery)), item


@pytest.mark.parametrize("item", list(GRAPH_EXPECTED))
def test_graph_file_items(battery, item):
    status, expected = GRAPH_EXPECTED[item]
    row = battery["rows"][item]
    assert row["status"] == status
    if expected is None:
        assert row["error"] is None and row["scores"] is not None and "graph" in row["scores"]
    else:
        assert matches(row["error"], expand(expected, item, battery)), row["error"]
    if status == "prediction_error":
        assert set(row["scores"].values()) == {0.0}
    if status == "reference_error":
        assert row["scores"] is None  # left out of the means: nothing to score against


def test_symlinks_odd_names_and_the_run_files(battery):
    rows, res = battery["rows"], battery["res"]
    assert rows["link_outside"]["scores"]["graph"] == 1.0  # the careful-gen vit graph, through the link
    assert rows["new\nline"]["prediction"] == str(battery["preds"] / "new\nline.json")
    assert res.summary["unreferenced_predictions"] == ["orphan"]
    n_bad = sum(1 for s, _ in GRAPH_EXPECTED.values() if s == "prediction_error") + len(IMAGE_BAD)
    s = res.summary
    expected_items = len(GOOD_IDS) + len(IMAGE_OK) + len(IMAGE_BAD) + len(GRAPH_EXPECTED)
    assert (s["n_items"], s["n_prediction_errors"], s["n_missing"], s["n_reference_errors"]) == (
        expected_items, n_bad, 2, 2)
    out = battery["root"] / "out"
    logged = [json.loads(line) for line in (out / "results.jsonl").read_text("utf-8").splitlines()]
    assert [r["id"] for r in logged] == [r["id"] for r in res.rows]  # every item once, odd names included
    assert json.loads((out / "summary.json").read_text("utf-8"))["n_items"] == expected_items


# ------------------------------------------------------------------------------ the parse run
@pytest.fixture(scope="module")
def parsed(battery):
    b = battery
    paths = sorted(image_file(item, b) for item in IMAGE_OK + list(IMAGE_BAD))
    paths.append(b["preds"] / "json_dup_ids.json")  # a graph file handed to the parser
    return {o.path.stem: o for o in parse_many(paths, CONFIG, jobs=1, cache_dir=b["cache"])}


def parse_message(item: str, b) -> str | re.Pattern[str]:
    if item == "json_dup_ids":
        return f"unreadable image {b['preds'] / 'json_dup_ids.json'}: not a recognised image file"
    return image_message(item, b)


def test_parse_run_reads_every_valid_image(parsed):
    for item in IMAGE_OK:
        o = parsed[item]
        assert o.error is None and o.graph is not None, (item, o.error)
        if item not in ("img_1x1", "img_black", "img_noise"):
            assert set(o.graph.labels) == {"Encoder", "Decoder"}, item


def test_parse_run_reports_every_bad_image(battery, parsed):
    for item in [*IMAGE_BAD, "json_dup_ids"]:
        o = parsed[item]
        assert o.graph is None and o.error is not None, item
        expected = parse_message(item, battery)
        if isinstance(expected, re.Pattern):
            assert expected.search(o.error), (item, o.error)
        else:
            assert o.error.endswith(expected), (item, o.error)
    for item in ("img_huge", "svg_huge", "pdf_huge"):  # refused from the header, not after decoding
        assert parsed[item].seconds < 1.0, (item, parsed[item].seconds)


def test_parse_run_errors_are_the_image_message_verbatim(battery, parsed):
    for item in [*IMAGE_BAD, "json_dup_ids"]:
        assert matches(parsed[item].error, parse_message(item, battery)), item


# ------------------------------------------------------------------ the loaders on their own
def test_json_limits_are_exact_and_errors_are_json_decode_errors(tmp_path):
    assert parse_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    with pytest.raises(JSONError, match=f"^nested deeper than {MAX_JSON_DEPTH} levels$"):
        parse_json("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    assert json_depth('{"a": "[[[[", "b": "\\"[["}') == 1  # brackets in strings, escaped quotes
    assert json_depth(r'["a\\", [[]], "\\\\"]') == 3
    assert parse_json('\ufeff{"a": 1}') == {"a": 1} and parse_json(b'\xef\xbb\xbf[]') == []
    with pytest.raises(JSONError, match="^document is 11 bytes, over the limit of 10$"):
        parse_json(b'{"a": "xx"}', max_bytes=10)
    with pytest.raises(json.JSONDecodeError):  # what existing handlers catch
        parse_json("[NaN]")
    big = tmp_path / "big.json"
    big.write_text("[" + "1," * 20 + "1]")
    with pytest.raises(JSONError, match=r"^file is 43 bytes, over the limit of 40$"):
        load_json(big, max_bytes=40)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(JSONError, match="^not a regular file$"):  # and it does not block
        load_json(fifo)
    err = pytest.raises(JSONError, parse_json, "[1,", source="x.json").value
    assert (err.source, err.msg, err.lineno, err.colno) == ("x.json", "Expecting value", 1, 4)
    assert pickle.loads(pickle.dumps(err)).reason == err.reason == "not valid JSON: Expecting value at line 1 column 4"


def test_errors_cross_process_pools():
    for exc in (GraphFormatError("g.json", [("$", "nested deeper than 64 levels")]),
                ImageLoadError("x.png", "empty file (0 bytes)")):
        again = pickle.loads(pickle.dumps(exc))
        assert type(again) is type(exc) and str(again) == str(exc)
    assert isinstance(ImageLoadError("x.png", "r"), GraphFormatError)  # what the scoring worker catches


SVG_CASES = {
    # name: (svg text, None for accepted or the reason)
    "units": ('<svg {ns} width="100in" height="100in"/>', "SVG declares 9600x9600 px, 19200x19200 = 368640000 "
              f"pixels at 2x, over the limit of {LIMIT} (decompression-bomb guard)"),
    "viewbox_only": ('<svg {ns} width="100%" viewBox="0 0 20000 20000"/>', "SVG declares 20000x20000 px, "
                     f"40000x40000 = 1600000000 pixels at 2x, over the limit of {LIMIT} (decompression-bomb guard)"),
    "no_size": ('<svg {ns}><rect width="5" height="5"/></svg>',
                "SVG has no size: it needs width and height, or a viewBox"),
    "negative": ('<svg {ns} width="-10" height="10"/>', "SVG declares a size of -10x10 px, not a positive finite size"),
    "local_dtd": ('<?xml version="1.0"?><!DOCTYPE svg SYSTEM "/etc/passwd"><svg {ns} width="9" height="9"/>',
                  "SVG's DOCTYPE refers to the local DTD '/etc/passwd'; refused (XXE guard)"),
    "public_dtd": ('<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
                   '"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg {ns} width="9pt" height="9pt"/>', None),
    "css_import": ('<svg {ns} width="9" height="9"><style>@import "file:///etc/x.css";</style></svg>',
                   "SVG references the external resource 'file:///etc/x.css' in <style> (@import); only #id and data: "
                   "references are allowed (external files and URLs are never read)"),
    "fill_url": ('<svg {ns} width="9" height="9"><rect fill="url(http://x.test/p.svg#g)" width="9" height="9"/></svg>',
                 "SVG references the external resource 'http://x.test/p.svg#g' in <rect fill>; only #id and data: "
                 "references are allowed (external files and URLs are never read)"),
    "hyperlink": ('<svg {ns} width="9" height="9"><a xlink:href="https://x.test"><rect width="9" height="9"/></a>'
                  '<use xlink:href="#r"/></svg>', None),
    "not_svg": ("<html><body/></html>", "the root element is <html>, not <svg>"),
    "opacity_groups": ('<svg {ns} width="6000" height="6000">' + '<g opacity="0.5">' * 5 + "<rect/>" + "</g>" * 5
                       + "</svg>", "SVG nests 5 groups with opacity, a filter or a mask at 12000x12000: 864000000 "
                       f"pixels of intermediate rasters, over the limit of {4 * LIMIT} (decompression-bomb guard)"),
    "too_deep": ('<svg {ns} width="9" height="9">' + "<g>" * 300 + "</g>" * 300 + "</svg>",
                 "SVG nests elements deeper than 200 levels"),
    "too_many": ('<svg {ns} width="9" height="9">' + "<rect/>" * 100_000 + "</svg>",
                 "SVG has more than 100000 elements"),
    "malformed": ('<svg {ns} width="9" height="9"><rect', re.compile(r"not well-formed SVG \(XML\): unclosed token.*")),
}


@pytest.mark.parametrize("case", list(SVG_CASES))
def test_svg_checks(tmp_path, case):
    text, reason = SVG_CASES[case]
    p = tmp_path / f"{case}.svg"
    p.write_text(text.replace("{ns}", SVG_NS), "utf-8")
    if reason is None:
        assert load_image(p).shape[2] == 3
        return
    with pytest.raises(ImageLoadError) as ei:
        load_image(p)
    expected = f"unreadable image {p}: "
    assert str(ei.value).startswith(expected)
    rest = str(ei.value)[len(expected):]
    assert reason.fullmatch(rest) if isinstance(reason, re.Pattern) else rest == reason


def test_svg_bombs_inside_the_file(tmp_path):
    import base64
    import gzip

    bomb = base64.b64encode(png_header_only(60000, 60000)).decode()
    p = tmp_path / "embedded.svg"
    p.write_text(f'<svg {SVG_NS} width="9" height="9"><image xlink:href="data:image/png;base64,{bomb}"/></svg>')
    with pytest.raises(ImageLoadError, match=r"SVG embeds an image of 60000x60000 = 3600000000 pixels, over the "):
        load_image(p)
    g = tmp_path / "gzip.svg"
    g.write_bytes(gzip.compress(f'<svg {SVG_NS} width="9" height="9">'.encode() + b" " * (40 << 20) + b"</svg>"))
    with pytest.raises(ImageLoadError, match=r"gzip-compressed SVG expands to more than 33554432 bytes$"):
        load_image(g)
    ok = tmp_path / "small.svg"
    ok.write_bytes(gzip.compress(f'<svg {SVG_NS} width="20" height="10"/>'.encode()))
    assert load_image(ok).shape == (20, 40, 3)
