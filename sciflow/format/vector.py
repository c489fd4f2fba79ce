"""SVG and PDF input, checked before anything is rasterised (used by :func:`sciflow.format.imageio.load_image`).

Decompression-bomb guard: an SVG or a PDF is refused before rasterising when the raster it
would become is over ``max_pixels`` (default :data:`~sciflow.format.imageio.MAX_PIXELS`):

* SVG: the root ``width``/``height`` (units px, pt, pc, mm, cm, in, em, ex, ch at 96 dpi; a
  percentage or a missing one falls back on the ``viewBox``, and when only one is given the
  larger of the two readings the rasterisers use is taken) times :data:`SVG_SCALE`; an SVG with
  no size at all is refused. Raster images embedded as ``data:`` URIs are checked from their
  headers against the same limit, embedded SVG images like the file (to :data:`MAX_SVG_NESTING`);
* SVG groups: each nested element with opacity, a filter or a mask makes cairo allocate one more
  raster of the output's size; an SVG whose nesting of them (every element, when a stylesheet
  sets one of them) would need over :data:`GROUP_RASTERS` x ``max_pixels`` is refused, and so are
  element nesting deeper than :data:`MAX_SVG_DEPTH` and more than :data:`MAX_SVG_ELEMENTS` elements;
* PDF: page 1's size in points times :data:`PDF_SCALE`.

An SVG's XML is read with a parser that refuses, before any rasteriser sees the file: an entity
declaration (billion laughs, XXE ``<!ENTITY x SYSTEM "file:///...">``), a DOCTYPE naming a DTD on
the local disk, and any reference to an external resource (``href``/``xlink:href`` other than
``#id`` and ``data:``, ``url(...)`` and ``@import`` in styles, ``xml-stylesheet``); they are
refused, not silently dropped. ``<a href>`` (a hyperlink, never fetched) and a plain
``<!DOCTYPE svg PUBLIC "..." "http://www.w3.org/...">`` (graphviz, matplotlib) are accepted.
SVG text over :data:`MAX_SVG_BYTES` (after gunzip, for a compressed SVG) is refused.

Every refusal is an :class:`~sciflow.format.imageio.ImageLoadError`: ``unreadable image <file>:
<reason>``, one line.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import math
import re
import shutil
import subprocess
import urllib.parse
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from sciflow.format.imageio import MAX_PIXELS, ImageLoadError, _load_raster, _one_line, _own_bomb_guard, _pil_to_rgb

#: SVG is rasterised at this multiple of its nominal size (CSS px at 96 dpi).
SVG_SCALE = 2.0
#: PDF pages are rendered at 72 x this dpi.
PDF_SCALE = 2.0
#: Largest SVG text accepted (bytes; after gunzip for a compressed SVG).
MAX_SVG_BYTES = 32 * 1024 * 1024
#: SVG images embedded in an SVG (``data:image/svg+xml``), checked to this depth; deeper is refused.
MAX_SVG_NESTING = 4
#: Deepest element nesting accepted in an SVG (cairosvg draws recursively).
MAX_SVG_DEPTH = 200
#: Most elements accepted in an SVG (cairosvg draws about 15,000 a second; a diagram has hundreds).
MAX_SVG_ELEMENTS = 100_000
#: Each nested element with opacity, a filter or a mask makes cairo allocate one more raster of
#: the output's size; their total is refused over this many times ``max_pixels``.
GROUP_RASTERS = 4


class _Refused(Exception):
    """Internal: an SVG refused while its XML is read (carries the reason)."""


def looks_like_svg(data: bytes) -> bool:
    """True for bytes that start like an SVG document (whatever the file is called)."""
    head = data[:4096].lstrip()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip()
    return head.startswith(b"<svg") or (head.startswith((b"<?xml", b"<!DOCTYPE svg", b"<!--")) and b"<svg" in head)


# CSS px per unit at 96 dpi, as cairosvg and librsvg read them (em = 12pt = 16px, ex = ch = em / 2)
_SVG_UNITS = {"px": 1.0, "in": 96.0, "cm": 96.0 / 2.54, "mm": 96.0 / 25.4, "pt": 96.0 / 72.0,
              "pc": 16.0, "em": 16.0, "ex": 8.0, "ch": 8.0}
_DATA_URI = re.compile(r"^\s*data:([^,]*),(.*)$", re.S | re.I)
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?(['"]?)([^'")\s;]+)""", re.I)
_GROUP_WORDS = ("opacity", "filter", "mask")
#: Longest root width/height/viewBox value read (longer is refused: no real SVG needs more).
_MAX_SIZE_CHARS = 200


