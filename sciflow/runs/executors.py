"""Executors: where per-item work runs. The same items give the same rows under any of them.

- ``local`` (default): ``jobs == 1`` runs in this process; ``jobs > 1`` a
  :class:`~sciflow.runs.pool.WorkerPool` of supervised processes, each building one
  :class:`~sciflow.runs.worker.Worker` (models load once per worker) and running
  ``WorkerSpec.threads`` math threads (default ``cores // jobs``), one item at a time.
  A worker that dies (``kill -9``, the OOM killer) fails only the item it was running: that item
  is retried once (a new worker replaces the dead one), and if the worker running the retry dies
  too it gets a ``prediction_error`` row whose ``error`` names its prediction file and how the
  process ended (``worker crashed while scoring <file>: the worker process was killed by SIGKILL
  ...; tried 2 times``). The other workers keep their models and the run finishes. Workers exit when this
  process dies, however it dies (:mod:`sciflow.runs.pool`).
- ``ray`` (``pip install 'sciflow-eval[ray]'``): one Ray actor per worker, each holding its own
  Worker and reserving ``WorkerSpec.threads`` CPUs (default 1); GPU actors (``num_gpus=1``)
  when the device is ``cuda`` (an error when the cluster has no GPU) or ``auto`` on a cluster
  with GPUs, CPU actors for ``cpu``;
  at most ``2 * workers`` items in flight (``ray.wait`` backpressure). A dead actor is restarted by
  Ray and its item retried once (``max_restarts``, ``max_task_retries``). ``address=None`` starts
  a local Ray runtime with ``jobs`` CPUs and no dashboard; ``address="auto"`` or
  ``"ray://head:10001"`` joins an existing cluster (see the README).

The device (``WorkerSpec.device``: cpu | cuda | cuda:N | auto) is resolved in each worker, where
the models run; :meth:`Executor.device_info` reports what a worker got (for the manifest).

Results come back in completion order as ``(item_id, row, parsed_graph_dict)``; the caller
(the single writer) appends them to the results log.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any, Protocol

from sciflow.config import Config
from sciflow.format.extras import extra_hint
from sciflow.models.device import parse_device, resolve_device, uses_onnxruntime
from sciflow.runs.items import Item
from sciflow.runs.pool import ExecutorError, Failure, WorkerPool
from sciflow.runs.worker import Worker, WorkerSpec, error_row

__all__ = ["EXECUTORS", "Executor", "ExecutorError", "LocalExecutor", "RayExecutor", "crash_message", "error_row",
           "make_executor", "ray_gpus"]

log = logging.getLogger(__name__)

Result = tuple[str, dict[str, Any], dict[str, Any] | None]


class Executor(Protocol):
    name: str
    threads: int  # math threads per worker (0: the libraries' defaults)

    def describe(self) -> dict[str, Any]: ...

    def device_info(self) -> dict[str, Any]: ...

    def run(self, items: Sequence[Item]) -> Iterator[Result]: ...

    def close(self) -> None: ...


# -------------------------------------------------------------------- local
_WORKER: Worker | None = None


def _init_worker(spec: WorkerSpec) -> None:
    """Build this process's Worker."""
    global _WORKER
    _WORKER = Worker(spec)


def _run_item(item: Item) -> Result:
    assert _WORKER is not None, "worker not initialised"
    try:
        row, parsed = _WORKER.run(item)
    except Exception as exc:  # Worker.run turns item failures into rows; this is a last resort
        log.warning("worker failed on %s: %s", item.id, exc)
        return item.id, error_row(item, f"worker failed on {_item_file(item)}: {type(exc).__name__}: {exc}"), None
    return item.id, row, parsed


def _describe() -> dict[str, Any]:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.describe()


def _device_info() -> dict[str, Any]:
    assert _WORKER is not None, "worker not initialised"
    return _WORKER.device_info()


def _item_file(item: Item) -> str:
    return str(item.prediction or item.reference or item.id)


def crash_message(item: Item, failure: Failure | str) -> str:
    """The ``error`` of the row of an item whose worker failed: it names the item's prediction
    file (its reference when it has none) and what happened."""
    if isinstance(failure, str):
        return f"worker crashed while scoring {_item_file(item)}: {failure}"
    verb = "crashed" if failure.crashed else "failed"
    return f"worker {verb} while scoring {_item_file(item)}: {failure.message}"


