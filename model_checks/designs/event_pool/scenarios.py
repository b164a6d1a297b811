"""Event-pool scenarios: the real ``reference.event_pool.EventPool`` (and its work API) under the harness.

A program builds a pool on the controlled runtime, posts works (or submits one
work object, waits for its callbacks, cancelling the pending ones, and closes it)
from ``main``, then stops the pool. What every explored execution must show:

* **exactly once** -- every accepted work ran exactly once, or was reported
  cancelled (``wait_for_callbacks``) or discarded (``stop(DISCARD)``), never
  both; a work that raised was reported to ``on_error`` and counts as run
  (final check, and ``RunsAtMostOnce`` after every step);
* **the index never skips or repeats** -- the works handed out (taken,
  cancelled, discarded) are 0, 1, 2, ... in order, each one posted
  (``WorkIndexExact``, after every step, from the trace);
* **one wake per signal** -- a thread's event wakes it at most once per
  ``SetEvent`` on it: no busy spin (``OneWakePerSignal``);
* **idle first** -- while a thread is idle, the works in the list never
  outnumber the non-idle threads that are coming for them (not in a callback,
  nothing in hand): no work waits behind a busy thread while one sleeps
  (``IdleFirst``, over the pool's state);
* **no lost wakeup, shutdown terminates** -- ``stop`` returns SUCCESS: a thread
  blocked for good while work is in the list is a deadlock, reported as
  ``lost_wakeup`` (``pending_work``), and a spin is a ``livelock``.

Exhaustive DPOR is feasible up to one thread and three works or two threads and
one work (``harness.py`` records the counts); larger ones are sampled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model_checks.harness.runtime import ControlledRuntime
from reference.event_pool import CALLING, EXITED, EventPool
from reference.event_pool_api import ThreadpoolWork, Waited
from reference.results import Result
from reference.scheduler import StopMode
from reference.tracing import RecordingTracer

Program = Callable[[ControlledRuntime], object]
Build = Callable[..., EventPool]


@dataclass(frozen=True)
class PoolScenario:
    """One program: ``threads`` pool threads, ``posts`` works, then the client's shutdown."""

    threads: int = 1
    posts: int = 2
    api: bool = False  # submit one ThreadpoolWork ``posts`` times, then wait_for_callbacks + close
    cancel: bool = False  # (api) wait_for_callbacks(cancel_pending=True)
    stop: StopMode = StopMode.DRAIN
    raising: tuple[int, ...] = ()  # the works (post order) that raise
    wait_timeout: float | None = None  # the pool threads' wait timeout (virtual under the harness)
    idle_first: bool = True  # check IdleFirst after every step (off: see a stranded work's consequence)


class TraceWatch:
    """Checks the trace-level invariants over the events emitted since its last look.

    It reads the tracer from the invariant hook (the scheduler's context), never
    from the emitting threads, so it adds no shared state of its own to the program.
    """

    def __init__(self, tracer: RecordingTracer) -> None:
        self.tracer = tracer
        self.seen = 0
        self.posted = 0
        self.handed: list[int] = []
        self.runs: dict[int, int] = {}
        self.cancelled: set[int] = set()
        self.signals: dict[str, int] = {}
        self.wakes: dict[str, int] = {}
        self.violation: str | None = None

    def check(self) -> bool:
        raw = self.tracer._raw
        while self.violation is None and self.seen < len(raw):
            thread, event, fields = raw[self.seen]
            self.seen += 1
            self.violation = self._step(thread, event, fields)
        if self.violation is not None:
            raise AssertionError(self.violation)
        return True

    def _step(self, thread: str, event: str, fields: dict[str, Any]) -> str | None:
        if event == "post" and fields["result"] == "ok":
            self.posted += 1
        elif event == "take" and fields["item"] is not None:
            return self._hand(thread, [fields["item"]])
        elif event in ("cancel", "discard"):
            self.cancelled.update(fields["items"])
            for i in fields["items"]:
                if self.runs.get(i):
                    return f"RunsAtMostOnce: work {i} was {event}led after it ran"
            return self._hand(thread, list(fields["items"]))
        elif event == "run":
            i = fields["item"]
            self.runs[i] = self.runs.get(i, 0) + 1
            if self.runs[i] > 1:
                return f"RunsAtMostOnce: work {i} ran {self.runs[i]} times"
            if i in self.cancelled:
                return f"RunsAtMostOnce: work {i} ran after it was cancelled or discarded"
        elif event == "signal":
            self.signals[fields["to"]] = self.signals.get(fields["to"], 0) + 1
        elif event == "wake" and fields["result"] == "event":
            self.wakes[thread] = self.wakes.get(thread, 0) + 1
            if self.wakes[thread] > self.signals.get(thread, 0):
                return (
                    f"OneWakePerSignal: {thread} woke from its event {self.wakes[thread]} times but it was"
                    f" set {self.signals.get(thread, 0)} times (a busy spin)"
                )
        return None

    def _hand(self, who: str, items: list[int]) -> str | None:
        for i in items:
            k = len(self.handed)
            self.handed.append(i)
            if i != k:
                how = f"repeated index {i}" if i < k else f"skipped index {k}"
                return f"WorkIndexExact: the works were handed out as {self.handed} ({who} {how})"
            if i >= self.posted:
                return f"WorkIndexExact: {who} took work {i} but only {self.posted} were posted"
        return None