def _svg_length(value: str | None) -> float | None:
    """A root ``width``/``height`` in CSS px, or None when absent, a percentage or unknown (the
    rasterisers then fall back on the viewBox)."""
    if value is None:
        return None
    v = value.strip().lower()
    if len(v) > _MAX_SIZE_CHARS:
        raise _Refused(f"SVG width/height is over {_MAX_SIZE_CHARS} characters")
    try:
        return float(v)
    except ValueError:
        pass
    for unit, px in _SVG_UNITS.items():
        if v.endswith(unit):
            try:
                return float(v[: -len(unit)].strip()) * px
            except ValueError:
                return None
    return None


def _svg_viewbox(value: str | None) -> tuple[float, float] | None:
    if value is None:
        return None
    if len(value) > 4 * _MAX_SIZE_CHARS:
        raise _Refused(f"SVG viewBox is over {4 * _MAX_SIZE_CHARS} characters")
    parts = value.replace(",", " ").split()
    try:
        _x, _y, w, h = (float(v) for v in parts)
    except ValueError:
        raise _Refused(f"malformed viewBox {_clip_repr(value, 60)}") from None
    return w, h


def _svg_nominal_size(attrs: dict[str, str]) -> tuple[float, float]:
    """The nominal size (CSS px) the rasteriser will give the root ``<svg>``: the larger of our
    reading and cairosvg's own where they differ, and where cairosvg and librsvg differ (one
    dimension missing: cairosvg takes the viewBox's, librsvg keeps the aspect ratio)."""
    w, h = _svg_length(attrs.get("width")), _svg_length(attrs.get("height"))
    vb = _svg_viewbox(attrs.get("viewBox"))
    if vb is not None and (w is None or h is None):
        vw, vh = vb
        if w is None and h is None:
            w, h = vw, vh
        elif w is None:
            w = max(vw, h * vw / vh if vh else 0.0)
        else:
            h = max(vh, w * vh / vw if vw else 0.0)
    cw, ch = _cairosvg_size(attrs)
    if w is None and cw:
        w = cw
    if h is None and ch:
        h = ch
    if w is None or h is None:
        raise _Refused("SVG has no size: it needs width and height, or a viewBox")
    w, h = max(w, cw), max(h, ch)
    if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
        raise _Refused(f"SVG declares a size of {w:g}x{h:g} px, not a positive finite size")
    return w, h


def _cairosvg_size(attrs: dict[str, str]) -> tuple[float, float]:
    """The root size as cairosvg itself reads it (0, 0 without cairosvg), so that no reading of
    ours can be smaller than what it will allocate."""
    try:
        from cairosvg.helpers import node_format  # noqa: PLC0415
    except ImportError:
        return 0.0, 0.0
    from types import SimpleNamespace  # noqa: PLC0415

    # the root surface's state when cairosvg sizes it: 96 dpi, 12pt font, no parent viewport
    surface = SimpleNamespace(dpi=96, font_size=16.0, context_width=None, context_height=None)
    try:
        w, h, _vb = node_format(surface, attrs)
        return float(w or 0.0), float(h or 0.0)
    except Exception:  # noqa: BLE001 - what cairosvg cannot read, it cannot allocate either
        return 0.0, 0.0


