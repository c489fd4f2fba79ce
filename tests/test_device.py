"""`--device`: one resolver, clear errors, the device reaching every model, outside the config hash.

No GPU is needed: CUDA is faked by monkeypatching torch's and onnxruntime's availability
checks, and the OCR engine's ``InferenceSession`` constructor is intercepted to see which
providers sciflow asks for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import onnxruntime
import pytest
import torch

from sciflow.cli import main
from sciflow.config import Config, ImageConfig, load_config
from sciflow.models import embedding, image_models
from sciflow.models.device import (
    CPU_PROVIDER,
    CUDA_PROVIDER,
    DeviceError,
    parse_device,
    resolve_device,
    uses_onnxruntime,
)
from sciflow.pipeline import Parser
from sciflow.runs.executors import ExecutorError, ray_gpus
from sciflow.runs.scoring import run_scoring
from sciflow.runs.worker import Worker, WorkerSpec

STRING_ONLY = load_config(overrides={"matching": {"embedder": "none"}})


@pytest.fixture
def no_cuda(monkeypatch):
    """This machine as a CPU-only one, whatever it really has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: [CPU_PROVIDER])


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch and onnxruntime both claim one CUDA GPU."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: [CUDA_PROVIDER, CPU_PROVIDER])


# ------------------------------------------------------------------ resolver
def test_cpu_is_the_default_and_needs_nothing():
    spec = resolve_device()
    assert (spec.kind, spec.torch_device, spec.onnx_providers, spec.index) == ("cpu", "cpu", (CPU_PROVIDER,), None)
    assert spec.to_dict()["onnx_providers"] == [CPU_PROVIDER]


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cpu:1", "auto:0", ""])
def test_unknown_device_strings_are_refused(bad):
    with pytest.raises(DeviceError, match="cpu, cuda, cuda:N or auto"):
        parse_device(bad)


def test_cuda_unavailable_is_a_clear_error_not_a_cpu_run(no_cuda):
    with pytest.raises(DeviceError) as err:
        resolve_device("cuda")
    msg = str(err.value)
    assert "torch.cuda.is_available() is False" in msg
    assert f"has no {CUDA_PROVIDER}" in msg and "pip install onnxruntime-gpu" in msg
    assert "--device cpu" in msg
    # a run without the OCR engine needs only torch
    with pytest.raises(DeviceError) as err:
        resolve_device("cuda:0", need_onnxruntime=False)
    assert "onnxruntime" not in str(err.value) and "torch" in str(err.value)


def test_cuda_without_onnxruntime_gpu_is_an_error_even_with_torch_cuda(fake_cuda, monkeypatch):
    monkeypatch.setattr(onnxruntime, "get_available_providers", lambda: [CPU_PROVIDER])
    with pytest.raises(DeviceError, match="onnxruntime-gpu"):
        resolve_device("cuda")
    assert resolve_device("cuda", need_onnxruntime=False).torch_device == "cuda:0"


def test_auto_picks_cpu_here_and_says_why(no_cuda):
    spec = resolve_device("auto")
    assert spec.kind == "cpu" and spec.torch_device == "cpu" and spec.requested == "auto"
    assert spec.note.startswith("auto: cpu, because") and "torch.cuda.is_available() is False" in spec.note


def test_fake_cuda_resolves_to_cuda_with_the_cuda_provider_first(fake_cuda):
    for requested in ("cuda", "cuda:0", "auto"):
        spec = resolve_device(requested)
        assert spec.kind == "cuda" and spec.torch_device == "cuda:0" and spec.index == 0
        assert spec.onnx_providers == (CUDA_PROVIDER, CPU_PROVIDER)
    assert resolve_device("auto").note.startswith("auto: cuda:0")
    with pytest.raises(DeviceError, match="cuda:3 does not exist"):
        resolve_device("cuda:3")


def test_uses_onnxruntime():
    assert uses_onnxruntime(Config().parser)
    assert not uses_onnxruntime({"agents": ["text_spotter"], "text_spotter": {"backend": "tesseract"}})
    assert not uses_onnxruntime({"agents": ["shape_hunter"]})
    assert uses_onnxruntime({"agents": ["layout"], "layout": {"backend": "yolo_onnx"}})
    assert not uses_onnxruntime({"agents": ["layout"], "layout": {"backend": "none"}})


