"""Text Spotter: OCR into text lines with confidences, grouped into multi-line labels.

Backends (``[parser.text_spotter] backend``), registered in :data:`BACKENDS`:

* ``rapidocr`` (default): PP-OCRv6 small det/rec ONNX models shipped in the rapidocr wheel,
  run with onnxruntime. The engine is built once per :class:`TextSpotter`.
* ``tesseract``: pytesseract + the ``tesseract`` binary (Debian ``tesseract-ocr``).
* ``paddleocr``: the ``paddleocr`` package (optional, imported lazily).

A backend implements ``read(image: np.ndarray) -> list[TextBox]`` on an RGB image.

Agent behaviour (exact):

1. If the image's longer side is below ``upscale_below_side`` px, OCR runs on a copy
   enlarged ``upscale_factor`` times; otherwise OCR runs once and, when the median line height
   is below ``min_text_height`` px, runs again on the enlarged copy and keeps that result.
   Boxes are mapped back to working-image coordinates. Then every line box at least
   ``rotated_tall_ratio`` (1.5; 0 turns this off) x as tall as wide is read again by the
   backend's recogniser alone, upright as drawn at 90 and at 270 degrees, and the more
   confident reading is kept with its ``rotation``
   (:func:`~sciflow.agents.text_rotation.reread_tall`: the recogniser reads a tall box turned
   one fixed way, so text running the other way came out upside down). An upright line
   with a run of glyphless columns at least ``split_gap`` (0.8; 0 turns this off) x its
   capital height wide (or a thin mid-height shaft 2 x long), and twice the median of its
   other word spaces, is split there and each piece read again by the recogniser
   (:func:`~sciflow.agents.line_split.split_wide_lines`: two captions side by side, or two
   labels with an arrow drawn between them, detected as one line).
2. Lines with confidence below ``min_confidence`` are dropped; arrow glyphs read as text are
   filtered: lines made only of arrow/line characters (``→ ← ↑ ↓ ⇒ - — – > < | _ = ~``) are
   dropped, single arrowhead-like characters (``V``, ``^``, ``A``, ``|``, ...) are dropped,
   arrow characters are stripped from both ends of a line (``"-> Decoder"`` ->
   ``"Decoder"``; runs of dots at both ends, a dotted line read into its label, too), the
   box of a line so stripped is cut back to its glyphs
   (:func:`~sciflow.agents.text_filters.glyph_span`), and texts of at most 2 characters
   whose box is crossed by a stroke (ink on the ring 2 px outside the box) are dropped:
   arrowheads read as ``D``, ``X``, ... unless the text sits centred inside a drawn outline
   (:func:`enclosed`: a short label in a tight box).
   A text of at most 3 characters at least ``logo_height`` (2.5) x the median line height is
   a logo or an icon's big glyph (a company mark read as ``AI``), not a label; it is kept in
   ``diagram.logos`` (the Shape Text agent leaves a shape holding one unread).
3. Lines are grouped into labels: two lines join when their heights differ by at most
   ``1.6x``, the vertical gap is at most ``line_gap`` x the smaller height and they overlap
   horizontally (or share a left edge or centre within one line height). Fragments on the
   same row (centres within 0.25 x height) with a horizontal gap of at most ``word_gap`` x
   height join with a space.
   Two lines a drawn line runs between (a box's edge, an inner rule: ink across their whole
   shared extent, :func:`~sciflow.agents.text_filters.ruled_apart`) never join.
   Label text is the lines in reading order joined by spaces. Lines drawn at 90 or 270
   degrees group only with lines of the same rotation, by the same rules in their upright frame.
4. Diacritics (:func:`fold_latin_diacritics`, applied to every line before step 2's
   filters): a Latin letter carrying combining marks is folded to its base letter
   (``"aggreğator"`` -> ``"aggregator"``, ``"décoder"`` -> ``"decoder"``) by canonical (NFD)
   decomposition, and Latin ligatures (``ﬁ``, ``ﬂ``) are expanded. Why: the OCR recogniser's
   dictionary holds accented Latin letters and reads specks, line ends and anti-aliasing
   near a glyph as accents; diagram labels in this benchmark's domain (English scientific
   figures) almost never carry them, so a spurious accent costs a label match far more often
   than a true one is lost. Only Latin letters are touched: Greek (``α``, ``β``, ``Ω``, also
   with tonos), math and operator symbols (``⊕``, ``×``, ``∑``), superscripts and subscripts
   (``x²``: compatibility forms are *not* folded, they carry meaning) stay as read. Letters
   without a canonical decomposition (``ø``, ``ł``, ``ß``) are kept.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import cv2
import numpy as np

from sciflow.agents import overlay
from sciflow.agents.diagram import BBox, Diagram, TextBox, TextLabel, bbox_union
from sciflow.agents.line_split import split_wide_lines
from sciflow.agents.registry import AGENTS, BackendAgent, Registry
from sciflow.agents.text_filters import (
    _touches_stroke,
    clean_text,
    enclosed,
    fold_latin_diacritics,
    glyph_span,
    ruled_apart,
)
from sciflow.agents.text_rotation import reread_tall, to_frame
from sciflow.format.extras import MissingExtra

log = logging.getLogger(__name__)

BACKENDS = Registry("text_spotter backend")

def _quad_to_box(idx: int, quad: Any, text: str, score: float, scale: float) -> TextBox:
    pts = np.asarray(quad, dtype=np.float64).reshape(-1, 2) / scale
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    return TextBox(
        id=idx,
        text=text,
        bbox=(float(x0), float(y0), float(x1), float(y1)),
        confidence=float(score),
        polygon=tuple((float(x), float(y)) for x, y in pts),
    )


def _cuda_index(device: str) -> int | None:
    """N for a ``"cuda"`` / ``"cuda:N"`` device string, None for the CPU."""
    if not device.startswith("cuda"):
        return None
    _, _, idx = device.partition(":")
    return int(idx) if idx else 0


class TextBackend:
    """Protocol: ``read(image) -> list[TextBox]``; ``fingerprint() -> dict``."""

    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)

    def read(self, image: np.ndarray) -> list[TextBox]:  # pragma: no cover - protocol
        raise NotImplementedError

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """(text, confidence) of each crop, read as one upright line. This default runs
        :meth:`read` on each crop framed by a white margin of half its height and joins what it
        finds left to right (confidence: the lowest); ``("", 0.0)`` where nothing is read."""
        out: list[tuple[str, float]] = []
        for crop in crops:
            if crop.size == 0:
                out.append(("", 0.0))
                continue
            m = max(4, crop.shape[0] // 2)
            found = sorted(self.read(cv2.copyMakeBorder(crop, m, m, m, m, cv2.BORDER_CONSTANT, value=(255, 255, 255))),
                           key=lambda t: t.bbox[0])
            out.append((" ".join(t.text for t in found), min(t.confidence for t in found)) if found else ("", 0.0))
        return out

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": getattr(self, "registered_name", type(self).__name__)}


@BACKENDS.register("rapidocr")
class RapidOCRBackend(TextBackend):
    """rapidocr (PP-OCRv6 ONNX models from the wheel); the angle classifier is off by
    default (``use_cls = false``): it turns upright text it is unsure of upside down ("N3"
    read as "E"), and the agent reads rotated lines itself (step 1 of the module docstring)."""

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        try:
            from rapidocr import RapidOCR  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - a declared dependency
            raise RuntimeError("text_spotter backend 'rapidocr' needs `pip install rapidocr onnxruntime`") from exc
        self.use_cls = bool(self.params.get("use_cls", False))
        opts = {
            # "the text detection result is empty" is a normal answer here (a box read for a
            # label it may not have), not a warning for the user
            "Global.log_level": "error",
            "Global.use_cls": self.use_cls,
            "Global.text_score": float(self.params.get("text_score", 0.5)),
            # the agent does its own upscaling: let the detector see the image as given
            "Global.max_side_len": int(self.params.get("max_side_len", 4096)),
            "Det.limit_type": "max",
            "Det.limit_side_len": int(self.params.get("det_limit_side_len", 2400)),
        }
        threads = int(self.params.get("threads", 0))
        if threads > 0:
            opts["EngineConfig.onnxruntime.intra_op_num_threads"] = threads
        # runtime device (sciflow.models.device): "cuda:N" runs both ONNX sessions on CUDAExecutionProvider N
        self.device = str(self.params.get("device", "cpu"))
        cuda_index = _cuda_index(self.device)
        if cuda_index is not None:
            from sciflow.models.device import DeviceError, onnxruntime_cuda_problem  # noqa: PLC0415

            problem = onnxruntime_cuda_problem()
            if problem:
                raise DeviceError(f"text_spotter backend 'rapidocr' on {self.device}: {problem}")
            opts["EngineConfig.onnxruntime.use_cuda"] = True
            opts["EngineConfig.onnxruntime.cuda_ep_cfg.device_id"] = cuda_index
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        self.engine = RapidOCR(params=opts)
        if cuda_index is not None:
            self._check_cuda_sessions()

    def _check_cuda_sessions(self) -> None:
        """Build the (lazily loaded) det/rec sessions now and fail loudly when onnxruntime put
        them on another provider than CUDA (rapidocr itself only logs a warning)."""
        from sciflow.models.device import CUDA_PROVIDER, ONNX_GPU_HINT, DeviceError  # noqa: PLC0415

        for loader in ("_load_det_model", "_load_rec_model"):
            load = getattr(self.engine, loader, None)
            if load is None:  # pragma: no cover - another rapidocr layout: nothing to check
                log.warning("rapidocr has no %s; cannot verify its ONNX sessions run on CUDA", loader)
                continue
            session = getattr(getattr(load(), "session", None), "session", None)
            providers = list(session.get_providers()) if session is not None else []
            if providers and providers[0] != CUDA_PROVIDER:
                raise DeviceError(
                    f"text_spotter backend 'rapidocr' asked for {self.device} but onnxruntime runs it on "
                    f"{providers[0]} (session providers: {providers}); {ONNX_GPU_HINT}"
                )

    def read(self, image: np.ndarray) -> list[TextBox]:
        # the steps are named on every call: rapidocr keeps the last call's choice of steps
        out = self.engine(np.ascontiguousarray(image), use_det=True, use_cls=self.use_cls, use_rec=True)
        if out.boxes is None or out.txts is None:
            return []
        return [
            _quad_to_box(i, q, t, s, 1.0)
            for i, (q, t, s) in enumerate(zip(out.boxes, out.txts, out.scores, strict=False))
        ]

    def recognize(self, crops: Sequence[np.ndarray]) -> list[tuple[str, float]]:
        """The recogniser alone on each crop (no detection, no angle classifier)."""
        out: list[tuple[str, float]] = []
        for crop in crops:
            if crop.size == 0:
                out.append(("", 0.0))
                continue
            rec = self.engine(np.ascontiguousarray(crop), use_det=False, use_cls=False, use_rec=True)
            txts, scores = getattr(rec, "txts", None) or ("",), getattr(rec, "scores", None) or (0.0,)
            out.append((str(txts[0]), float(scores[0])))
        return out

    def fingerprint(self) -> dict[str, Any]:
        import hashlib  # noqa: PLC0415
        from pathlib import Path  # noqa: PLC0415

        import rapidocr  # noqa: PLC0415

        models = {}
        mdir = Path(rapidocr.__file__).parent / "models"
        for name in ("PP-OCRv6_det_small.onnx", "PP-OCRv6_rec_small.onnx"):
            p = mdir / name
            if p.is_file():
                models[name] = hashlib.sha256(p.read_bytes()).hexdigest()[:16]
        return {"backend": "rapidocr", "version": getattr(rapidocr, "__version__", "?"), "models": models}


@BACKENDS.register("tesseract")
class TesseractBackend(TextBackend):
    """pytesseract ``image_to_data`` words grouped by Tesseract's (block, paragraph, line)."""

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        try:
            import pytesseract  # noqa: PLC0415
        except ImportError as exc:
            raise MissingExtra("text_spotter backend 'tesseract' (and Debian `tesseract-ocr`)", "tesseract") from exc
        if shutil.which("tesseract") is None and not self.params.get("binary"):
            raise RuntimeError("text_spotter backend 'tesseract': the `tesseract` binary is not installed")
        if self.params.get("binary"):
            pytesseract.pytesseract.tesseract_cmd = str(self.params["binary"])
        self.pt = pytesseract
        self.psm = int(self.params.get("psm", 11))

    def read(self, image: np.ndarray) -> list[TextBox]:
        d = self.pt.image_to_data(image, config=f"--psm {self.psm}", output_type=self.pt.Output.DICT)
        lines: dict[tuple[int, int, int], list[int]] = {}
        for i, word in enumerate(d["text"]):
            if word.strip() and float(d["conf"][i]) >= 0:
                lines.setdefault((d["block_num"][i], d["par_num"][i], d["line_num"][i]), []).append(i)
        out = []
        for key in sorted(lines):
            idx = lines[key]
            x0 = min(d["left"][i] for i in idx)
            y0 = min(d["top"][i] for i in idx)
            x1 = max(d["left"][i] + d["width"][i] for i in idx)
            y1 = max(d["top"][i] + d["height"][i] for i in idx)
            text = " ".join(d["text"][i].strip() for i in idx)
            conf = float(np.mean([float(d["conf"][i]) for i in idx])) / 100.0
            quad = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
            out.append(_quad_to_box(len(out), quad, text, conf, 1.0))
        return out

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "tesseract", "version": str(self.pt.get_tesseract_version()), "psm": self.psm}


