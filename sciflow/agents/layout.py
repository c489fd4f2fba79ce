"""Layout Detector: element boxes from a learned detector (``diagram.layout``).

Backends (``[parser.layout] backend``):

* ``yolo_onnx``: the diagram-element detector sciflow trains on rendered diagrams
  (:mod:`sciflow.bench.detector`), exported to ONNX and run with onnxruntime. ``weights = ""`` uses
  the model shipped in ``sciflow/models/`` (its card: ``sciflow/models/README.md``); a path
  uses another export with its ``<name>.json`` (or ``layout-detector.json``) beside it; a bare
  file name that is not in the working directory is looked up in ``sciflow/models/`` (e.g.
  ``layout-detector-v2.onnx``, card ``layout-detector-v2.md``). Classes: ``node``,
  ``arrowhead``, ``text``, ``group``, ``operator``, and for ``layout-detector-v2`` also
  ``arrowtail`` (the end of a one-headed connector without the head).
* ``ultralytics``: any ultralytics YOLO checkpoint (``.pt``) through ``ultralytics`` itself
  (optional extra), e.g. a run of ``sciflow detector train`` before export.
* ``none``: no detector; ``diagram.layout`` stays empty.

Detection policy (``yolo_onnx``), written out because it decides what the detector can see: the
network was trained on ``imgsz`` x ``imgsz`` tiles of diagrams rescaled so that a text line is
``text_px`` px high (``layout-detector.json``), which keeps arrowheads 10-20 px whatever the
figure's size. So the image is rescaled by ``text_px / (h / ocr_line_ratio)``, with ``h`` the
median height of the Text Spotter's lines (OCR line boxes are about ``ocr_line_ratio`` x the
glyph height the renderer reports; the factor is clamped to [0.25, 4]), and cut into ``imgsz``
tiles overlapping by ``tile_overlap``, padded with the page colour. Without text (or for a
model without ``text_px``) the whole image is scaled to one tile. ``drop_classes`` (default
none) leaves classes out of the output. Per tile: the best class per anchor with score >=
``conf``, then per-class non-maximum suppression at IoU ``iou``; the tiles' boxes are then
merged by :func:`merge_tiles` (fragments of an element cut by tile edges joined, duplicates
suppressed). Coordinates are rounded to 0.1 px and scores to 1e-4 so that results are
bit-stable.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from sciflow.agents import overlay
from sciflow.agents.diagram import Diagram, LayoutBox
from sciflow.agents.registry import AGENTS, BackendAgent, Registry
from sciflow.format.extras import MissingExtra
from sciflow.format.hashing import file_sha256
from sciflow.models.device import parse_device

log = logging.getLogger(__name__)

BACKENDS = Registry("layout backend")

SHIPPED_ONNX = "layout-detector.onnx"
SHIPPED_META = "layout-detector.json"


def shipped_weights(name: str = SHIPPED_ONNX) -> Path:
    """The detector weights that ship inside the package (``name``: another shipped export)."""
    return Path(str(resources.files("sciflow") / "models" / name))


def resolve_weights(weights: str) -> Path:
    """``""``: the shipped detector; a bare file name missing from the working directory but
    shipped in ``sciflow/models/`` (``layout-detector-v2.onnx``): that file; else the path."""
    if not weights:
        return shipped_weights()
    path = Path(weights)
    if not path.exists() and path.name == weights and shipped_weights(weights).is_file():
        return shipped_weights(weights)
    return path


@BACKENDS.register("none")
class NoLayout:
    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)

    def detect(self, image: np.ndarray, text_height: float | None = None) -> list[LayoutBox]:
        return []

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "none"}


def letterbox(image: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[float, float]]:
    """Scale ``image`` (H, W, 3 uint8) so its longer side is ``size``, centre it on a grey
    (114) square canvas. Returns the canvas, the scale and the (x, y) padding."""
    h, w = image.shape[:2]
    scale = size / max(h, w)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    resized = cv2.resize(image, (nw, nh), interpolation=interp)
    canvas = np.full((size, size, 3), 114, dtype=np.uint8)
    px, py = (size - nw) // 2, (size - nh) // 2
    canvas[py : py + nh, px : px + nw] = resized
    return canvas, scale, (float(px), float(py))


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    """Greedy non-maximum suppression; ``boxes`` (N, 4) xyxy. Indices kept, best first.
    Ties in score are broken by index so the result does not depend on sort stability."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    keep: list[int] = []
    areas = np.maximum(0, boxes[:, 2] - boxes[:, 0]) * np.maximum(0, boxes[:, 3] - boxes[:, 1])
    suppressed = np.zeros(len(scores), dtype=bool)
    for i in order:
        if suppressed[i]:
            continue
        keep.append(i)
        xx0 = np.maximum(boxes[i, 0], boxes[:, 0])
        yy0 = np.maximum(boxes[i, 1], boxes[:, 1])
        xx1 = np.minimum(boxes[i, 2], boxes[:, 2])
        yy1 = np.minimum(boxes[i, 3], boxes[:, 3])
        inter = np.maximum(0, xx1 - xx0) * np.maximum(0, yy1 - yy0)
        union = areas[i] + areas - inter
        overlap = np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0)
        suppressed |= overlap > iou
    return keep


