"""Seeded, resumable training of the diagram-element detector with ultralytics, ONNX export,
and the metadata that the model card and the Layout Detector read.

``ultralytics`` (AGPL-3.0, the optional ``detector`` extra) is imported only here; parsing
uses the exported ONNX through onnxruntime. Training starts from scratch: no pretrained
checkpoint is downloaded (none can be, offline). ``width`` < YOLOv8n's 0.25 builds a
narrower network from ultralytics' own ``yolov8.yaml`` (written beside the weights as
``model.yaml``), which is what makes CPU training affordable.

Run directory::

    RUN/train_config.json      every argument, dataset summary, versions, hardware
    RUN/weights/{last,best}.pt ultralytics checkpoints, written after every epoch (``last.pt`` resumes)
    RUN/layout-detector.onnx   best.pt exported (opset 17, fixed input size)
    RUN/layout-detector.json   classes, input size, hashes, per-class validation mAP, timing

Resuming on another machine or day from a checkpoint kept elsewhere (e.g. the committed
``sciflow/models/layout-detector-v2.last.pt``): :func:`prepare_resume` copies it to
``RUN/weights/last.pt`` (with its ``.train.json`` record as ``RUN/train_config.json``), then
``sciflow detector train --data DATA -o RUN --resume`` continues the recorded schedule; the
dataset path and run folder stored inside the checkpoint are replaced by ``--data`` and ``RUN``.
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


class SessionEnd(Exception):
    """Raised after the last epoch of a training session (:func:`train` ``stop_after_epochs``)."""


def _stop_after(model: Any, epochs: int) -> None:
    """End the session once ``epochs`` epochs of it are saved, leaving a resumable ``last.pt``
    (ultralytics strips the optimizer from a run it finishes itself)."""
    done = {"n": 0}

    def on_model_save(trainer: Any) -> None:
        done["n"] += 1
        if done["n"] >= epochs and trainer.epoch + 1 < trainer.epochs:
            raise SessionEnd(f"session ends after {epochs} epochs (epoch {trainer.epoch + 1} of {trainer.epochs})")

    model.add_callback("on_model_save", on_model_save)


def train(config: TrainConfig, run_dir: Path, resume: bool = False,
          stop_after_epochs: int | None = None) -> dict[str, Any]:
    """Train (or resume from ``run_dir/weights/last.pt``), validate ``best.pt`` per class,
    export ONNX and write ``layout-detector.json``. Returns that metadata.

    ``stop_after_epochs`` ends this session after that many epochs (a day's share of a long
    schedule on the CPU): ``last.pt`` stays resumable, nothing is exported, and the result is
    ``{"stopped": True, "epochs_completed": n}``."""
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
        config = recorded_config(run_dir, config)
        log.info("resuming detector training from %s (schedule of %d epochs)", last, config.epochs)
        # the checkpoint remembers where it was trained: point it at this dataset and run folder
        yolo = ultra.YOLO(str(last))
        if stop_after_epochs:
            _stop_after(yolo, stop_after_epochs)
        try:
            yolo.train(resume=True, data=str(data_yaml), save_dir=str(run_dir), device=config.device,
                       workers=config.workers)
        except SessionEnd as end:
            log.info("%s", end)
            return {"stopped": True, "epochs_completed": epochs_done_in(run_dir)}
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
        yolo = ultra.YOLO(model)
        if stop_after_epochs:
            _stop_after(yolo, stop_after_epochs)
        try:
            yolo.train(
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
        except SessionEnd as end:
            log.info("%s", end)
            return {"stopped": True, "epochs_completed": epochs_done_in(run_dir)}
    seconds = time.perf_counter() - t0
    return finalize(run_dir, data_yaml, config, seconds, dataset_summary)


def recorded_config(run_dir: Path, config: TrainConfig) -> TrainConfig:
    """The configuration recorded in ``run_dir/train_config.json`` (the schedule being resumed),
    with ``data``, ``device`` and ``workers`` taken from ``config``; ``config`` itself when
    nothing is recorded."""
    path = Path(run_dir) / "train_config.json"
    if not path.is_file():
        return config
    recorded = dict(json.loads(path.read_text())["config"])
    recorded.update(data=config.data, device=config.device, workers=config.workers)
    known = {k: v for k, v in recorded.items() if k in TrainConfig.__dataclass_fields__}
    out = TrainConfig(**known)
    if (out.epochs, out.imgsz, out.batch) != (config.epochs, config.imgsz, config.batch):
        log.info("resume keeps the recorded schedule: epochs %d, imgsz %d, batch %d", out.epochs, out.imgsz, out.batch)
    return out


def keep_checkpoint(run_dir: Path, stem: Path) -> tuple[Path, Path]:
    """Copy the resumable ``run_dir/weights/last.pt`` to ``<stem>.last.pt`` and the run's record
    to ``<stem>.train.json`` with ``epochs_completed`` and ``previous_seconds`` (the training time
    so far) added: what is committed so that :func:`prepare_resume` can continue the schedule
    elsewhere. Refuses a checkpoint of a finished run (ultralytics strips its optimizer)."""
    run_dir, stem = Path(run_dir), Path(stem)
    last = run_dir / "weights" / "last.pt"
    import torch  # noqa: PLC0415

    if not last.is_file() or int(torch.load(str(last), map_location="cpu", weights_only=False).get("epoch", -1)) < 0:
        raise FileNotFoundError(f"no resumable checkpoint at {last} (a finished run cannot be resumed)")
    record = json.loads((run_dir / "train_config.json").read_text())
    record.update(epochs_completed=epochs_done_in(run_dir), previous_seconds=_rounded(training_seconds(run_dir)))
    pt, js = stem.with_name(stem.name + ".last.pt"), stem.with_name(stem.name + ".train.json")
    shutil.copyfile(last, pt)
    js.write_text(json.dumps(record, indent=2) + "\n")
    return pt, js


def prepare_resume(checkpoint: Path, run_dir: Path) -> Path:
    """Copy a resumable ``last.pt`` kept outside its run (e.g. committed as
    ``sciflow/models/layout-detector-v2.last.pt``) to ``run_dir/weights/last.pt``, and its
    record (``<name>.train.json`` beside it, if any) to ``run_dir/train_config.json``. Returns
    the copied checkpoint; then ``train(config, run_dir, resume=True)`` continues it."""
    checkpoint = Path(checkpoint)
    if not checkpoint.is_file():
        raise FileNotFoundError(f"no checkpoint at {checkpoint}")
    weights = Path(run_dir) / "weights"
    weights.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(checkpoint, weights / "last.pt")
    stem = checkpoint.name.removesuffix(".last.pt").removesuffix(".pt")
    record = checkpoint.with_name(f"{stem}.train.json")
    if record.is_file():
        shutil.copyfile(record, Path(run_dir) / "train_config.json")
    return weights / "last.pt"


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
    epochs_done = epochs_done_in(run_dir)
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
        "training_seconds": _rounded(training_seconds(run_dir, seconds)),
        "dataset": {
            k: dataset.get(k)
            for k in ("n", "seed", "tile", "text_px", "images", "boxes", "styles", "style_shares")
            if k in dataset
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


def _rounded(v: float | None) -> float | None:
    return None if v is None else round(v, 1)


def training_seconds(run_dir: Path, fallback: float | None = None) -> float | None:
    """Wall-clock training time over all sessions: the ``time`` column of ``results.csv``
    restarts at each resume, so each session's last value is summed, plus the
    ``previous_seconds`` of sessions run in other folders (recorded in ``train_config.json``
    when a kept checkpoint is resumed); ``fallback`` when there is no ``results.csv``."""
    csv = Path(run_dir) / "results.csv"
    record = Path(run_dir) / "train_config.json"
    before = float(json.loads(record.read_text()).get("previous_seconds", 0.0)) if record.is_file() else 0.0
    if not csv.is_file():
        return fallback if fallback is None else fallback + before
    total, prev = 0.0, 0.0
    for row in csv.read_text().strip().splitlines()[1:]:
        t = float(row.split(",")[1])
        if t < prev:
            total += prev
        prev = t
    return total + prev + before


def epochs_done_in(run_dir: Path) -> int | None:
    """Epochs completed: from a resumable ``weights/last.pt`` (its ``epoch`` + 1, which counts
    the epochs of earlier sessions too), else the epoch of the last row of ultralytics'
    ``results.csv`` (epochs are numbered from the schedule's start, also after a resume; a
    finished run's stripped checkpoint no longer says)."""
    last = Path(run_dir) / "weights" / "last.pt"
    if last.is_file():
        import torch  # noqa: PLC0415

        ckpt = torch.load(str(last), map_location="cpu", weights_only=False)
        if int(ckpt.get("epoch", -1)) >= 0:
            return int(ckpt["epoch"]) + 1
    csv = Path(run_dir) / "results.csv"
    if not csv.is_file():
        return None
    rows = csv.read_text().strip().splitlines()
    if len(rows) < 2:
        return 0
    return int(float(rows[-1].split(",")[0]))