def idle_first(pool: EventPool) -> bool:
    """IdleFirst over the pool's state: while a thread is idle, the list fits the threads coming for it."""
    threads = pool.threads
    if not any(t.idle for t in threads):
        return True
    coming = [
        t.name for t in threads if not t.idle and t.state not in (CALLING, EXITED) and t.in_hand is None
    ]
    listed = pool.listed()
    if listed > len(coming):
        idle = [t.name for t in threads if t.idle]
        raise AssertionError(
            f"IdleFirst: {listed} works in the list outnumber the threads coming for them {coming}"
            f" while {idle} sleep idle"
        )
    return True


@dataclass
class _Observed:
    ran: list[int] = field(default_factory=list)
    errors: list[int] = field(default_factory=list)
    discarded: list[int] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    waited: list[Waited] = field(default_factory=list)


def pool_program(sc: PoolScenario, *, build: Build = EventPool) -> Program:
    """The scenario as a harness program; ``build`` makes the pool (a mutant subclass, or ``EventPool``)."""

    def program(rt: ControlledRuntime) -> object:
        obs = _Observed()
        tracer = RecordingTracer()
        watch = TraceWatch(tracer)
        pool = build(
            sc.threads,
            runtime=rt,
            tracer=tracer,
            on_error=lambda work, exc: obs.errors.append(work.number),
            on_discard=lambda work: obs.discarded.append(work.number),
            wait_timeout=sc.wait_timeout,
        )
        rt.invariant(watch.check, "trace invariants")
        if sc.idle_first:
            rt.invariant(lambda: idle_first(pool), "IdleFirst")
        rt.pending_work(lambda: pool.listed() > 0)
        rt.trace(lambda: [_show(e) for e in tracer.events()])

        if sc.api:
            _api_client(sc, pool, obs)
        else:
            for k in range(sc.posts):
                obs.results.append(pool.post(_Work(k, obs, k in sc.raising)))
        stopped = pool.stop(sc.stop)

        def final() -> tuple[Any, ...]:
            return (*_final_checks(sc, pool, obs, stopped), busy_take(tracer))

        return final

    return program


class _Work:
    """A posted work that records its run (``number`` is its post order)."""

    def __init__(self, number: int, obs: _Observed, raises: bool) -> None:
        self.number = number
        self.obs = obs
        self.raises = raises

    def __call__(self) -> None:
        self.obs.ran.append(self.number)
        if self.raises:
            raise ValueError(f"work {self.number} fails on purpose")


def _api_client(sc: PoolScenario, pool: EventPool, obs: _Observed) -> None:
    def callback(context: Any, work: ThreadpoolWork) -> None:
        obs.ran.append(len(obs.ran))
        if len(obs.ran) - 1 in sc.raising:
            raise ValueError("callback fails on purpose")

    work = ThreadpoolWork(
        pool, callback, name="w", on_error=lambda w, exc: obs.errors.append(len(obs.errors))
    )
    for _ in range(sc.posts):
        obs.results.append(work.submit())
    obs.waited.append(work.wait_for_callbacks(cancel_pending=sc.cancel))
    assert work.pending == 0, f"wait_for_callbacks returned with {work.pending} submissions pending"
    assert work.close() is Result.SUCCESS


def _final_checks(sc: PoolScenario, pool: EventPool, obs: _Observed, stopped: Result) -> tuple[Any, ...]:
    failure = pool._failure  # a plain read: the final check runs outside the controlled threads
    assert stopped is Result.SUCCESS, f"stop returned {stopped!r} (failure: {failure})"
    assert failure is None, f"the pool failed: {failure.describe()}"
    accepted = [k for k, r in enumerate(obs.results) if r is Result.SUCCESS]
    assert len(accepted) == sc.posts, f"posts refused: {obs.results}"
    cancelled = obs.waited[0].cancelled if obs.waited else 0
    if sc.api:
        assert len(obs.ran) + cancelled == sc.posts, (
            f"ran {len(obs.ran)} + cancelled {cancelled} != {sc.posts}"
        )
        assert not sc.cancel or obs.waited[0].result is Result.SUCCESS, f"wait gave {obs.waited}"
    else:
        settled = sorted(obs.ran + obs.discarded)
        assert settled == accepted, (
            f"exactly once: accepted {accepted}, ran {obs.ran}, discarded {obs.discarded}"
        )
        if sc.stop is StopMode.DRAIN:
            assert not obs.discarded, f"stop(drain) discarded {obs.discarded}"
    raised = sorted(k for k in sc.raising if k in obs.ran) if not sc.api else list(range(len(obs.errors)))
    assert len(obs.errors) == len(raised), f"errors reported {obs.errors}, raising works run {raised}"
    return (tuple(sorted(obs.ran)), tuple(sorted(obs.discarded)), cancelled)


def busy_take(tracer: RecordingTracer) -> bool:
    """Did a work posted while every thread was busy get taken by a thread that had just finished a
    callback (its previous event ``done``, no wait in between)? The all-busy rule, seen happen."""
    last: dict[str, str] = {}
    unsignalled: set[int] = set()
    for thread, event, fields in tracer._raw:
        if event == "post" and fields["result"] == "ok" and fields["to"] is None:
            unsignalled.add(fields["item"])
        if event == "take" and fields["item"] in unsignalled and last.get(thread) == "done":
            return True
        last[thread] = event
    return False


def _show(e: dict[str, Any]) -> str:
    rest = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("seq", "thread", "event"))
    return f"{e['seq']:>3} {e['thread']:>4} {e['event']} {rest}"