# ------------------------------------------------------------------ OCR engine
@pytest.fixture
def ocr_sessions(monkeypatch):
    """Record the providers rapidocr hands to onnxruntime; the sessions really run on the CPU
    but report the providers they were asked for (as a working GPU session would)."""
    from rapidocr.inference_engine.onnxruntime import main as ort_main
    from rapidocr.inference_engine.onnxruntime import provider_config

    monkeypatch.setattr(provider_config, "get_available_providers", lambda: [CUDA_PROVIDER, CPU_PROVIDER])
    monkeypatch.setattr(provider_config, "get_device", lambda: "GPU")
    calls: list[Any] = []

    class RecordingSession(onnxruntime.InferenceSession):
        def __init__(self, path: str, sess_options: Any = None, providers: Any = None, **kw: Any):
            calls.append(list(providers or []))
            super().__init__(path, sess_options=sess_options, providers=[CPU_PROVIDER])
            self._asked = [p[0] if isinstance(p, tuple) else p for p in providers or []]

        def get_providers(self) -> list[str]:
            return self._asked

    monkeypatch.setattr(ort_main, "InferenceSession", RecordingSession)
    return calls


def _ocr_only() -> Config:
    return load_config(overrides={"parser": {"agents": ["text_spotter"]}})


def test_ocr_sessions_get_the_cuda_provider_first(fake_cuda, ocr_sessions):
    config = _ocr_only()
    spec = resolve_device("cuda", need_onnxruntime=uses_onnxruntime(config.parser))
    parser = Parser(config, device=spec.torch_device)
    assert len(ocr_sessions) == 2  # det and rec, built eagerly on a GPU so a CPU fallback is caught now
    for providers in ocr_sessions:
        assert providers[0][0] == CUDA_PROVIDER and providers[0][1]["device_id"] == 0
        assert [p[0] for p in providers][-1] == CPU_PROVIDER
    assert parser.agents["text_spotter"].backend.device == "cuda:0"


def test_ocr_on_cpu_asks_for_the_cpu_provider_only(ocr_sessions):
    parser = Parser(_ocr_only(), device="cpu")
    parser.agents["text_spotter"].backend.engine._load_det_model()
    assert [[p[0] for p in providers] for providers in ocr_sessions] == [[CPU_PROVIDER]]


@pytest.mark.filterwarnings("ignore:Specified provider 'CUDAExecutionProvider'")
def test_ocr_session_that_falls_back_to_cpu_is_an_error(fake_cuda, monkeypatch):
    from rapidocr.inference_engine.onnxruntime import provider_config

    monkeypatch.setattr(provider_config, "get_available_providers", lambda: [CUDA_PROVIDER, CPU_PROVIDER])
    monkeypatch.setattr(provider_config, "get_device", lambda: "GPU")
    # the real onnxruntime here has no CUDA provider: the session silently lands on the CPU
    with pytest.raises(DeviceError, match="runs it on CPUExecutionProvider"):
        Parser(_ocr_only(), device="cuda:0")


# ------------------------------------------------------------------ parser agents
def test_every_agent_backend_gets_the_device_and_the_fingerprint_ignores_it():
    overrides = {"parser": {"agents": ["shape_hunter", "layout"]}}
    config = load_config(overrides=overrides)
    plain = Parser(config)
    on_gpu = Parser(config, device="cuda:0")
    # SAM reads [parser.shape_hunter.sam] device, YOLO [parser.layout.ultralytics] device: the
    # selected backend's table is where it lands (here the default opencv / none backends)
    assert on_gpu.agents["shape_hunter"].backend.params["device"] == "cuda:0"
    assert on_gpu.agents["layout"].backend.params["device"] == "cuda:0"
    assert "device" not in plain.agents["layout"].backend.params
    assert on_gpu.fingerprint() == plain.fingerprint()
    yolo = load_config(overrides={"parser": {"agents": ["layout"], "layout": {"backend": "ultralytics"}}})
    with pytest.raises(RuntimeError, match="weights"):  # built with the device, fails on its missing weights
        Parser(yolo, device="cuda:0")