def _check_reference(value: str, where: str) -> None:
    v = value.strip()
    if not v or v.startswith("#") or v[:5].lower() == "data:":
        return
    raise _Refused(
        f"SVG references the external resource {_clip_repr(v)} in {where}; only #id and data: "
        "references are allowed (external files and URLs are never read)"
    )


def _clip_repr(v: str, limit: int = 80) -> str:
    r = repr(v)
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _css_urls(text: str) -> Iterator[str]:
    """The targets of every ``url(...)`` in ``text``, in one linear pass (no regex backtracking)."""
    low, i = text.lower(), 0
    while True:
        j = low.find("url(", i)
        if j < 0:
            return
        k = text.find(")", j + 4)
        end = len(text) if k < 0 else k
        yield text[j + 4 : end].strip().strip("'\"").strip()
        i = end + 1


def _check_css(text: str, where: str) -> None:
    for url in _css_urls(text):
        _check_reference(url, where)
    for _q, url in _CSS_IMPORT.findall(text):
        _check_reference(url, f"{where} (@import)")


def _pi_hrefs(data: str) -> Iterator[str]:
    """``href`` values of a processing instruction's pseudo-attributes (one linear pass)."""
    i = 0
    while True:
        j = data.find("href", i)
        if j < 0:
            return
        k = j + 4
        while k < len(data) and data[k] in " \t\r\n=":
            k += 1
        if k >= len(data) or data[k] not in "'\"":
            i = k
            continue
        end = data.find(data[k], k + 1)
        end = len(data) if end < 0 else end
        yield data[k + 1 : end]
        i = end + 1


def _decode_data_uri(uri: str) -> bytes | None:
    m = _DATA_URI.match(uri)
    if m is None:
        return None
    meta, payload = m.group(1), m.group(2)
    try:
        if meta.lower().rstrip().endswith(";base64"):
            return base64.b64decode("".join(payload.split()), validate=False)
        return urllib.parse.unquote_to_bytes(payload)
    except (binascii.Error, ValueError):
        return None


def _check_embedded(uri: str, max_pixels: int, nesting: int) -> None:
    """Header check of a raster embedded as a data: URI; an embedded SVG is scanned like the file."""
    data = _decode_data_uri(uri)
    if not data:
        return
    if data[:2] == b"\x1f\x8b" or looks_like_svg(data):
        if nesting >= MAX_SVG_NESTING:
            raise _Refused(f"SVG nests embedded SVG images more than {MAX_SVG_NESTING} levels deep")
        _scan_svg(_gunzip_svg(data), max_pixels, nesting + 1)
        return
    with _own_bomb_guard():
        try:
            size = Image.open(io.BytesIO(data)).size
        except Exception:  # noqa: BLE001 - not a raster PIL knows: the rasteriser will skip it
            return
    w, h = size
    if w * h > max_pixels:
        raise _Refused(
            f"SVG embeds an image of {w}x{h} = {w * h} pixels, over the limit of {max_pixels} "
            "(decompression-bomb guard)"
        )


def _gunzip_svg(data: bytes) -> bytes:
    if data[:2] != b"\x1f\x8b":
        if len(data) > MAX_SVG_BYTES:
            raise _Refused(f"SVG is {len(data)} bytes, over the limit of {MAX_SVG_BYTES}")
        return data
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, MAX_SVG_BYTES + 1)
    except zlib.error as exc:
        raise _Refused(f"corrupt gzip-compressed SVG: {exc}") from None
    if len(out) > MAX_SVG_BYTES:
        raise _Refused(f"gzip-compressed SVG expands to more than {MAX_SVG_BYTES} bytes")
    return out


@dataclass
class _SvgFacts:
    root: dict[str, str]
    depth: int = 0  # deepest element nesting
    elements: int = 0
    groups: int = 0  # deepest nesting of elements that may make cairo push a group (an extra raster)


