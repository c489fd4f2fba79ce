"""A learned diagram-element detector (ultralytics YOLO) trained on rendered diagrams.

* :mod:`sciflow.bench.detector.augment`: image augmentations that keep boxes exact.
* :mod:`sciflow.bench.detector.dataset`: renders diagrams and writes an ultralytics dataset.
* :mod:`sciflow.bench.detector.train`: seeded, resumable training; ONNX export; metadata for the card.
* :mod:`sciflow.bench.detector.evaluate`: per-class matching of detections against exact boxes.
* :mod:`sciflow.bench.detector.card`: the model card, rendered from the metadata.

The trained weights ship in ``sciflow/models/`` and are read by the Layout Detector agent
(:mod:`sciflow.agents.layout`) through onnxruntime, so parsing never needs ultralytics.
"""

from __future__ import annotations

#: detector classes, in label-index order. The shipped `layout-detector` knows the first five;
#: `layout-detector-v2` adds `arrowtail` (the end of a one-headed connector without the head)
CLASSES: tuple[str, ...] = ("node", "arrowhead", "text", "group", "operator", "arrowtail")

__all__ = ["CLASSES"]
