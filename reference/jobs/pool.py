"""The adaptive worker pool: a controller that runs worker processes against one job store.

Every ``interval`` seconds it reconciles: reap the workers that exited, observe (the store's
claimable backlog, the system's available memory, the workers' recent peak, which workers are
busy), ask ``pool_policy.decide`` what to do, and do it — start worker processes
(``pool_child``), tell idle ones to stop (SIGTERM: a worker finishes the job in hand and exits;
at the shutdown timeout SIGUSR1: it gives the job back, ``release``, and exits),
write the status file. ``request_stop`` (the CLI wires SIGTERM and SIGINT to it) makes the next
reconciles stop every worker; ``run`` returns once none is alive.

A worker whose controller is killed stops by itself after its job (``pool_child``), so a killed
controller loses nothing: a job in hand is finished, a worker killed outright leaves its job to
lease expiry, and a restarted pool picks up the rest.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any

from reference.jobs import location, pool_status, sysmem
from reference.jobs.model import describe_error
from reference.jobs.pool_policy import Actions, Observation, PoolPolicy, PoolState, decide
from reference.jobs.store import JobStore
from reference.jobs.worker import WorkerOptions

Progress = Callable[[dict[str, Any]], None]
PEAK_WINDOW = 32
"""Reconciles over which the workers' peak is remembered: the recent peak, not the lifetime one."""
IDLE_EVENTS = frozenset({"finish", "fail", "retry", "lease_lost", "release", "ready"})
GIVE_BACK_GRACE = 5.0
"""Seconds after the shutdown timeout's SIGUSR1 (give the job back now) before a worker is killed."""


def _available() -> int | None:
    reading = sysmem.snapshot()
    return None if reading is None else reading.available