def _scan_svg(data: bytes, max_pixels: int, nesting: int = 0) -> _SvgFacts:
    """Read the SVG's XML with a parser that refuses entities and external references (raising
    :class:`_Refused`); check every reference and embedded raster; measure the nesting."""
    import xml.parsers.expat as expat  # noqa: PLC0415

    parser = expat.ParserCreate(namespace_separator="}")
    facts: _SvgFacts | None = None
    stack: list[int] = []  # per open element: the group nesting up to it
    style: list[str] | None = None  # text of the open <style> element
    css_groups = False  # a stylesheet sets opacity/filter/mask: count every element

    def local(name: str) -> str:
        return name.rsplit("}", 1)[-1]

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal facts, style
        el = local(tag)
        if facts is None:
            if el != "svg":
                raise _Refused(f"the root element is <{_clip_repr(el, 40)[1:-1]}>, not <svg>")
            facts = _SvgFacts({local(k): v for k, v in attrs.items()})
        for key, value in attrs.items():
            k = local(key)
            if k == "href" and el != "a":  # <a href> is a hyperlink, never fetched
                _check_reference(value, f"<{el} {k}>")
                if el in ("image", "feImage"):
                    _check_embedded(value, max_pixels, nesting)
            elif "url(" in value.lower():
                _check_css(value, f"<{el} {k}>")
        group = any(w in attrs for w in _GROUP_WORDS) or any(w in attrs.get("style", "") for w in _GROUP_WORDS)
        stack.append((stack[-1] if stack else 0) + group)
        if len(stack) > MAX_SVG_DEPTH:
            raise _Refused(f"SVG nests elements deeper than {MAX_SVG_DEPTH} levels")
        facts.elements += 1
        if facts.elements > MAX_SVG_ELEMENTS:
            raise _Refused(f"SVG has more than {MAX_SVG_ELEMENTS} elements")
        facts.depth = max(facts.depth, len(stack))
        facts.groups = max(facts.groups, stack[-1])
        if el == "style":
            style = []

    def end(tag: str) -> None:
        nonlocal style, css_groups
        stack.pop()
        if local(tag) == "style" and style is not None:
            css = "".join(style)
            _check_css(css, "<style>")
            css_groups = css_groups or any(w in css for w in _GROUP_WORDS)
            style = None

    def text(data: str) -> None:
        if style is not None:
            style.append(data)

    def entity_decl(entity_name: str, *_: Any) -> None:
        raise _Refused(
            f"SVG declares the XML entity {_clip_repr(entity_name, 40)}; XML entities are refused "
            "(billion-laughs / XXE guard)"
        )

    def external_entity(_context: Any, _base: Any, system_id: str | None, _public_id: Any) -> int:
        raise _Refused(f"SVG refers to the external XML entity {_clip_repr(str(system_id))}; refused (XXE guard)")

    def doctype(_name: str, system_id: str | None, _public_id: str | None, _internal: int) -> None:
        # a public DTD URL (graphviz, matplotlib: http://www.w3.org/...) is never fetched; a local one is refused
        if system_id and not system_id.lower().startswith(("http://", "https://")):
            raise _Refused(f"SVG's DOCTYPE refers to the local DTD {_clip_repr(system_id)}; refused (XXE guard)")

    def processing_instruction(target: str, data: str) -> None:
        if target == "xml-stylesheet":
            for href in _pi_hrefs(data):
                _check_reference(href, "<?xml-stylesheet?>")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.EntityDeclHandler = entity_decl
    parser.UnparsedEntityDeclHandler = entity_decl
    parser.ExternalEntityRefHandler = external_entity
    parser.StartDoctypeDeclHandler = doctype
    parser.ProcessingInstructionHandler = processing_instruction
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise _Refused(f"not well-formed SVG (XML): {_one_line(exc)}") from None
    if facts is None:
        raise _Refused("no <svg> element")
    if css_groups:
        facts.groups = facts.depth
    return facts


