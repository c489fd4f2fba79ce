"""Where the models run: the one place that turns ``--device`` into concrete settings.

``resolve_device(requested)`` accepts ``"cpu"`` (the default, and what the tests use),
``"cuda"``, ``"cuda:N"`` and ``"auto"`` and returns a :class:`DeviceSpec`: the torch device
string handed to every torch model (MiniLM, CLIP, LPIPS, SAM, YOLO) and the onnxruntime
execution providers the OCR engine should run on.

- ``cuda`` / ``cuda:N`` when CUDA cannot be used here raises :class:`DeviceError` naming what is
  missing (a CPU-only torch build, no visible GPU, an onnxruntime without
  ``CUDAExecutionProvider``) and how to install it. A requested GPU never silently becomes a
  CPU run.
- ``auto`` picks ``cuda:0`` when everything needed can use CUDA, else ``cpu``; the spec's
  ``note`` says which and why, and the results manifest records it.

The device is a runtime setting, like the worker thread caps: it is not part of the hashed
configuration, so a score's config hash never depends on it (the manifest records the device
actually used). ``onnxruntime`` is only required to have CUDA when the run uses an onnxruntime
model (``need_onnxruntime``: the OCR engine, the ``yolo_onnx`` layout detector); graph-only
scoring needs just torch.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from sciflow.config import ConfigError

log = logging.getLogger(__name__)

CPU_PROVIDER = "CPUExecutionProvider"
CUDA_PROVIDER = "CUDAExecutionProvider"
DEVICE_CHOICES = ("cpu", "cuda", "auto")  # plus "cuda:N"
_DEVICE_RE = re.compile(r"^(cpu|auto|cuda)(?::(\d+))?$")

ONNX_GPU_HINT = (
    "install the GPU build of onnxruntime: `pip uninstall -y onnxruntime && pip install onnxruntime-gpu` "
    "(its CUDA and cuDNN versions must match the driver; see "
    "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html)"
)
TORCH_GPU_HINT = "install a CUDA build of torch (https://pytorch.org/get-started/locally/)"


class DeviceError(ConfigError):
    """A requested device that cannot be used here (a runtime setting sciflow cannot honour)."""


@dataclass(frozen=True)
class DeviceSpec:
    """The resolved device. ``torch_device`` goes to every torch model (``"cpu"`` or
    ``"cuda:N"``); ``onnx_providers`` is the onnxruntime provider list, best first;
    ``note`` explains an ``auto`` choice."""

    requested: str
    kind: str  # "cpu" | "cuda"
    index: int | None
    torch_device: str
    onnx_providers: tuple[str, ...]
    note: str = ""

    @property
    def is_cuda(self) -> bool:
        return self.kind == "cuda"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["onnx_providers"] = list(self.onnx_providers)
        return d


CPU = DeviceSpec("cpu", "cpu", None, "cpu", (CPU_PROVIDER,))


def parse_device(requested: str) -> tuple[str, int | None]:
    """``(kind, index)`` of a device string; :class:`DeviceError` for anything else."""
    m = _DEVICE_RE.match(str(requested).strip().lower())
    if m is None or (m.group(2) is not None and m.group(1) != "cuda"):
        raise DeviceError(f"unknown device {requested!r}: use cpu, cuda, cuda:N or auto")
    return m.group(1), int(m.group(2)) if m.group(2) is not None else None


def _torch_problem(index: int) -> str | None:
    """Why torch cannot run on ``cuda:index`` here, or None when it can."""
    try:
        import torch
    except ImportError:
        return f"torch is not installed: {TORCH_GPU_HINT}"
    if not torch.cuda.is_available():
        build = getattr(torch.version, "cuda", None)
        if not build:
            return (f"torch {torch.__version__} is a CPU-only build (torch.cuda.is_available() is False): "
                    f"{TORCH_GPU_HINT}")
        return (f"torch.cuda.is_available() is False (torch {torch.__version__} built for CUDA {build}, "
                "but no usable GPU or driver is visible; check nvidia-smi and CUDA_VISIBLE_DEVICES)")
    count = int(torch.cuda.device_count())
    if index >= count:
        return f"cuda:{index} does not exist (torch sees {count} GPU{'s' if count != 1 else ''})"
    return None


def onnx_providers() -> list[str]:
    """onnxruntime's available execution providers ([] when onnxruntime is not installed)."""
    try:
        import onnxruntime
    except ImportError:
        return []
    return list(onnxruntime.get_available_providers())


