"""Layout Detector: element boxes from a learned detector (``diagram.layout``).

Backends (``[parser.layout] backend``):

* ``yolo_onnx``: the diagram-element detector sciflow trains on rendered diagrams
  (:mod:`sciflow.detector`), exported to ONNX and run with onnxruntime. ``weights = ""`` uses
  the model shipped in ``sciflow/models/`` (its card: ``sciflow/models/README.md``); a path
  uses another export with its ``layout-detector.json`` beside it. Classes: ``node``,
  ``arrowhead``, ``text``, ``group``, ``operator``.
* ``ultralytics``: any ultralytics YOLO checkpoint (``.pt``) through ``ultralytics`` itself
  (optional extra), e.g. a run of ``sciflow detector train`` before export.
* ``none``: no detector; ``diagram.layout`` stays empty.

Detection policy (``yolo_onnx``), written out because it decides what the detector can see:
the network takes a square ``imgsz`` input, so an image is letterboxed (scaled so its longer
side is ``imgsz``, padded with grey 114 as in training). An image more elongated than
``tile_aspect`` (a wide pipeline strip) would shrink its arrowheads below a few pixels, so it is
cut along its long axis into overlapping tiles of aspect ``tile_length`` (overlap
``tile_overlap``), the scale the detector was trained at (the dataset crops elongated renders
the same way). Per tile: the best class per anchor with score >= ``conf``, then per-class
non-maximum suppression at IoU ``iou``; a box touching an inner tile edge is dropped (its
element lies whole in the neighbouring tile); tiles are merged by per-class NMS again.
Coordinates are rounded to 0.1 px and scores to 1e-4 so that results are bit-stable.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..device import parse_device
from ..hashing import file_sha256
from .diagram import Diagram, LayoutBox
from .registry import AGENTS, BackendAgent, Registry

log = logging.getLogger(__name__)

BACKENDS = Registry("layout backend")

SHIPPED_ONNX = "layout-detector.onnx"
SHIPPED_META = "layout-detector.json"


def shipped_weights() -> Path:
    """The detector weights that ship inside the package."""
    return Path(str(resources.files("sciflow") / "models" / SHIPPED_ONNX))


@BACKENDS.register("none")
class NoLayout:
    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)

    def detect(self, image: np.ndarray) -> list[LayoutBox]:
        return []

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "none"}


def letterbox(image: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[float, float]]:
    """Scale ``image`` (H, W, 3 uint8) so its longer side is ``size``, centre it on a grey
    (114) square canvas. Returns the canvas, the scale and the (x, y) padding."""
    import cv2  # noqa: PLC0415

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


def tiles(width: int, height: int, max_aspect: float, length: float, overlap: float) -> list[tuple[int, int, int, int]]:
    """Windows (x0, y0, x1, y1) covering the image: the whole image when its aspect is at
    most ``max_aspect``, else overlapping windows along the long axis, each ``length`` x the
    short side long, consecutive windows sharing ``overlap`` of that length."""
    long_side, short = max(width, height), min(width, height)
    if long_side / max(1, short) <= max_aspect:
        return [(0, 0, width, height)]
    span = max(1, round(short * length))
    step = max(1, round(span * (1 - overlap)))
    starts = list(range(0, max(1, long_side - span) + 1, step))
    if starts[-1] + span < long_side:
        starts.append(long_side - span)
    if width >= height:
        return [(s, 0, s + span, height) for s in starts]
    return [(0, s, width, s + span) for s in starts]


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


@BACKENDS.register("yolo_onnx")
class ONNXLayout:
    """The shipped (or a configured) ONNX export of the diagram-element detector."""

    def __init__(self, params: Mapping[str, Any]):
        import onnxruntime as ort  # noqa: PLC0415

        self.params = dict(params)
        weights = str(self.params.get("weights", "") or "")
        self.weights = Path(weights) if weights else shipped_weights()
        if not self.weights.is_file():
            raise RuntimeError(f"layout backend 'yolo_onnx': weights file {self.weights} does not exist")
        meta_path = self.weights.with_name(SHIPPED_META) if not weights else self.weights.with_suffix(".json")
        if not meta_path.is_file():
            meta_path = self.weights.with_name(SHIPPED_META)
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
        self.tile_aspect = float(self.params.get("tile_aspect", 2.2))
        self.tile_length = float(self.params.get("tile_length", 1.6))
        self.tile_overlap = float(self.params.get("tile_overlap", 0.25))
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

    def detect(self, image: np.ndarray) -> list[LayoutBox]:
        h, w = image.shape[:2]
        windows = tiles(w, h, self.tile_aspect, self.tile_length, self.tile_overlap)
        all_boxes, all_scores, all_cls = [], [], []
        for x0, y0, x1, y1 in windows:
            b, s, c = self._detect_tile(np.ascontiguousarray(image[y0:y1, x0:x1]))
            b = b + np.array([x0, y0, x0, y0])
            if len(windows) > 1:  # drop boxes cut by an inner tile edge
                edge = 2.0
                cut = np.zeros(len(b), dtype=bool)
                if x0 > 0:
                    cut |= b[:, 0] <= x0 + edge
                if x1 < w:
                    cut |= b[:, 2] >= x1 - edge
                if y0 > 0:
                    cut |= b[:, 1] <= y0 + edge
                if y1 < h:
                    cut |= b[:, 3] >= y1 - edge
                b, s, c = b[~cut], s[~cut], c[~cut]
            all_boxes.append(b)
            all_scores.append(s)
            all_cls.append(c)
        boxes = np.concatenate(all_boxes) if all_boxes else np.zeros((0, 4))
        scores = np.concatenate(all_scores) if all_scores else np.zeros(0)
        classes = np.concatenate(all_cls) if all_cls else np.zeros(0, dtype=int)
        keep: list[int] = []
        for c in np.unique(classes):
            idx = np.flatnonzero(classes == c)
            keep.extend(int(idx[k]) for k in nms(boxes[idx], scores[idx], self.iou))
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
            raise RuntimeError("layout backend 'ultralytics' needs `pip install 'sciflow[detector]'`") from exc
        self.model = YOLO(str(self.weights))
        self.conf = float(self.params.get("conf", 0.25))
        self.device = str(self.params.get("device", "cpu"))

    def detect(self, image: np.ndarray) -> list[LayoutBox]:
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
    """The Layout Detector agent; fills ``diagram.layout``."""

    backends = BACKENDS
    default_backend = "none"
    inherit_params = False

    def run(self, diagram: Diagram) -> None:
        diagram.layout = self.backend.detect(diagram.image)
        counts: dict[str, int] = {}
        for b in diagram.layout:
            counts[b.cls] = counts.get(b.cls, 0) + 1
        diagram.evidence["layout"] = {"boxes": len(diagram.layout), "by_class": dict(sorted(counts.items()))}