@BACKENDS.register("paddleocr")
class PaddleOCRBackend(TextBackend):
    """The ``paddleocr`` package (>= 3). Parameters in the table are passed to ``PaddleOCR``
    (e.g. ``text_detection_model_dir``, ``text_recognition_model_dir``, ``engine``)."""

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        try:
            from paddleocr import PaddleOCR  # noqa: PLC0415
        except ImportError as exc:
            raise MissingExtra("text_spotter backend 'paddleocr'", "paddleocr") from exc
        kwargs = {k: v for k, v in self.params.items() if k not in ("backend", "device", "threads")}
        # runtime settings, translated to PaddleOCR's names
        if int(self.params.get("threads", 0)) > 0:
            kwargs.setdefault("cpu_threads", int(self.params["threads"]))
        if "device" in self.params:
            idx = _cuda_index(str(self.params["device"]))
            kwargs.setdefault("device", "cpu" if idx is None else f"gpu:{idx}")
        kwargs.setdefault("use_doc_orientation_classify", False)
        kwargs.setdefault("use_doc_unwarping", False)
        kwargs.setdefault("use_textline_orientation", False)
        self.engine = PaddleOCR(**kwargs)

    def read(self, image: np.ndarray) -> list[TextBox]:
        res = self.engine.predict(np.ascontiguousarray(image[:, :, ::-1]))
        out: list[TextBox] = []
        for page in res:
            polys = page["rec_polys"] if "rec_polys" in page else page["dt_polys"]
            for q, t, s in zip(polys, page["rec_texts"], page["rec_scores"], strict=False):
                out.append(_quad_to_box(len(out), q, t, s, 1.0))
        return out