def onnxruntime_cuda_problem() -> str | None:
    """Why onnxruntime cannot run on CUDA here, or None when it can."""
    try:
        import onnxruntime
    except ImportError:
        return f"onnxruntime is not installed: {ONNX_GPU_HINT}"
    available = onnx_providers()
    if CUDA_PROVIDER not in available:
        return (f"onnxruntime {onnxruntime.__version__} has no {CUDA_PROVIDER} (available: {', '.join(available)}), "
                f"so the OCR engine would run on the CPU: {ONNX_GPU_HINT}")
    return None


def cuda_problems(index: int = 0, *, need_onnxruntime: bool = True) -> list[str]:
    """Everything that stops a run on ``cuda:index`` here ([] when nothing does)."""
    problems = [p for p in (_torch_problem(index),) if p]
    if need_onnxruntime:
        problems += [p for p in (onnxruntime_cuda_problem(),) if p]
    return problems


def _cuda_spec(requested: str, index: int, need_onnxruntime: bool, note: str = "") -> DeviceSpec:
    providers = (CUDA_PROVIDER, CPU_PROVIDER) if CUDA_PROVIDER in onnx_providers() else (CPU_PROVIDER,)
    return DeviceSpec(requested, "cuda", index, f"cuda:{index}", providers, note)


def resolve_device(requested: str = "cpu", *, need_onnxruntime: bool = True) -> DeviceSpec:
    """Resolve ``requested`` (cpu | cuda | cuda:N | auto) into a :class:`DeviceSpec`.

    ``need_onnxruntime``: the run uses the onnxruntime OCR engine, so ``cuda`` also needs
    onnxruntime's ``CUDAExecutionProvider`` (``pip install onnxruntime-gpu``)."""
    kind, index = parse_device(requested)
    if kind == "cpu":
        return DeviceSpec(str(requested), "cpu", None, "cpu", (CPU_PROVIDER,))
    if kind == "cuda":
        idx = index or 0
        problems = cuda_problems(idx, need_onnxruntime=need_onnxruntime)
        if problems:
            raise DeviceError(
                f"device {requested!r} requested but CUDA cannot be used here: " + "; ".join(problems)
                + ". Use --device cpu (or --device auto to take a GPU only when one is usable)."
            )
        return _cuda_spec(str(requested), idx, need_onnxruntime)
    problems = cuda_problems(0, need_onnxruntime=need_onnxruntime)
    if problems:
        note = "auto: cpu, because " + "; ".join(problems)
        log.info("device %s", note)
        return DeviceSpec(str(requested), "cpu", None, "cpu", (CPU_PROVIDER,), note)
    log.info("device auto: cuda:0")
    return _cuda_spec(str(requested), 0, need_onnxruntime, "auto: cuda:0 (torch and the needed onnxruntime see a GPU)")


#: (agent, backend, the agent's default backend) pairs that run on onnxruntime
ONNXRUNTIME_BACKENDS = (("text_spotter", "rapidocr", "rapidocr"), ("layout", "yolo_onnx", "none"))


def uses_onnxruntime(parser_cfg: Mapping[str, Any]) -> bool:
    """True when a parser built from ``parser_cfg`` runs an onnxruntime model: the rapidocr OCR
    engine or the ``yolo_onnx`` layout detector."""
    agents = parser_cfg.get("agents", ("text_spotter", "layout"))
    return any(
        agent in agents and str(parser_cfg.get(agent, {}).get("backend", default)) == backend
        for agent, backend, default in ONNXRUNTIME_BACKENDS
    )
