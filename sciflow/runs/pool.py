"""Supervised worker processes: a dead worker fails only its own task, once retried.

:class:`WorkerPool` runs ``jobs`` spawned processes, each initialised once (models load once per
process) and fed one task at a time over its own pipe, so the parent always knows which task
each worker holds. When a worker dies (``kill -9``, the OOM killer, a crash in native code):

- only the task it was running is affected; it is put back at the head of the queue and
  retried once (``retries``) by the next free worker; when the worker running the retry dies
  too, the task fails with a :class:`Failure` (``crashed=True``) saying how the process ended;
- the other workers keep running with their models loaded; a new worker is started in place of
  the dead one while tasks remain.

Workers exit when their parent dies, however it dies: on Linux through
``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (set first thing in the worker, then the parent PID is checked
once, which closes the race with a parent that died during the worker's start), and everywhere
through a daemon thread that polls ``os.getppid()`` every :data:`PARENT_POLL_S` seconds and ends
the process when it changes; an idle worker also exits when its pipe reaches end of file.
(``PR_SET_PDEATHSIG`` fires when the *thread* that started the worker ends: start workers from a
thread that outlives the pool, as the command line does.) Workers ignore SIGINT: on Ctrl-C the
parent stops them (:meth:`WorkerPool.close`).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.connection import wait as wait_ready
from typing import Any

log = logging.getLogger(__name__)

#: seconds between two checks of the parent PID in a worker (the portable fallback)
PARENT_POLL_S = 0.25
_PR_SET_PDEATHSIG = 1


class ExecutorError(RuntimeError):
    """An executor that cannot start (Ray missing, a cluster that cannot be reached, a worker
    process that cannot load its models)."""


@dataclass(frozen=True)
class Failure:
    """Why a task gave no value: the exception it raised in the worker (``crashed=False``), or
    how its worker process ended, after ``attempts`` tries (``crashed=True``)."""

    message: str
    crashed: bool
    attempts: int = 1


# ------------------------------------------------------------------ worker side
def _die_with_parent(parent_pid: int, use_prctl: bool) -> str:
    """Make this process end when ``parent_pid`` does; returns the mechanisms in use."""
    how = []
    if use_prctl and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
                how.append("prctl")
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl
            pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_POLL_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="sciflow-parent-watch", daemon=True).start()
    how.append("poll")
    return "+".join(how)


def _resolve(name: str) -> Callable[..., Any]:
    module, _, qualname = name.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _serve(conn: Connection, parent_pid: int, use_prctl: bool, init: str | None, init_args: tuple[Any, ...]) -> None:
    """Body of a worker process: init once, then run the tasks sent over ``conn`` until ``None``
    or end of file. ``init`` is named (``module:function``), not pickled, so that its module (and
    the models it imports) loads only after the parent-death guard is set."""
    how = _die_with_parent(parent_pid, use_prctl)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if init is not None:
            _resolve(init)(*init_args)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises
        with contextlib.suppress(OSError):
            conn.send(("init_error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", {"pid": os.getpid(), "parent_death": how}))
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):  # the parent is gone
            return
        if msg is None:
            return
        fn, args = msg
        try:
            reply: tuple[str, Any] = ("ok", fn(*args))
        except Exception as exc:  # noqa: BLE001 - a failing task fails only itself
            reply = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(reply)
        except (EOFError, BrokenPipeError, ConnectionError):
            return
        except Exception as exc:  # noqa: BLE001 - a result that cannot be pickled
            conn.send(("error", f"result not sendable: {type(exc).__name__}: {exc}"))


# ------------------------------------------------------------------ parent side
def describe_exit(exitcode: int | None) -> str:
    """How a worker process ended, in words."""
    if exitcode is None:
        return "the worker process stopped answering"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (out of memory, or kill -9)" if exitcode == -signal.SIGKILL else ""
        return f"the worker process was killed by {name}{hint}"
    return f"the worker process exited with code {exitcode}"


@dataclass(eq=False)
class _Slot:
    process: Any
    conn: Connection
    ready: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    task: tuple[Hashable, tuple[Any, ...]] | None = None


class WorkerPool:
    """``jobs`` supervised worker processes (spawned, started on first need).

    ``init`` runs once in each worker with ``init_args`` (a module-level function).
    :meth:`map_unordered` runs tasks and yields ``(key, value, failure)`` in completion order;
    :meth:`call` runs one. :class:`ExecutorError` when a worker cannot start (its ``init``
    raised, or it died before it was ready)."""

    def __init__(self, jobs: int, init: Callable[..., Any] | None = None, init_args: tuple[Any, ...] = (), *,
                 retries: int = 1, die_with_parent: bool = True, context: str = "spawn"):
        self.jobs = max(1, jobs)
        self.retries = retries
        self._init = f"{init.__module__}:{init.__qualname__}" if init is not None else None
        self._init_args = init_args
        self._use_prctl = die_with_parent
        self._ctx = multiprocessing.get_context(context)
        self._slots: list[_Slot] = []
        self.retried = 0  #: tasks put back after their worker died

    # -------------------------------------------------------------- introspection
    def pids(self) -> list[int]:
        """PIDs of the worker processes now alive."""
        return [s.process.pid for s in list(self._slots) if s.process.is_alive()]

    def running(self) -> dict[int, Hashable]:
        """``{pid: key}`` of the tasks the workers are running now."""
        return {s.process.pid: s.task[0] for s in list(self._slots) if s.task is not None}

    # -------------------------------------------------------------- running
    def _start(self) -> _Slot:
        parent, child = self._ctx.Pipe()
        p = self._ctx.Process(target=_serve, args=(child, os.getpid(), self._use_prctl, self._init, self._init_args),
                              name="sciflow-worker", daemon=True)
        p.start()
        child.close()
        slot = _Slot(p, parent)
        self._slots.append(slot)
        return slot

    def _remove(self, slot: _Slot) -> int | None:
        """Forget a dead (or dying) worker; its exit code."""
        self._slots.remove(slot)
        slot.conn.close()
        slot.process.join(timeout=2)
        if slot.process.is_alive():
            slot.process.kill()
            slot.process.join(timeout=2)
        return slot.process.exitcode

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in one worker (retried once if the worker dies); :class:`ExecutorError`
        when it fails."""
        for _key, value, failure in self.map_unordered(fn, [(None, args)]):
            if failure is not None:
                raise ExecutorError(f"a worker failed: {failure.message}")
            return value
        raise AssertionError("unreachable")  # pragma: no cover

    def map_unordered(self, fn: Callable[..., Any], tasks: Iterable[tuple[Hashable, tuple[Any, ...]]]
                      ) -> Iterator[tuple[Hashable, Any, Failure | None]]:
        """Run ``fn(*args)`` for every ``(key, args)``; yield ``(key, value, None)`` or
        ``(key, None, Failure)`` as tasks finish. A task whose worker dies is retried once (by
        the next free worker) before it fails (``Failure.crashed``); the other tasks are not
        affected, and a new worker replaces the dead one while tasks remain."""
        queue = deque(tasks)
        tries: dict[Hashable, int] = {}
        mine: set[int] = set()  # ids of the slots holding one of these tasks
        try:
            yield from self._run(fn, queue, tries, mine)
        finally:
            # abandoned midway (an error in the caller): a worker still on one of these tasks
            # would answer the next call with a stale result; stop it
            for slot in [s for s in self._slots if id(s) in mine]:
                slot.process.kill()
                self._remove(slot)

    def _run(self, fn: Callable[..., Any], queue: deque[tuple[Hashable, tuple[Any, ...]]],
             tries: dict[Hashable, int], mine: set[int]) -> Iterator[tuple[Hashable, Any, Failure | None]]:
        while queue or mine:
            while queue and len(self._slots) < self.jobs and len(self._slots) < len(queue) + len(mine):
                self._start()
            for slot in self._slots:
                if queue and slot.ready and slot.task is None:
                    key, args = queue.popleft()
                    slot.task = (key, args)
                    tries[key] = tries.get(key, 0) + 1
                    mine.add(id(slot))
                    # a dead worker is found below, through its sentinel
                    with contextlib.suppress(BrokenPipeError, ConnectionError, EOFError):
                        slot.conn.send((fn, args))
            ready = set(wait_ready([s.conn for s in self._slots] + [s.process.sentinel for s in self._slots]))
            events: list[tuple[Hashable, Any, Failure | None]] = []
            for slot in list(self._slots):
                if slot.conn not in ready and slot.process.sentinel not in ready:
                    continue
                eof = False
                try:
                    while slot.conn.poll():
                        kind, payload = slot.conn.recv()
                        if kind == "ready":
                            slot.ready, slot.info = True, payload
                        elif kind == "init_error":
                            raise ExecutorError(f"a worker process could not start: {payload}")
                        elif slot.task is not None:
                            key = slot.task[0]
                            slot.task = None
                            mine.discard(id(slot))
                            events.append((key, payload, None) if kind == "ok"
                                          else (key, None, Failure(payload, crashed=False, attempts=tries[key])))
                except (EOFError, OSError):
                    eof = True
                if not eof and slot.process.sentinel not in ready:
                    continue
                # the worker is dead (or closing its end): its task, if any, is retried or fails
                was_ready, task = slot.ready, slot.task
                code = self._remove(slot)
                mine.discard(id(slot))
                how = describe_exit(code)
                if not was_ready:
                    raise ExecutorError(f"a worker process died while starting: {how}")
                if task is None:
                    log.warning("worker %d died while idle: %s", slot.process.pid, how)
                    continue
                key = task[0]
                if tries[key] <= self.retries:
                    log.warning("worker %d died while running %s: %s; retrying it once",
                                slot.process.pid, key, how)
                    queue.appendleft(task)
                    self.retried += 1
                else:
                    log.warning("worker %d died while running %s: %s; giving up after %d tries",
                                slot.process.pid, key, how, tries[key])
                    events.append((key, None, Failure(
                        f"{how}; tried {tries[key]} times", crashed=True, attempts=tries[key])))
            yield from events

    def close(self) -> None:
        """Stop every worker: idle ones are asked to exit, busy ones (a run interrupted) are
        terminated; none is left behind."""
        for slot in self._slots:
            if slot.task is None:
                with contextlib.suppress(OSError, ValueError):
                    slot.conn.send(None)
            else:
                slot.process.terminate()
        deadline = time.monotonic() + 3
        for slot in self._slots:
            slot.process.join(timeout=max(0.0, deadline - time.monotonic()))
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(timeout=2)
            slot.conn.close()
        self._slots.clear()