def process_peak(pid: int) -> int | None:
    """A process's resident high-water mark (``VmHWM``), or None where ``/proc`` cannot say."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("VmHWM:"):
                    parts = line.split()
                    return int(parts[1]) * 1024 if len(parts) >= 2 and parts[1].isdigit() else None
    except (OSError, UnicodeError):
        return None
    return None


@dataclass(frozen=True)
class PoolOptions:
    store: str
    """The store URL every worker opens (``sqlite:///...`` or ``postgresql://...``)."""
    handlers: str
    policy: PoolPolicy
    worker: WorkerOptions = field(default_factory=WorkerOptions)
    """Options of every worker; its ``name`` is the prefix of theirs (NAME-1, NAME-2, ...)."""
    interval: float = 1.0
    status_file: Path | None = None
    shutdown_timeout: float | None = None
    """Seconds to let workers finish at shutdown; then each still running is told to give its job
    back (SIGUSR1: ``release``, pending at once, no attempt spent) and is killed only if it has
    not exited ``GIVE_BACK_GRACE`` seconds later (its job then comes back when its lease expires).
    None waits for every job in hand."""
    python: str = sys.executable


@dataclass
class Child:
    name: str
    popen: subprocess.Popen[str]
    started_at: float
    draining: bool = False
    busy: bool = False
    peak: int | None = None


@dataclass
class PoolReport:
    started: int = 0
    stopped: int = 0
    lost: int = 0
    """Workers that exited without being told to (killed, or failed to start)."""
    told_to_give_back: int = 0
    """Workers told at the shutdown timeout to give their job back now."""
    released: int = 0
    """Jobs the workers gave back unrun (their attempts not spent)."""
    killed: int = 0
    """Workers killed after the shutdown timeout and its grace."""
    stopped_because: str = ""

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PoolController:
    options: PoolOptions
    store: JobStore | None = None
    """The controller's own connection, for the backlog; opened from ``options.store`` on the first
    reconcile when not given (a SQLite connection belongs to the thread that opened it)."""
    progress: Progress | None = None
    memory: Callable[[], int | None] = _available
    clock: Callable[[], float] = time.monotonic
    children: list[Child] = field(default_factory=list)
    report: PoolReport = field(default_factory=PoolReport)
    state: PoolState = field(default_factory=PoolState)
    stopping: bool = False
    _serial: int = 0
    _opened: JobStore | None = None
    _peaks: deque[int] = field(default_factory=lambda: deque(maxlen=PEAK_WINDOW))
    _wake: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _tell(self, event: str, **fields: Any) -> None:
        if self.progress is not None:
            self.progress({"event": event, "pool": self.options.worker.name, **fields})

    def request_stop(self) -> None:
        """Stop every worker (each finishes its job) and end ``run``; safe from a signal handler."""
        self.stopping = True
        self._wake.set()

    # -- the workers ---------------------------------------------------------------------------

    def _start(self) -> None:
        self._serial += 1
        name = f"{self.options.worker.name}-{self._serial}"
        worker = {**asdict(self.options.worker), "name": name}
        if worker["queues"] is not None:
            worker["queues"] = list(worker["queues"])
        spec: dict[str, Any] = {
            "store": self.options.store,
            "handlers": self.options.handlers,
            "worker": worker,
            "parent": os.getpid(),  # the worker stops by itself once this is no longer its parent
        }
        popen = subprocess.Popen(
            [self.options.python, "-m", "reference.jobs.pool_child", json.dumps(spec)],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            # A handler's own output shares the pipe and may be any bytes: undecodable ones must not
            # end the listener, or the worker blocks on a full pipe (review 15, F03).
            encoding="utf-8",
            errors="replace",
            start_new_session=True,  # a terminal's Ctrl-C goes to the controller, which stops them in order
        )
        child = Child(name, popen, self.clock())
        assert popen.stdout is not None
        threading.Thread(target=self._listen, args=(child, popen.stdout), daemon=True).start()
        self.children.append(child)
        self.report.started += 1
        self._tell("start_worker", worker=name, pid=popen.pid)

    def _listen(self, child: Child, stream: IO[str]) -> None:
        # Reads until the worker closes its end, whatever a line holds: while nobody reads, a
        # worker writing to the pipe blocks for good.
        for line in stream:
            try:
                self._heard(child, line)
            except Exception as problem:  # the line is lost, never the listener
                with contextlib.suppress(Exception):
                    self._tell("listener_error", worker=child.name, error=describe_error(problem))

    def _heard(self, child: Child, line: str) -> None:
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            return  # a handler printing to stdout: not ours to parse
        if isinstance(event, dict):
            kind = event.get("event")
            with self._lock:
                if kind == "release":
                    self.report.released += 1
                if kind == "start":
                    child.busy = True
                elif kind in IDLE_EVENTS:
                    child.busy = False
            self._tell("worker", **{k: v for k, v in event.items() if k != "event"}, what=kind)

    def _stop(self, count: int) -> None:
        active = [c for c in self.children if not c.draining]
        # The idle first, then the youngest: the busy ones would only finish their job first.
        active.sort(key=lambda c: (c.busy, -c.started_at))
        for child in active[:count]:
            child.draining = True
            with contextlib.suppress(ProcessLookupError):  # already gone: reaped at the next reconcile
                child.popen.send_signal(signal.SIGTERM)
            self._tell("stop_worker", worker=child.name, pid=child.popen.pid)

    def _reap(self) -> None:
        for child in list(self.children):
            code = child.popen.poll()
            if code is None:
                continue
            self.children.remove(child)
            if child.draining:
                self.report.stopped += 1
            else:
                self.report.lost += 1
            self._tell("exit_worker", worker=child.name, pid=child.popen.pid, code=code, told=child.draining)

    # -- the loop ------------------------------------------------------------------------------

    def observe(self) -> tuple[Observation, str | None]:
        error = None
        try:
            if self.store is None:
                self.store = self._opened = location.open_store(self.options.store)
            backlog = 0 if self.stopping else self.store.claimable(self.options.worker.queues)
        except Exception as problem:  # the store is down: hold the pool as it is, say so
            backlog, error = 0, f"backlog unknown: {type(problem).__name__}: {problem}"
        peaks = []
        with self._lock:
            for child in self.children:
                child.peak = process_peak(child.popen.pid) or child.peak
                if child.peak is not None:
                    peaks.append(child.peak)
            active = [c for c in self.children if not c.draining]
            busy = sum(1 for c in active if c.busy)
        if peaks:
            self._peaks.append(max(peaks))
        seen = Observation(
            now=self.clock(),
            active=len(active),
            busy=busy,
            draining=len(self.children) - len(active),
            backlog=backlog,
            available=self.memory(),
            peak=max(self._peaks) if self._peaks else None,
            stopping=self.stopping,
        )
        return seen, error

    def reconcile(self) -> Actions:
        """One reconcile: reap, observe, decide, act, write the status."""
        self._reap()
        seen, error = self.observe()
        actions = decide(self.options.policy, self.state, seen)
        if error is not None and not self.stopping:  # no backlog reading: neither grow nor shrink on it
            actions = Actions(
                min(actions.start, max(self.options.policy.min_workers - seen.active, 0)),
                0,
                self.state,
                "store_error",
                actions.held_back,
            )
        self.state = actions.state
        for _ in range(actions.start):
            self._start()
        if actions.stop:
            self._stop(actions.stop)
        if actions.start or actions.stop or actions.held_back or error:
            self._tell(
                "reconcile",
                start=actions.start,
                stop=actions.stop,
                reason=actions.reason,
                held_back=actions.held_back,
                backlog=seen.backlog,
                error=error,
            )
        self._write_status(seen, actions, error)
        return actions

    def _write_status(self, seen: Observation, actions: Actions, error: str | None) -> None:
        if self.options.status_file is None:
            return
        phase = (
            "stopped" if self.stopping and not self.children else "stopping" if self.stopping else "running"
        )
        doc = {
            "controller": os.getpid(),
            "host": socket.gethostname(),
            "name": self.options.worker.name,
            "phase": phase,
            "store": self.options.store,
            "min_workers": self.options.policy.min_workers,
            "max_workers": self.options.policy.max_workers,
            "interval": self.options.interval,
            "updated_at": time.time(),
            "backlog": seen.backlog,
            "available": seen.available,
            "peak": seen.peak,
            "last": {
                "start": actions.start,
                "stop": actions.stop,
                "reason": actions.reason,
                "held_back": actions.held_back,
            },
            "error": error,
            "workers": [
                {
                    "name": c.name,
                    "pid": c.popen.pid,
                    "state": "draining" if c.draining else "active",
                    "busy": c.busy,
                    "peak": c.peak,
                }
                for c in self.children
            ],
            "report": self.report.as_json(),
        }
        try:
            pool_status.write(self.options.status_file, doc)
        except OSError as problem:
            self._tell("status_error", error=f"cannot write {self.options.status_file}: {problem}")

    def run(self) -> PoolReport:
        """Reconcile until stopped and every worker has exited."""
        deadline: float | None = None
        gave_back = False
        try:
            while True:
                self.reconcile()
                if self.stopping:
                    if not self.children:
                        break
                    if deadline is None and self.options.shutdown_timeout is not None:
                        deadline = self.clock() + self.options.shutdown_timeout
                    if deadline is not None and self.clock() >= deadline:
                        if not gave_back:
                            self._give_back_all()
                            gave_back = True
                            deadline = self.clock() + GIVE_BACK_GRACE
                        else:
                            self._kill_all()
                self._wake.wait(
                    self.options.interval if not self.stopping else min(self.options.interval, 0.1)
                )
                self._wake.clear()
        except BaseException:
            self.request_stop()  # a crash of the controller still tells its workers to stop
            self._stop(len(self.children))
            raise
        self.report.stopped_because = "stopped"
        self._write_status(self.observe()[0], Actions(0, 0, self.state, "shutdown"), None)
        self._tell("stop", report=self.report.as_json())
        close = getattr(self._opened, "close", None)
        if close is not None:
            close()
        return self.report

    def _give_back_all(self) -> None:
        for child in self.children:
            with contextlib.suppress(ProcessLookupError):
                child.popen.send_signal(signal.SIGUSR1)
            self.report.told_to_give_back += 1
            self._tell("give_back_worker", worker=child.name, pid=child.popen.pid)

    def _kill_all(self) -> None:
        for child in self.children:
            with contextlib.suppress(ProcessLookupError):
                child.popen.kill()
            self.report.killed += 1
            self._tell("kill_worker", worker=child.name, pid=child.popen.pid)
        for child in self.children:
            child.popen.wait()
        self._reap()
