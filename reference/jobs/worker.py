"""A worker: claim (with admission), run the handler, report; until told or allowed to stop.

Handlers come from an importable module: its ``HANDLERS`` mapping of name to callable, or else
every public function defined in it, by name. A handler gets the job's payload (a workflow's
``then`` step gets the run's state, a ``for_each`` step one item) and returns a JSON value.

The worker measures what admission needs before each claim (its resident memory, the system's
available memory when asked to, the time left of a run with a time budget) and what the store
keeps per handler after each run (duration, peak memory). A job whose handler this module lacks
is failed like any handler error (its attempts go to workers that have it, then it fails with
that reason): never claimed and silently left.

An idle worker waits for work. On a store that announces inserts (``PgStore.listen``: LISTEN/
NOTIFY) it starts listening *before* its first claim and then waits on its session with the
poll interval as the timeout: an enqueue that commits after a claim found nothing wakes it at
once, and the poll still finds jobs nobody announces (a delay or a retry-after passing, an
expired lease). The other order, listening only once a claim came back empty, loses the enqueue
that commits in between (``spec/job_wakeup.py``, mutant ``claim-then-listen``). On SQLite and
in memory the worker polls.
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from reference.jobs import procmem, sysmem
from reference.jobs.admission import Conditions
from reference.jobs.model import describe_error
from reference.jobs.store import Claim, JobStore, StaleLease

Handler = Callable[[Any], Any]
Progress = Callable[[dict[str, Any]], None]


class GiveBack(BaseException):
    """Raised into a running handler when its worker must stop now (``Worker.stop(now=True)``):
    the job goes back to the queue unrun, its attempt not spent. A BaseException, so a handler's
    ``except Exception`` does not swallow it."""


class Wakeups(Protocol):
    """A listening session: ``wait(timeout)`` is True when woken by an announced job."""

    def wait(self, timeout: float) -> bool: ...

    def close(self) -> None: ...


class Announcing(Protocol):
    def listen(self) -> Wakeups: ...


def load_handlers(module_name: str) -> dict[str, Handler]:
    """The handlers of ``module_name``; ``ValueError`` naming the module if there are none."""
    try:
        module = importlib.import_module(module_name)
    except ImportError as problem:
        raise ValueError(f"cannot import handlers module {module_name!r}: {problem}") from None
    declared = getattr(module, "HANDLERS", None)
    if declared is not None:
        if not isinstance(declared, Mapping) or not all(
            isinstance(k, str) and callable(v) for k, v in declared.items()
        ):
            raise ValueError(f"{module_name}.HANDLERS must map handler names to callables")
        handlers = dict(declared)
    else:
        handlers = {
            name: fn
            for name, fn in vars(module).items()
            if inspect.isfunction(fn) and fn.__module__ == module.__name__ and not name.startswith("_")
        }
    if not handlers:
        raise ValueError(f"{module_name} defines no handlers (no HANDLERS mapping, no public functions)")
    return handlers


@dataclass(frozen=True)
class WorkerOptions:
    name: str = "worker"
    queues: Sequence[str] | None = None
    once: bool = False
    """Stop when nothing is claimable now (deferred jobs are left for a later run)."""
    until_done: bool = False
    """Stop when the store holds no pending or processing job (in ``queues``, when given)."""
    time_budget: float | None = None
    max_jobs: int | None = None
    lease: float = 300.0
    poll: float = 0.2
    admission: bool = True
    system_memory: bool = True
    memory_limit: int | None = None
    memory_margin: int = 64 << 20
    retry_after: float = 1.0


@dataclass
class WorkerReport:
    done: int = 0
    """Jobs this worker ran and finished."""
    failed: int = 0
    """Runs that failed on the job's last attempt: the job failed."""
    retried: int = 0
    """Runs that failed and were put back for a later attempt."""
    lease_lost: int = 0
    """Runs (or give-backs) whose lease had expired by then: the job had moved on, nothing recorded."""
    denied: dict[str, int] = field(default_factory=dict)
    """Admission denials by reason (the job given back, no attempt spent)."""
    refused: int = 0
    """Jobs its claims failed because they can never run (their cost alone exceeds a budget that
    shrank after they were queued)."""
    expired: int = 0
    """Expired leases its claims reaped (a run that died or stalled): the job pending again, or
    failed when that was its last attempt."""
    released: int = 0
    """Jobs given back unrun because the worker had to stop (their attempts not spent)."""
    stopped: str = ""
    """Why the run ended: ``idle`` (``--once``), ``done`` (``until_done``), ``time_budget``, ``max_jobs``,
    ``interrupted``."""

    def as_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Worker:
    def __init__(
        self,
        store: JobStore,
        handlers: Mapping[str, Handler],
        options: WorkerOptions,
        *,
        progress: Progress | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.handlers = dict(handlers)
        self.options = options
        self.report = WorkerReport()
        self._progress = progress
        self._clock = clock
        self._sleep = sleep
        self._deadline: float | None = None
        self.stop_requested = False
        self._abandonable = False
        """True only while a handler runs: the one place ``stop(now=True)`` may raise ``GiveBack``."""
        self.wakeups: Wakeups | None = None
        """The listening session while ``run`` runs (None: the store announces nothing, poll)."""

    def stop(self, *, now: bool = False) -> None:
        """Ask the worker to stop; safe from a signal handler in the worker's thread.

        The first request lets the job in hand finish. ``now`` (or a second request) gives it back
        instead: ``GiveBack`` is raised into the running handler, and the job is released, pending
        again at once with its attempt not spent. Outside a handler there is nothing to interrupt:
        a job claimed after the request is released before it starts."""
        again = self.stop_requested
        self.stop_requested = True
        if (now or again) and self._abandonable:
            self._abandonable = False  # one GiveBack per run
            raise GiveBack("the worker must stop now")

    def _tell(self, event: str, **fields: Any) -> None:
        if self._progress is not None:
            self._progress({"event": event, "worker": self.options.name, **fields})

    def conditions(self) -> Conditions:
        options = self.options
        reading = sysmem.snapshot() if options.system_memory and options.admission else None
        left = None if self._deadline is None else max(self._deadline - self._clock(), 0.0)
        return Conditions(
            enabled=options.admission,
            system_available=None if reading is None else reading.available,
            system_source=None if reading is None else reading.source,
            worker_rss=procmem.rss() if options.memory_limit is not None else None,
            worker_limit=options.memory_limit,
            memory_margin=options.memory_margin,
            time_left=left,
            lease=options.lease,
            retry_after=options.retry_after,
        )

    def _should_stop(self) -> str | None:
        if self.stop_requested:
            return "interrupted"
        started = self.report.done + self.report.failed + self.report.retried + self.report.lease_lost
        if self.options.max_jobs is not None and started >= self.options.max_jobs:
            return "max_jobs"
        if self._deadline is not None and self._clock() >= self._deadline:
            return "time_budget"
        return None

    def listen(self) -> Wakeups | None:
        """Start listening for announced jobs, if the store announces them (before any claim)."""
        if self.options.once or not callable(getattr(self.store, "listen", None)):
            return None  # a one-shot run stops when idle: nothing to wait for
        store: Announcing = self.store  # type: ignore[assignment]
        return store.listen()

    def idle(self) -> None:
        """Nothing to claim: wait for an announced job, or the poll interval."""
        if self.wakeups is None:
            self._sleep(self.options.poll)
        else:
            self.wakeups.wait(self.options.poll)

    def run(self) -> WorkerReport:
        if self.options.time_budget is not None:
            self._deadline = self._clock() + self.options.time_budget
        self.wakeups = self.listen()
        try:
            return self._loop()
        finally:
            if self.wakeups is not None:
                self.wakeups.close()

    def _loop(self) -> WorkerReport:
        while True:
            reason = self._should_stop()
            if reason is not None:
                break
            outcome = self.store.claim(self.options.name, self.conditions(), self.options.queues)
            self.report.expired += len(outcome.expired)
            self.report.refused += len(outcome.failed)
            for job_id, decision in outcome.denied:
                self.report.denied[decision.label] = self.report.denied.get(decision.label, 0) + 1
                self._tell("deny", job=job_id, reason=decision.label, detail=decision.detail)
            for job_id, why in outcome.failed:
                self._tell("fail", job=job_id, reason=why)
            if outcome.claim is not None:
                if self.stop_requested:  # told to stop while claiming: not started, so give it back
                    self._release(outcome.claim, "the worker was stopping when it claimed the job")
                    reason = "interrupted"
                    break
                self.execute(outcome.claim)
                continue
            if self.options.once and self.store.claimable(self.options.queues) == 0:
                reason = "idle"
                break
            # Only this worker's queues: another queue's jobs are never ours to wait for.
            if self.options.until_done and self.store.unfinished(self.options.queues) == 0:
                reason = "done"
                break
            self.idle()
        self.report.stopped = reason
        self._tell("stop", reason=reason, report=self.report.as_json())
        return self.report

    def _release(self, claim: Claim, why: str) -> None:
        try:
            self.store.release(claim.job.id, claim.token, why)
        except StaleLease:
            self.report.lease_lost += 1
            self._tell("lease_lost", job=claim.job.id)
            return
        self.report.released += 1
        self._tell("release", job=claim.job.id, reason=why)

    def execute(self, claim: Claim) -> None:
        job = claim.job
        self._tell("start", job=job.id, queue=job.queue, handler=job.handler, attempt=job.attempts)
        handler = self.handlers.get(job.handler)
        exact = procmem.reset_peak()
        before = procmem.rss() or 0
        began = time.monotonic()
        error: str | None = None
        result: Any = None
        if handler is None:
            error = f"no handler named {job.handler!r} in this worker's handlers module"
        else:
            try:
                self._abandonable = True
                try:
                    result = handler(job.payload)
                finally:
                    self._abandonable = False
            except GiveBack:  # also when it lands as the handler returns: the run is given up whole
                self._release(claim, "the worker was told to stop now")
                return
            except KeyboardInterrupt:  # someone wants the worker gone: the run is not the job's fault
                self.stop_requested = True
                self._release(claim, "KeyboardInterrupt while the handler ran: the worker stops")
                return
            except BaseException as problem:  # a handler's sys.exit() fails its job, not the worker
                error = describe_error(problem)
        duration = time.monotonic() - began
        high = procmem.peak() if exact else procmem.lifetime_peak()
        peak = max(high - before, 0)
        try:
            if error is None:
                try:
                    self.store.finish(job.id, claim.token, result, duration, peak)
                except ValueError as problem:  # a result JSON cannot hold: the job fails, with that reason
                    error = f"result is not JSON: {problem}"
            if error is None:
                self.report.done += 1
                self._tell("finish", job=job.id, seconds=round(duration, 6))
                return
            after = self.store.fail(job.id, claim.token, error, duration, peak)
        except StaleLease:  # the run outlived its lease: its result is lost, its duration is not
            self.store.record_run(job.handler, duration, peak)
            self.report.lease_lost += 1
            self._tell("lease_lost", job=job.id, seconds=round(duration, 6))
            return
        if after.state.value == "failed":
            self.report.failed += 1
            self._tell("fail", job=job.id, reason=after.reason)
        else:
            self.report.retried += 1
            self._tell("retry", job=job.id, reason=error, retry_at=after.available_at)
