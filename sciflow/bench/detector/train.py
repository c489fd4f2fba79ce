"""Seeded, resumable training of the diagram-element detector with ultralytics, ONNX export,
and the metadata that the model card and the Layout Detector read.

``ultralytics`` (AGPL-3.0, the optional ``detector`` extra) is imported only here; parsing
uses the exported ONNX through onnxruntime. Training starts from scratch: no pretrained
checkpoint is downloaded (none can be, offline). ``width`` < YOLOv8n's 0.25 builds a
narrower network from ultralytics' own ``yolov8.yaml`` (written beside the weights as
``model.yaml``), which is what makes CPU training affordable.

Run directory::

    RUN/train_config.json      every argument, dataset summary, versions, hardware
    RUN/weights/{last,best}.pt ultralytics checkpoints (``last.pt`` resumes)
    RUN/layout-detector.onnx   best.pt exported (opset 17, fixed input size)
    RUN/layout-detector.json   classes, input size, hashes, per-class validation mAP, timing
"""

from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from sciflow.bench.detector import CLASSES
from sciflow.format.extras import MissingExtra
from sciflow.format.hashing import file_sha256

log = logging.getLogger(__name__)

ONNX_NAME = "layout-detector.onnx"
META_NAME = "layout-detector.json"


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines a training run (recorded in ``train_config.json``)."""

    data: str
    epochs: int = 30
    imgsz: int = 512
    model: str = "yolov8n.yaml"
    width: float | None = None  # override YOLOv8's width multiple (e.g. 0.125); None keeps the model's
    batch: int = 16
    seed: int = 0
    device: str = "cpu"
    workers: int = 0
    patience: int = 50
    fliplr: float = 0.0  # diagrams are never mirrored: flipping would teach mirrored text
    mosaic: float = 1.0
    close_mosaic: int = 5
    scale: float = 0.25  # random zoom +-25 %: the dataset already varies the text scale (x0.75-1.33)


def _ultralytics() -> Any:
    try:
        import ultralytics  # noqa: PLC0415
    except ImportError as exc:
        raise MissingExtra("training the detector", "detector") from exc
    return ultralytics


def narrow_model_yaml(width: float, out: Path, nc: int = len(CLASSES)) -> Path:
    """Write ultralytics' ``yolov8.yaml`` with one scale ``[0.33, width, 1024]`` and ``nc``
    classes to ``out`` (depth as YOLOv8n; channels scaled by ``width``)."""
    import yaml  # noqa: PLC0415  (a dependency of ultralytics)

    ultra = _ultralytics()
    src = Path(ultra.__file__).parent / "cfg" / "models" / "v8" / "yolov8.yaml"
    cfg = yaml.safe_load(src.read_text())
    cfg.pop("scales", None)
    cfg.update(nc=nc, depth_multiple=0.33, width_multiple=float(width), max_channels=1024)
    out.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return out


def hardware() -> dict[str, Any]:
    """Where training ran: CPU model and cores, and the GPU when torch sees one."""
    import torch  # noqa: PLC0415

    info: dict[str, Any] = {"machine": platform.machine(), "processor": platform.processor(), "cpus": os.cpu_count()}
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def train(config: TrainConfig, run_dir: Path, resume: bool = False) -> dict[str, Any]:
    """Train (or resume from ``run_dir/weights/last.pt``), validate ``best.pt`` per class,
    export ONNX and write ``layout-detector.json``. Returns that metadata."""
    ultra = _ultralytics()
    run_dir = Path(run_dir).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    data_yaml = Path(config.data)
    if data_yaml.is_dir():
        data_yaml = data_yaml / "data.yaml"
    if not data_yaml.is_file():
        raise FileNotFoundError(
            f"no dataset at {config.data} (expected a data.yaml written by `sciflow detector dataset`)"
        )
    dataset_summary_path = data_yaml.parent / "dataset.json"
    dataset_summary = json.loads(dataset_summary_path.read_text()) if dataset_summary_path.is_file() else {}
    last = run_dir / "weights" / "last.pt"
    t0 = time.perf_counter()
    if resume:
        if not last.is_file():
            raise FileNotFoundError(f"cannot resume: {last} does not exist")
        log.info("resuming detector training from %s", last)
        ultra.YOLO(str(last)).train(resume=True)
    else:
        model = config.model
        if config.width is not None:
            model = str(narrow_model_yaml(config.width, run_dir / "model.yaml"))
        record = {
            "config": asdict(config),
            "model_file": model,
            "dataset": dataset_summary,
            "versions": {"ultralytics": ultra.__version__, **_torch_versions()},
            "hardware": hardware(),
        }
        (run_dir / "train_config.json").write_text(json.dumps(record, indent=2) + "\n")
        ultra.YOLO(model).train(
            data=str(data_yaml),
            epochs=config.epochs,
            imgsz=config.imgsz,
            batch=config.batch,
            seed=config.seed,
            deterministic=True,
            device=config.device,
            workers=config.workers,
            patience=config.patience,
            fliplr=config.fliplr,
            mosaic=config.mosaic,
            close_mosaic=config.close_mosaic,
            scale=config.scale,
            pretrained=False,
            amp=False,  # the AMP check downloads a checkpoint; CPU training has no AMP anyway
            plots=False,  # plotting fetches a font from the internet
            project=str(run_dir.parent),
            name=run_dir.name,
            exist_ok=True,
            verbose=False,
        )
    seconds = time.perf_counter() - t0
    return finalize(run_dir, data_yaml, config, seconds, dataset_summary)


def _torch_versions() -> dict[str, str]:
    import torch  # noqa: PLC0415

    return {"torch": torch.__version__}


def finalize(
    run_dir: Path, data_yaml: Path, config: TrainConfig, seconds: float | None, dataset: dict[str, Any]
) -> dict[str, Any]:
    """Validate ``best.pt`` (per-class mAP50 and mAP50-95), export it to ONNX, and write
    the metadata file. Separate from :func:`train` so an interrupted run can be finished."""
    ultra = _ultralytics()
    best = run_dir / "weights" / "best.pt"
    if not best.is_file():
        raise FileNotFoundError(f"no trained weights at {best}")
    model = ultra.YOLO(str(best))
    res = model.val(data=str(data_yaml), imgsz=config.imgsz, batch=config.batch, device=config.device,
                    plots=False, verbose=False, project=str(run_dir), name="val", exist_ok=True)
    per_class: dict[str, dict[str, float]] = {}
    for k, ci in enumerate(res.box.ap_class_index.tolist()):
        per_class[CLASSES[int(ci)]] = {
            "mAP50": round(float(res.box.ap50[k]), 4),
            "mAP50-95": round(float(res.box.ap[k]), 4),
        }
    exported = Path(model.export(format="onnx", imgsz=config.imgsz, opset=17, simplify=False, dynamic=False))
    onnx_path = run_dir / ONNX_NAME
    shutil.move(str(exported), onnx_path)
    epochs_done = _epochs_done(run_dir)
    meta = {
        "format": "sciflow-layout-detector/1",
        "classes": list(CLASSES),
        "imgsz": config.imgsz,
        # the scale the tiles were rendered at: the Layout Detector rescales images to it
        "text_px": dataset.get("text_px"),
        "onnx_sha256": file_sha256(onnx_path),
        "pt_sha256": file_sha256(best),
        "train_config": asdict(config),
        "epochs_completed": epochs_done,
        "training_seconds": None if seconds is None else round(seconds, 1),
        "dataset": {
            k: dataset.get(k) for k in ("n", "seed", "tile", "text_px", "images", "boxes", "styles") if k in dataset
        },
        "validation": {
            "mAP50": round(float(res.box.map50), 4),
            "mAP50-95": round(float(res.box.map), 4),
            "per_class": per_class,
        },
        "hardware": hardware(),
        "versions": {"ultralytics": ultra.__version__, **_torch_versions()},
    }
    (run_dir / META_NAME).write_text(json.dumps(meta, indent=2) + "\n")
    log.info("detector: mAP50 %.3f, mAP50-95 %.3f -> %s", meta["validation"]["mAP50"], meta["validation"]["mAP50-95"],
             onnx_path)
    return meta


def _epochs_done(run_dir: Path) -> int | None:
    """Epochs completed, from ultralytics' ``results.csv`` (one row per epoch)."""
    csv = run_dir / "results.csv"
    if not csv.is_file():
        return None
    return max(0, len(csv.read_text().strip().splitlines()) - 1)