def group_lines(lines: list[TextBox], *, line_gap: float = 0.6, word_gap: float = 0.5,
                image: np.ndarray | None = None) -> list[TextLabel]:
    """Group lines into labels (see module docstring, step 3). Deterministic. Lines drawn at
    90 or 270 degrees group among themselves in their own upright frame
    (:func:`~sciflow.agents.text_rotation.to_frame`); a label's box is its lines' image boxes.
    With ``image``, two lines a drawn line runs between never join
    (:func:`~sciflow.agents.text_filters.ruled_apart`).
    """
    labels: list[TextLabel] = []
    for rotation in sorted({t.rotation for t in lines}):
        same = [t for t in lines if t.rotation == rotation]
        apart = None
        if image is not None:
            def apart(i: int, j: int, same: list[TextBox] = same) -> bool:
                return ruled_apart(image, same[i].bbox, same[j].bbox)
        if rotation == 0:
            labels += _group_upright(same, line_gap, word_gap, apart)
            continue
        by_id = {t.id: t for t in same}
        framed = [replace(t, bbox=to_frame(t.bbox, rotation), rotation=0) for t in same]
        labels += [make_label(0, [by_id[i] for i in lb.line_ids])
                   for lb in _group_upright(framed, line_gap, word_gap, apart)]
    labels.sort(key=lambda lb: (round(lb.bbox[1]), lb.bbox[0]))
    return [replace(lb, id=i) for i, lb in enumerate(labels)]


