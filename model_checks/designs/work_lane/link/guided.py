"""A chooser for ``run_once`` that follows a spec counterexample's thread order (check 5).

The spec counterexample is a list of steps, each with a ``process`` ("p0", "w1", "s0") and an
optional trace event. It is cut into *segments*: maximal runs of steps of one process. A segment
asks the chooser to run that process's harness thread until it has logged the segment's events,
then ``extra`` more scheduling steps of that thread (the spec's silent steps at the end of the
segment, e.g. split-idle's ``DrainSawEmpty``: the reference has no event there, and how many of its
scheduling points correspond is not known in advance, so the caller enumerates ``extra``).

Spec producers and stoppers map to the harness threads of the same name (``scenario.link_program``
names them so); spec workers are interchangeable, so spec ``w<i>`` is bound to whichever harness
worker logs the first event while ``w<i>``'s segment runs. When the preferred thread is blocked (or
not started yet), the chooser falls back to the other enabled threads, in this order: ``main``, the
workers, the other threads of the counterexample, then the threads the counterexample never runs
(a stopper that acts there would log events the counterexample does not have). Normal steps come
before a virtual timeout or a spurious wakeup. After the last segment it keeps the running thread.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from model_checks.explorer.counterexample import Counterexample
from model_checks.harness.rt.objects import NORMAL, Action
from model_checks.harness.rt.scheduler import Execution
from reference.tracing import RecordingTracer


@dataclass(frozen=True)
class Segment:
    process: str  # spec process: "p0", "w0", "s1"
    events: int  # trace events the segment's steps log
    silent_tail: int  # spec steps without an event after the segment's last event
    extra: int = 0  # scheduling steps of the thread to run after its last event


def segments_of(cx: Counterexample) -> list[Segment]:
    """The counterexample as segments (``extra`` 0)."""
    out: list[Segment] = []
    for process, group in itertools.groupby(cx.steps, key=lambda s: str(s.process)):
        steps = list(group)
        events = sum(1 for s in steps if s.event is not None)
        tail = 0
        for s in reversed(steps):
            if s.event is not None:
                break
            tail += 1
        out.append(Segment(process, events, tail))
    return out


def plans(segments: Sequence[Segment], max_extra: int) -> Iterator[list[Segment]]:
    """Every choice of ``extra`` (0..max_extra) for the segments with a silent tail that another
    segment follows, smallest total first; the other segments keep ``extra`` 0."""
    open_ = [i for i, s in enumerate(segments[:-1]) if s.silent_tail > 0]
    vectors = sorted(itertools.product(range(max_extra + 1), repeat=len(open_)), key=lambda v: (sum(v), v))
    for vector in vectors:
        plan = list(segments)
        for i, extra in zip(open_, vector, strict=True):
            plan[i] = Segment(plan[i].process, plan[i].events, plan[i].silent_tail, extra)
        yield plan


class GuidedChooser:
    """Prefer the thread of the current segment; see the module docstring."""

    def __init__(self, plan: Sequence[Segment], tracer: RecordingTracer | None = None) -> None:
        self.plan = list(plan)
        self.tracer = tracer  # set before the first step that can log (``link_program``'s on_start)
        self.index = 0  # current segment
        self.logged = 0  # events of the current segment logged so far
        self.extra_done = 0
        self.seen = 0  # trace events already attributed
        self.bound: dict[str, str] = {}  # spec worker -> harness thread name
        self.processes = {s.process for s in self.plan}
        self._skip_empty()

    @property
    def done(self) -> bool:
        return self.index >= len(self.plan)

    def _skip_empty(self) -> None:
        while not self.done and self.plan[self.index].events == 0 and self.plan[self.index].extra == 0:
            self._next()

    def _next(self) -> None:
        self.index += 1
        self.logged = 0
        self.extra_done = 0

    def _thread_of(self, process: str) -> str | None:
        if process.startswith("w"):
            return self.bound.get(process)
        return process

    def _is_mine(self, thread: str) -> bool:
        seg = self.plan[self.index]
        if not seg.process.startswith("w"):
            return thread == seg.process
        if not thread.startswith("w"):
            return False
        mine = self.bound.get(seg.process)
        if mine is None and thread not in self.bound.values():
            self.bound[seg.process] = thread
            return True
        return mine == thread

    def after_step(self, ex: Execution) -> None:
        if self.done or not ex.steps:
            return
        events = self.tracer.events() if self.tracer is not None else []
        logged_now = False
        for ev in events[self.seen :]:
            if not self.done and self._is_mine(str(ev["thread"])):
                self.logged += 1
                logged_now = True
        self.seen = len(events)
        if self.done:
            return
        seg = self.plan[self.index]
        if self.logged < seg.events:
            return
        if not logged_now and ex.threads[ex.steps[-1].tid].name == self._thread_of(seg.process):
            self.extra_done += 1
        if self.extra_done >= seg.extra:
            self._next()
            self._skip_empty()

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        ordered = sorted(enabled, key=lambda a: a[1] != NORMAL)  # stable: running thread first
        if self.done:
            return ordered[0]
        seg = self.plan[self.index]
        names = [ex.threads[tid].name for tid, _ in ordered]
        wanted = self._thread_of(seg.process)
        for action, name in zip(ordered, names, strict=True):
            mine = name == wanted or (
                wanted is None and name.startswith("w") and name not in self.bound.values()
            )
            if mine and action[1] == NORMAL:
                return action

        def rank(pair: tuple[Action, str]) -> tuple[int, int]:
            (_, alt), name = pair
            if name == "main":
                r = 0
            elif name.startswith("w"):
                r = 1
            elif name in self.processes:
                r = 2
            else:
                r = 3
            return (alt != NORMAL, r)

        return min(zip(ordered, names, strict=True), key=rank)[0]