class LocalExecutor:
    name = "local"

    def __init__(self, spec: WorkerSpec, *, jobs: int = 1, address: str | None = None):
        self.jobs = max(1, jobs)
        self._pool: WorkerPool | None = None
        # fail fast, with the clear message, before any worker process starts
        resolve_device(spec.device, need_onnxruntime=spec.image_run and uses_onnxruntime(
            Config(spec.config_data).parser))
        if self.jobs == 1:
            #: math threads of the one worker (0: the libraries' defaults, all cores)
            self.threads = spec.threads
            _init_worker(spec)
        else:
            # spawn, not fork: a forked child inherits torch/onnxruntime thread pools of a parent that
            # already ran a model and can deadlock in its first forward pass. Workers start on first need.
            self.threads = spec.threads or max(1, (os.cpu_count() or 1) // self.jobs)
            self._pool = WorkerPool(self.jobs, _init_worker, (replace(spec, threads=self.threads),))

    @property
    def pool(self) -> WorkerPool | None:
        """The worker processes (None when ``jobs == 1``)."""
        return self._pool

    def describe(self) -> dict[str, Any]:
        return _describe() if self._pool is None else self._pool.call(_describe)

    def device_info(self) -> dict[str, Any]:
        return _device_info() if self._pool is None else self._pool.call(_device_info)

    def run(self, items: Sequence[Item]) -> Iterator[Result]:
        if self._pool is None:
            for item in items:
                yield _run_item(item)
            return
        by_id = {item.id: item for item in items}
        for item_id, result, failure in self._pool.map_unordered(_run_item, [(i.id, (i,)) for i in items]):
            if failure is None:
                yield result
            else:
                item = by_id[item_id]
                log.warning("%s: %s", item.id, failure.message)
                yield item.id, error_row(item, crash_message(item, failure)), None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()


# ---------------------------------------------------------------------- ray
class RayExecutor:
    name = "ray"

    def __init__(self, spec: WorkerSpec, *, jobs: int = 2, address: str | None = None):
        try:
            import ray
        except ImportError as exc:
            raise ExecutorError(f"the ray executor needs the 'ray' extra: {extra_hint('ray')}") from exc
        self.ray = ray
        self._started_here = False
        if not ray.is_initialized():
            try:
                if address is None:
                    ray.init(num_cpus=max(1, jobs), include_dashboard=False, log_to_driver=False,
                             configure_logging=False)
                else:
                    ray.init(address=address, log_to_driver=False, configure_logging=False)
            except Exception as exc:
                raise ExecutorError(f"cannot start or join Ray ({address or 'local'}): {exc}") from exc
            self._started_here = True
        gpus, device = ray_gpus(spec.device, float(ray.cluster_resources().get("GPU", 0)))
        # each actor reserves as many CPUs as it runs math threads (1 unless asked otherwise)
        self.threads = spec.threads or 1
        # a dead actor (OOM, kill -9) is restarted and its item retried once
        actor_cls = ray.remote(num_cpus=self.threads, num_gpus=gpus, max_restarts=-1, max_task_retries=1)(_RayWorker)
        self.actors = [actor_cls.remote(replace(spec, threads=self.threads, device=device))
                       for _ in range(max(1, jobs))]
        self.gpus_per_actor = gpus

    def describe(self) -> dict[str, Any]:
        d = self.ray.get(self.actors[0].describe.remote())
        d["executor"] = {"name": "ray", "actors": len(self.actors), "gpus_per_actor": self.gpus_per_actor}
        return d

    def device_info(self) -> dict[str, Any]:
        return self.ray.get(self.actors[0].device_info.remote())

    def run(self, items: Sequence[Item]) -> Iterator[Result]:
        ray = self.ray
        queue = list(items)
        pending: dict[Any, Item] = {}
        free = list(self.actors)
        busy: dict[Any, Any] = {}
        while queue or pending:
            while queue and free:
                actor = free.pop(0)
                item = queue.pop(0)
                ref = actor.run.remote(item)
                pending[ref] = item
                busy[ref] = actor
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                item = pending.pop(ref)
                free.append(busy.pop(ref))
                try:
                    yield ray.get(ref)
                except Exception as exc:  # an actor failure fails only its item
                    log.warning("ray worker failed on %s: %s", item.id, exc)
                    yield item.id, error_row(item, crash_message(item, f"{type(exc).__name__}: {exc}")), None

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        if self._started_here:
            self.ray.shutdown()


class _RayWorker:
    """Body of a Ray actor: one Worker, models loaded once."""

    def __init__(self, spec: WorkerSpec):
        self.worker = Worker(spec)

    def run(self, item: Item) -> Result:
        row, parsed = self.worker.run(item)
        return item.id, row, parsed

    def describe(self) -> dict[str, Any]:
        return self.worker.describe()

    def device_info(self) -> dict[str, Any]:
        return self.worker.device_info()


def ray_gpus(device: str, cluster_gpus: float) -> tuple[int, str]:
    """GPUs per Ray actor for ``device`` on a cluster with ``cluster_gpus`` GPUs, and the device
    string the actors resolve. ``cuda:N`` becomes ``cuda``: Ray gives each GPU actor its own GPU
    as ``cuda:0`` (``CUDA_VISIBLE_DEVICES``), so a fixed index means nothing there."""
    kind, index = parse_device(device)
    if kind == "cpu":
        return 0, device
    if kind == "auto":
        return (1 if cluster_gpus >= 1 else 0), device
    if cluster_gpus < 1:
        raise ExecutorError(f"--device {device}: the Ray cluster has no GPU (cluster resources list none); "
                            "start the GPU nodes with `ray start` or use --device cpu")
    if index:
        log.warning("--device %s under Ray: each actor gets its own GPU from Ray, index %d ignored", device, index)
    return 1, "cuda"


def make_executor(name: str, spec: WorkerSpec, *, jobs: int = 1, address: str | None = None) -> Executor:
    """Build the executor registered under ``name`` (:data:`EXECUTORS`)."""
    try:
        factory = EXECUTORS[name]
    except KeyError:
        raise ExecutorError(f"unknown executor {name!r}; known: {', '.join(EXECUTORS)}") from None
    return factory(spec, jobs=jobs, address=address)


EXECUTORS: dict[str, Any] = {"local": LocalExecutor, "ray": RayExecutor}