def _group_upright(lines: list[TextBox], line_gap: float, word_gap: float,
                   apart: Callable[[int, int], bool] | None = None) -> list[TextLabel]:
    """The labels of upright ``lines`` (ids unset); ``apart(i, j)``: lines i and j may not join."""
    n = len(lines)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        a = lines[i].bbox
        ha = a[3] - a[1]
        for j in range(i + 1, n):
            b = lines[j].bbox
            hb = b[3] - b[1]
            h = min(ha, hb)
            if max(ha, hb) > 1.6 * h:
                continue
            # same row: centres within a quarter line, small horizontal gap
            vov = min(a[3], b[3]) - max(a[1], b[1])
            if abs((a[1] + a[3]) - (b[1] + b[3])) / 2 <= 0.25 * h:
                hgap = max(a[0], b[0]) - min(a[2], b[2])
                if hgap <= word_gap * h and not (apart and apart(i, j)):
                    parent[find(i)] = find(j)
                continue
            if vov >= 0.5 * h:  # overlapping rows at different heights: separate labels
                continue
            vgap = max(a[1], b[1]) - min(a[3], b[3])
            if vgap > line_gap * h or vgap < -0.5 * h:
                continue
            hov = min(a[2], b[2]) - max(a[0], b[0])
            aligned = (
                hov > 0.3 * min(a[2] - a[0], b[2] - b[0])
                or abs(a[0] - b[0]) <= h
                or abs((a[0] + a[2]) - (b[0] + b[2])) / 2 <= h
            )
            if aligned and not (apart and apart(i, j)):
                parent[find(i)] = find(j)
    groups: dict[int, list[TextBox]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(lines[i])
    return [make_label(0, members) for members in groups.values()]


def reading_order(lines: list[TextBox]) -> list[TextBox]:
    """Rows top to bottom (a line starts a new row when its centre lies below the previous
    row's bottom), left to right inside a row."""
    rows: list[list[TextBox]] = []
    for t in sorted(lines, key=lambda t: ((t.bbox[1] + t.bbox[3]) / 2, t.bbox[0])):
        cy = (t.bbox[1] + t.bbox[3]) / 2
        if rows and cy <= max(r.bbox[3] for r in rows[-1]) - 0.25 * t.height:
            rows[-1].append(t)
        else:
            rows.append([t])
    return [t for row in rows for t in sorted(row, key=lambda t: t.bbox[0])]


def make_label(label_id: int, members: list[TextBox]) -> TextLabel:
    """One label of ``members`` in reading order; lines that all share a rotation of 90 or
    270 degrees are ordered in their upright frame, and the label carries that rotation."""
    rotation = members[0].rotation if len({t.rotation for t in members}) == 1 else 0
    if rotation:
        by_id = {t.id: t for t in members}
        framed = [replace(t, bbox=to_frame(t.bbox, rotation), rotation=0) for t in members]
        ordered = [by_id[t.id] for t in reading_order(framed)]
    else:
        ordered = reading_order(members)
    text = " ".join(t.text for t in ordered)
    conf = float(min(t.confidence for t in ordered))
    bbox: BBox = bbox_union([t.bbox for t in ordered])
    return TextLabel(label_id, text, bbox, conf, tuple(t.id for t in ordered), rotation)


@AGENTS.register("text_spotter")
class TextSpotter(BackendAgent):
    overlay_legend = (("OCR line", overlay.BLUE), ("label (grouped lines)", overlay.RED))
    """The Text Spotter agent; fills ``diagram.text_lines`` and ``diagram.text_labels``."""

    backends = BACKENDS
    default_backend = "rapidocr"
    inherit_params = False

    def __init__(self, params: Mapping[str, Any]):
        super().__init__(params)
        self.min_conf = float(self.params.get("min_confidence", 0.5))
        self.min_text_height = float(self.params.get("min_text_height", 12))
        self.upscale_below = int(self.params.get("upscale_below_side", 700))
        self.factor = float(self.params.get("upscale_factor", 2.0))
        self.line_gap = float(self.params.get("line_gap", 0.6))
        self.word_gap = float(self.params.get("word_gap", 0.5))
        self.tall_ratio = float(self.params.get("rotated_tall_ratio", 1.5))
        self.logo_height = float(self.params.get("logo_height", 2.5))
        self.split_gap = float(self.params.get("split_gap", 0.8))

    def fingerprint(self) -> dict[str, Any]:
        # agent 2: tall lines read again upright at 0 / 90 / 270 degrees, rotated labels grouped;
        # 3: short texts far taller than the median line are logos; a line whose ends were read
        # from a line (dots, dashes, arrows) is cut back to its glyphs; 4: a line split at a
        # glyphless run far wider than a space (two labels, or an arrow between them)
        return {**self.backend.fingerprint(), "agent": 4}

    def _read(self, image: np.ndarray, factor: float) -> list[TextBox]:
        if factor == 1.0:
            return self.backend.read(image)
        big = cv2.resize(image, None, fx=factor, fy=factor, interpolation=cv2.INTER_CUBIC)
        return [
            _quad_to_box(
                t.id, t.polygon or [(t.bbox[0], t.bbox[1]), (t.bbox[2], t.bbox[3])], t.text, t.confidence, factor
            )
            for t in self.backend.read(big)
        ]

    def run(self, diagram: Diagram) -> None:
        img = diagram.image
        factor = self.factor if max(img.shape[:2]) < self.upscale_below else 1.0
        raw = self._read(img, factor)
        if factor == 1.0 and raw and float(np.median([t.height for t in raw])) < self.min_text_height:
            log.debug("%s: small text, OCR again at %.1fx", diagram.item_id, self.factor)
            factor = self.factor
            raw = self._read(img, factor)
        if self.tall_ratio > 0:
            raw = reread_tall(img, raw, self.backend.recognize, tall_ratio=self.tall_ratio, scale=factor)
        if self.split_gap > 0:
            raw = split_wide_lines(img, raw, self.backend.recognize, gap=self.split_gap, scale=factor)
        lines: list[TextBox] = []
        logos: list[TextBox] = []
        logo = self.logo_height * float(np.median([t.height for t in raw])) if raw else np.inf
        for t in sorted(raw, key=lambda t: (round(t.bbox[1]), t.bbox[0])):
            read = " ".join(fold_latin_diacritics(t.text).split())
            text = clean_text(read)
            if not text or t.confidence < self.min_conf:
                continue
            if text != read and t.rotation == 0:
                # a line's dots, dashes or arrow glyphs read at the ends: the box is the glyphs'
                x0, y0, x1, y1 = glyph_span(img, t.bbox)
                t = replace(t, bbox=(x0, y0, x1, y1), polygon=((x0, y0), (x1, y0), (x1, y1), (x0, y1)))
            if len(text.replace(" ", "")) <= 2 and _touches_stroke(img, t.bbox) and not enclosed(img, t.bbox):
                continue  # an arrowhead or line end read as a character ("D", "X", ...)
            if len(text.replace(" ", "")) <= 3 and t.height >= logo:
                logos.append(TextBox(len(logos), text, t.bbox, t.confidence, t.polygon, t.rotation))
                continue  # a logo or an icon's big glyph
            lines.append(TextBox(len(lines), text, t.bbox, t.confidence, t.polygon, t.rotation))
        diagram.text_lines = lines
        diagram.logos = logos
        diagram.text_labels = group_lines(lines, line_gap=self.line_gap, word_gap=self.word_gap, image=img)
        diagram.evidence["text_spotter"] = {
            "lines": len(lines),
            "logos": [t.text for t in logos],
            "labels": [lb.text for lb in diagram.text_labels],
        }

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """OCR lines in blue, the labels grouped from them in red."""
        for t in diagram.text_lines:
            overlay.box(canvas, t.bbox, overlay.BLUE)
        for lb in diagram.text_labels:
            overlay.box(canvas, lb.bbox, overlay.RED)