# ------------------------------------------------------------------ torch models
def test_worker_hands_the_torch_device_to_the_embedder_and_image_models(fake_cuda, monkeypatch):
    seen: dict[str, Any] = {}

    def fake_embedder(device: str) -> Any:
        seen["embedder"] = device
        return embedding.NoEmbedder()

    monkeypatch.setitem(embedding._REGISTRY, "fake-for-device-test", fake_embedder)

    def fake_backend(role: str) -> Any:
        def factory(config: ImageConfig) -> Any:
            seen[role] = config.device
            raise image_models.ImageModelUnavailable("fake")
        return factory

    monkeypatch.setitem(image_models._SEMANTIC, "clip", fake_backend("clip"))
    monkeypatch.setitem(image_models._PERCEPTUAL, "lpips", fake_backend("lpips"))
    monkeypatch.setitem(image_models._SEMANTIC, "ocr-text-embedding", fake_backend("text"))
    config = load_config(overrides={"matching": {"embedder": "fake-for-device-test"}})
    worker = Worker(WorkerSpec(dict(config.data), device="cuda"))  # graph-only run: torch is enough
    try:
        assert worker.device.torch_device == "cuda:0" and worker.device_info()["kind"] == "cuda"
        assert seen == {"embedder": "cuda:0"}
        worker.scorer.image_models()
        assert seen == {"embedder": "cuda:0", "clip": "cuda:0", "lpips": "cuda:0", "text": "cuda:0"}
    finally:
        image_models._image_models.cache_clear()


def test_get_image_models_without_a_device_keeps_the_config_device():
    cfg = ImageConfig(semantic_backend="ocr-text-embedding", perceptual_backend="ssim")
    assert image_models.get_image_models(cfg) is image_models.get_image_models(cfg, "cpu")


# ------------------------------------------------------------------ runs, manifest, hash
@pytest.fixture
def dirs(tmp_path):
    refs, preds = tmp_path / "refs", tmp_path / "preds"
    refs.mkdir()
    preds.mkdir()
    g = json.dumps({"id": "x", "nodes": [{"id": "A", "label": "A"}, {"id": "B", "label": "B"}],
                    "edges": [{"source": "A", "target": "B"}]})
    for name in ("one", "two"):
        (refs / f"{name}.json").write_text(g)
        (preds / f"{name}.json").write_text(g)
    return preds, refs


def test_manifest_records_the_device_and_the_config_hash_ignores_it(dirs, tmp_path, no_cuda):
    preds, refs = dirs
    cpu = run_scoring(preds, refs, tmp_path / "cpu", STRING_ONLY)
    auto = run_scoring(preds, refs, tmp_path / "auto", STRING_ONLY, device="auto")
    assert cpu.manifest["device"]["torch_device"] == "cpu" and cpu.manifest["device"]["requested"] == "cpu"
    written = json.loads((tmp_path / "auto" / "manifest.json").read_text())
    assert written["device"]["requested"] == "auto" and written["device"]["kind"] == "cpu"
    assert written["device"]["note"].startswith("auto: cpu")
    assert cpu.manifest["config_hash"] == auto.manifest["config_hash"] == STRING_ONLY.hash
    assert {r["config_hash"] for r in cpu.rows + auto.rows} == {STRING_ONLY.hash}
    assert [r["scores"] for r in cpu.rows] == [r["scores"] for r in auto.rows]
    # a rerun on another device reuses every row: the device is not part of what a row depends on
    again = run_scoring(preds, refs, tmp_path / "cpu", STRING_ONLY, device="auto")
    assert again.n_reused == 2


def test_cli_device_cuda_without_a_gpu_fails_clearly(dirs, tmp_path, no_cuda, capsys):
    preds, refs = dirs
    cfg = tmp_path / "c.toml"
    cfg.write_text('[matching]\nembedder = "none"\n')
    rc = main(["score", str(preds), "--refs", str(refs), "--config", str(cfg), "--device", "cuda"])
    assert rc == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "CUDA cannot be used here" in err and "torch.cuda.is_available() is False" in err
    rc = main(["score", str(preds), "--refs", str(refs), "--config", str(cfg), "--out", str(tmp_path / "o"),
               "--device", "auto"])
    assert rc == 0
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["device"]["kind"] == "cpu"


def test_parse_refuses_cuda_without_a_gpu_before_parsing(tmp_path, no_cuda):
    from sciflow.runs.parse_batch import parse_many

    with pytest.raises(DeviceError, match="onnxruntime-gpu"):
        parse_many([Path("whatever.png")], Config(), device="cuda")


def test_ray_actor_gpus_follow_the_device():
    assert ray_gpus("cpu", 4) == (0, "cpu")
    assert ray_gpus("auto", 2) == (1, "auto")
    assert ray_gpus("auto", 0) == (0, "auto")
    assert ray_gpus("cuda", 1) == (1, "cuda")
    assert ray_gpus("cuda:1", 2) == (1, "cuda")  # Ray hands each actor its own GPU
    with pytest.raises(ExecutorError, match="no GPU"):
        ray_gpus("cuda", 0)
