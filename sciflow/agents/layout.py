"""Layout Detector: optional element detector boxes (``diagram.layout``).

Backends (``[parser.layout] backend``):

* ``none`` (default): no detector; ``diagram.layout`` stays empty.
* ``ultralytics``: a YOLO model from ``weights`` (a ``.pt``/``.onnx`` file trained on diagram
  elements; none ships with any package, see MODELS.md). ``ultralytics`` is imported lazily.
  Boxes with confidence >= ``conf`` are kept with their class names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .diagram import Diagram, LayoutBox
from .registry import AGENTS, BackendAgent, Registry

BACKENDS = Registry("layout backend")


@BACKENDS.register("none")
class NoLayout:
    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)

    def detect(self, image: np.ndarray) -> list[LayoutBox]:
        return []

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "none"}


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
            raise RuntimeError("layout backend 'ultralytics' needs `pip install ultralytics`") from exc
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
        digest = hashlib.sha256(self.weights.read_bytes()).hexdigest()[:16]
        return {"backend": "ultralytics", "weights": self.weights.name, "sha256": digest}


@AGENTS.register("layout")
class LayoutDetector(BackendAgent):
    """The Layout Detector agent; fills ``diagram.layout``."""

    backends = BACKENDS
    default_backend = "none"
    inherit_params = False

    def run(self, diagram: Diagram) -> None:
        diagram.layout = self.backend.detect(diagram.image)
        diagram.evidence["layout"] = {"boxes": len(diagram.layout)}