def tiles(width: int, height: int, size: int, overlap: float) -> list[tuple[int, int, int, int]]:
    """Windows ``(x0, y0, x1, y1)`` of side ``size`` covering a ``width`` x ``height`` image,
    consecutive windows sharing ``overlap`` of ``size``; windows may run past the image's right
    and bottom edges (the caller pads). One window when the image fits in one."""

    def starts(length: int) -> list[int]:
        if length <= size:
            return [0]
        step = max(1, round(size * (1 - overlap)))
        out = list(range(0, length - size + 1, step))
        if out[-1] + size < length:
            out.append(length - size)
        return out

    return [(x, y, x + size, y + size) for y in starts(height) for x in starts(width)]


def decode(
    output: np.ndarray, conf: float, iou: float, scale: float, pad: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An ultralytics detection head output ``(1, 4 + nc, N)`` (centre x, centre y, w, h in
    input pixels, then per-class scores) into xyxy boxes in the letterboxed image's source
    pixels, their scores and classes, after per-class NMS."""
    pred = output[0].T  # (N, 4 + nc)
    cls_scores = pred[:, 4:]
    cls = cls_scores.argmax(axis=1)
    score = cls_scores[np.arange(len(cls)), cls]
    sel = score >= conf
    pred, cls, score = pred[sel], cls[sel], score[sel]
    if len(pred) == 0:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0, dtype=int)
    cx, cy, w, h = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    xyxy = (xyxy - np.array([pad[0], pad[1], pad[0], pad[1]])) / scale
    keep: list[int] = []
    for c in np.unique(cls):
        idx = np.flatnonzero(cls == c)
        keep.extend(int(idx[k]) for k in nms(xyxy[idx], score[idx], iou))
    keep.sort()
    return xyxy[keep], score[keep], cls[keep]


def merge_tiles(
    boxes: np.ndarray, scores: np.ndarray, classes: np.ndarray, cut: np.ndarray, iou: float, align: float = 0.25
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Merge detections from overlapping tiles into one set.

    1. Fragments: a box that touches an inner tile edge (``cut``) and a same-class box it
       intersects, whose extents across the cut agree within ``align`` x their size, are one
       element seen by two tiles: they become their union (highest score), repeatedly, so an
       element wider than the tile overlap is rebuilt from its pieces.
    2. Duplicates: per class, greedy suppression (best score first, whole boxes before
       fragments) of boxes whose IoU exceeds ``iou`` or that lie at least 70 % inside a kept box.
    Returns the kept boxes, scores, classes and cut flags, in a deterministic order."""
    items = [
        (boxes[i].astype(float).copy(), float(scores[i]), int(classes[i]), bool(cut[i])) for i in range(len(boxes))
    ]
    merged = True
    while merged:
        merged = False
        for i in range(len(items)):
            for j in range(i + 1, len(items)):
                a, b = items[i], items[j]
                if a[2] != b[2] or not (a[3] or b[3]):
                    continue
                ba, bb = a[0], b[0]
                ix = min(ba[2], bb[2]) - max(ba[0], bb[0])
                iy = min(ba[3], bb[3]) - max(ba[1], bb[1])
                if ix <= 0 or iy <= 0:
                    continue
                ha, hb = ba[3] - ba[1], bb[3] - bb[1]
                wa, wb = ba[2] - ba[0], bb[2] - bb[0]
                rows = abs(ba[1] - bb[1]) <= align * max(ha, hb) and abs(ba[3] - bb[3]) <= align * max(ha, hb)
                cols = abs(ba[0] - bb[0]) <= align * max(wa, wb) and abs(ba[2] - bb[2]) <= align * max(wa, wb)
                if not (rows or cols):
                    continue
                union = np.array([min(ba[0], bb[0]), min(ba[1], bb[1]), max(ba[2], bb[2]), max(ba[3], bb[3])])
                items[i] = (union, max(a[1], b[1]), a[2], a[3] and b[3])
                del items[j]
                merged = True
                break
            if merged:
                break
    order = sorted(range(len(items)), key=lambda k: (items[k][3], -items[k][1], tuple(items[k][0]), k))
    kept: list[int] = []
    for k in order:
        bk = items[k][0]
        area_k = max(1e-9, (bk[2] - bk[0]) * (bk[3] - bk[1]))
        dup = False
        for m in kept:
            if items[m][2] != items[k][2]:
                continue
            bm = items[m][0]
            inter = max(0.0, min(bk[2], bm[2]) - max(bk[0], bm[0])) * max(0.0, min(bk[3], bm[3]) - max(bk[1], bm[1]))
            area_m = max(1e-9, (bm[2] - bm[0]) * (bm[3] - bm[1]))
            if inter / (area_k + area_m - inter) > iou or inter / min(area_k, area_m) >= 0.7:
                dup = True
                break
        if not dup:
            kept.append(k)
    kept.sort(key=lambda k: (items[k][2], tuple(items[k][0])))
    if not kept:
        return np.zeros((0, 4)), np.zeros(0), np.zeros(0, dtype=int), np.zeros(0, dtype=bool)
    return (
        np.array([items[k][0] for k in kept]),
        np.array([items[k][1] for k in kept]),
        np.array([items[k][2] for k in kept], dtype=int),
        np.array([items[k][3] for k in kept], dtype=bool),
    )


@BACKENDS.register("yolo_onnx")
class ONNXLayout:
    """The shipped (or a configured) ONNX export of the diagram-element detector."""

    def __init__(self, params: Mapping[str, Any]):
        import onnxruntime as ort  # noqa: PLC0415

        self.params = dict(params)
        weights = str(self.params.get("weights", "") or "")
        self.weights = resolve_weights(weights)
        if not self.weights.is_file():
            raise RuntimeError(f"layout backend 'yolo_onnx': weights file {self.weights} does not exist")
        # <name>.json beside the weights, else the layout-detector.json that training writes
        candidates = [self.weights.with_suffix(".json"), self.weights.with_name(SHIPPED_META)]
        meta_path = next((m for m in candidates if m.is_file()), candidates[-1])
        if not meta_path.is_file():
            raise RuntimeError(f"layout backend 'yolo_onnx': no metadata ({SHIPPED_META}) beside {self.weights}")
        self.meta = json.loads(meta_path.read_text())
        self.sha256 = file_sha256(self.weights)
        expected = self.meta.get("onnx_sha256")
        if expected and expected != self.sha256:
            raise RuntimeError(
                f"layout backend 'yolo_onnx': {self.weights} has sha256 {self.sha256[:16]}..., "
                f"its metadata {meta_path.name} says {str(expected)[:16]}... (mismatched files)"
            )
        self.classes: list[str] = list(self.meta["classes"])
        self.imgsz = int(self.meta["imgsz"])
        self.conf = float(self.params.get("conf", 0.35))
        self.iou = float(self.params.get("iou", 0.6))
        self.tile_overlap = float(self.params.get("tile_overlap", 0.2))
        self.ocr_line_ratio = float(self.params.get("ocr_line_ratio", 1.5))
        self.text_px = self.meta.get("text_px")
        # classes left out of the output (an ablation, e.g. ["arrowtail"]: heads without the tail veto)
        self.drop = tuple(str(c) for c in self.params.get("drop_classes", []) or [])
        opts = ort.SessionOptions()
        threads = int(self.params.get("threads", 0))
        if threads > 0:
            opts.intra_op_num_threads = threads
        kind, index = parse_device(str(self.params.get("device", "cpu")))
        providers: list[Any] = ["CPUExecutionProvider"]
        if kind == "cuda":
            if "CUDAExecutionProvider" not in ort.get_available_providers():
                raise RuntimeError(
                    "layout backend 'yolo_onnx': device 'cuda' needs onnxruntime's CUDA provider "
                    "(pip install onnxruntime-gpu)"
                )
            providers = [("CUDAExecutionProvider", {"device_id": index or 0}), "CPUExecutionProvider"]
        self.session = ort.InferenceSession(str(self.weights), sess_options=opts, providers=providers)
        self.input_name = self.session.get_inputs()[0].name

    def _detect_tile(self, tile: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        canvas, scale, pad = letterbox(tile, self.imgsz)
        x = np.ascontiguousarray(canvas.transpose(2, 0, 1)[None].astype(np.float32) / 255.0)
        out = self.session.run(None, {self.input_name: x})[0]
        return decode(out, self.conf, self.iou, scale, pad)

    def scale_for(self, image: np.ndarray, text_height: float | None) -> float:
        """The factor the image is resized by before tiling (see the module docstring)."""
        if self.text_px and text_height and text_height > 0:
            return float(np.clip(self.text_px * self.ocr_line_ratio / text_height, 0.25, 4.0))
        return self.imgsz / max(image.shape[:2])

    def detect(self, image: np.ndarray, text_height: float | None = None) -> list[LayoutBox]:
        h, w = image.shape[:2]
        s = self.scale_for(image, text_height)
        sw, sh = max(1, round(w * s)), max(1, round(h * s))
        scaled = cv2.resize(image, (sw, sh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        page = np.median(image.reshape(-1, 3)[:: max(1, h * w // 4096)], axis=0).astype(np.uint8)
        windows = tiles(sw, sh, self.imgsz, self.tile_overlap)
        all_boxes, all_scores, all_cls, all_cut = [], [], [], []
        for x0, y0, x1, y1 in windows:
            crop = scaled[y0:y1, x0:x1]
            if crop.shape[:2] != (self.imgsz, self.imgsz):
                canvas = np.empty((self.imgsz, self.imgsz, 3), np.uint8)
                canvas[:] = page
                canvas[: crop.shape[0], : crop.shape[1]] = crop
                crop = canvas
            b, sc, c = self._detect_tile(np.ascontiguousarray(crop))
            b = b + np.array([x0, y0, x0, y0])
            cut = np.zeros(len(b), dtype=bool)  # touches an inner tile edge: a fragment
            edge = 2.0
            if x0 > 0:
                cut |= b[:, 0] <= x0 + edge
            if x1 < sw:
                cut |= b[:, 2] >= x1 - edge
            if y0 > 0:
                cut |= b[:, 1] <= y0 + edge
            if y1 < sh:
                cut |= b[:, 3] >= y1 - edge
            all_boxes.append(b / s)
            all_scores.append(sc)
            all_cls.append(c)
            all_cut.append(cut)
        boxes, scores, classes, cuts = merge_tiles(
            np.concatenate(all_boxes), np.concatenate(all_scores), np.concatenate(all_cls), np.concatenate(all_cut),
            self.iou,
        )
        keep = [i for i in range(len(boxes)) if self.classes[int(classes[i])] not in self.drop]
        out = []
        for i in keep:
            bx = np.clip(boxes[i], 0, [w, h, w, h])
            out.append(
                LayoutBox(
                    tuple(round(float(v), 1) for v in bx),  # type: ignore[arg-type]
                    self.classes[int(classes[i])],
                    round(float(scores[i]), 4),
                )
            )
        return sorted(out, key=lambda b: (b.bbox[1], b.bbox[0], b.cls, -b.confidence))

    def fingerprint(self) -> dict[str, Any]:
        return {
            "backend": "yolo_onnx",
            "weights": self.weights.name,
            "sha256": self.sha256[:16],
            "imgsz": self.imgsz,
            "conf": self.conf,
            "iou": self.iou,
            "text_px": self.text_px,
            **({"drop_classes": list(self.drop)} if self.drop else {}),
        }


@BACKENDS.register("ultralytics")
class YOLOLayout:
    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)
        weights = self.params.get("weights")
        if not weights:
            raise RuntimeError("layout backend 'ultralytics' needs [parser.layout.ultralytics] weights = '<file>'")
        self.weights = Path(str(weights))
        if not self.weights.is_file():
            raise RuntimeError(f"layout backend 'ultralytics': weights file {self.weights} does not exist")
        try:
            from ultralytics import YOLO  # noqa: PLC0415
        except ImportError as exc:
            raise MissingExtra("layout backend 'ultralytics'", "detector") from exc
        self.model = YOLO(str(self.weights))
        self.conf = float(self.params.get("conf", 0.25))
        self.device = str(self.params.get("device", "cpu"))

    def detect(self, image: np.ndarray, text_height: float | None = None) -> list[LayoutBox]:
        res = self.model.predict(image[:, :, ::-1], conf=self.conf, device=self.device, verbose=False)
        out: list[LayoutBox] = []
        for r in res:
            names = r.names
            for xyxy, cls, conf in zip(r.boxes.xyxy.tolist(), r.boxes.cls.tolist(), r.boxes.conf.tolist(), strict=True):
                out.append(LayoutBox(tuple(float(v) for v in xyxy), str(names[int(cls)]), float(conf)))  # type: ignore[arg-type]
        return sorted(out, key=lambda b: (b.bbox[1], b.bbox[0]))

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "ultralytics", "weights": self.weights.name, "sha256": file_sha256(self.weights)[:16]}


@AGENTS.register("layout")
class LayoutDetector(BackendAgent):
    overlay_legend = (("detected box, with its class", overlay.PURPLE),)
    """The Layout Detector agent; fills ``diagram.layout``."""

    backends = BACKENDS
    default_backend = "none"
    inherit_params = False

    def run(self, diagram: Diagram) -> None:
        heights = [t.height for t in diagram.text_lines]
        diagram.layout = self.backend.detect(diagram.image, float(np.median(heights)) if heights else None)
        counts: dict[str, int] = {}
        for b in diagram.layout:
            counts[b.cls] = counts.get(b.cls, 0) + 1
        diagram.evidence["layout"] = {"boxes": len(diagram.layout), "by_class": dict(sorted(counts.items()))}

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """Each detected box in purple, with its class."""
        for b in diagram.layout:
            overlay.box(canvas, b.bbox, overlay.PURPLE, 2)
            overlay.text(canvas, b.cls, b.bbox[0], b.bbox[1] - 2, overlay.PURPLE)