def check_svg(data: bytes, name: str, max_pixels: int = MAX_PIXELS, scale: float = SVG_SCALE) -> tuple[int, int]:
    """The size in pixels the SVG ``data`` will be rasterised to at ``scale``, after every
    check in the module docstring (entities, external references, embedded rasters, the
    declared size against ``max_pixels``, the intermediate rasters of nested groups against
    ``GROUP_RASTERS * max_pixels``). Raises :class:`ImageLoadError`."""
    try:
        facts = _scan_svg(_gunzip_svg(data), max_pixels)
        w, h = _svg_nominal_size(facts.root)
    except _Refused as exc:
        raise ImageLoadError(name, str(exc)) from None
    ow, oh = math.ceil(w * scale), math.ceil(h * scale)
    if ow * oh > max_pixels:
        raise ImageLoadError(
            name,
            f"SVG declares {w:g}x{h:g} px, {ow}x{oh} = {ow * oh} pixels at {scale:g}x, over the limit of "
            f"{max_pixels} (decompression-bomb guard)",
        )
    total = ow * oh * (1 + facts.groups)
    if total > GROUP_RASTERS * max_pixels:
        raise ImageLoadError(
            name,
            f"SVG nests {facts.groups} groups with opacity, a filter or a mask at {ow}x{oh}: {total} pixels of "
            f"intermediate rasters, over the limit of {GROUP_RASTERS * max_pixels} (decompression-bomb guard)",
        )
    return ow, oh


def load_svg(name: str, data: bytes, max_pixels: int) -> np.ndarray:
    check_svg(data, name, max_pixels)  # before any rasteriser sees the file
    try:
        data = _gunzip_svg(data)
    except _Refused as exc:  # not reachable: check_svg did the same
        raise ImageLoadError(name, str(exc)) from None
    png: bytes | None = None
    try:
        import cairosvg  # noqa: PLC0415

        try:
            png = cairosvg.svg2png(bytestring=data, scale=SVG_SCALE, background_color="white")
        except Exception as exc:  # noqa: BLE001
            raise ImageLoadError(name, f"cannot rasterise SVG: {_one_line(exc)}") from exc
    except ImportError:
        exe = shutil.which("rsvg-convert")
        if exe is None:
            need = "SVG input needs the 'cairosvg' package or Debian 'librsvg2-bin'"
            raise ImageLoadError(name, need) from None
        proc = subprocess.run(
            [exe, f"--zoom={SVG_SCALE:g}", "--background-color=white", "--format=png"],
            input=data,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            reason = _one_line(proc.stderr.decode("utf-8", "replace"))
            raise ImageLoadError(name, f"cannot rasterise SVG: {reason}") from None
        png = proc.stdout
    return _load_raster(io.BytesIO(png), name, max_pixels)


# ------------------------------------------------------------------------ PDF
def load_pdf(name: str, data: bytes, max_pixels: int) -> np.ndarray:
    try:
        import pypdfium2 as pdfium  # noqa: PLC0415
    except ImportError:
        raise ImageLoadError(name, "PDF input needs the 'pypdfium2' package") from None
    doc = None
    try:
        doc = pdfium.PdfDocument(data)
        if len(doc) == 0:
            raise ImageLoadError(name, "PDF has no pages")
        page = doc[0]
        w, h = page.get_size()
        if not (math.isfinite(w) and math.isfinite(h) and w > 0 and h > 0):
            raise ImageLoadError(name, f"PDF page 1 has no usable size ({w:g}x{h:g} pt)")
        ow, oh = math.ceil(w * PDF_SCALE), math.ceil(h * PDF_SCALE)
        if ow * oh > max_pixels:  # checked before rendering
            raise ImageLoadError(
                name,
                f"PDF page 1 is {w:g}x{h:g} pt, {ow}x{oh} = {ow * oh} pixels at {72 * PDF_SCALE:g} dpi, over the "
                f"limit of {max_pixels} (decompression-bomb guard)",
            )
        im = page.render(scale=PDF_SCALE).to_pil()
    except ImageLoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - pdfium raises its own error types
        raise ImageLoadError(name, f"cannot render PDF: {_one_line(exc)}") from exc
    finally:
        if doc is not None:
            with contextlib.suppress(Exception):
                doc.close()
    return _pil_to_rgb(im, name)
