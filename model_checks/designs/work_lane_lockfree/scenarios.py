"""Lock-free Work Lane scenarios: the real ``reference.work_lane_lockfree.LockFreeScheduler`` under
the harness, every atomic step of its lanes a scheduling point.

Each scenario races producers (two, by default, over one or two lanes) against the workers and a
Stop, and checks in every explored execution:

* no lost wakeup -- Stop(drain) returns SUCCESS with every lane empty (the scheduler turns a lane
  left holding items into a failure, reported here with its message), and a deadlock while a
  lane holds items is a ``lost_wakeup``;
* conservation -- every accepted item is invoked exactly once (Stop(drain)), or invoked or
  reported discarded exactly once (Stop(discard)); a refused item is neither;
* per-lane FIFO -- one producer's items on one lane are invoked in posting order;
* one drainer per lane -- ``drain_begin``/``drain_end`` of a lane never overlap and every
  ``invoke`` is inside its lane's drain by the same worker (checked after every step).

The final check's outcome is ``(accepted, invoked, discarded, empty drains)``, so a test can see
which of the design's particular behaviours (the empty drain; with a recording pool, the refused
submission after Stop(discard)) the search reached.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from model_checks.conformance.judged_once import JudgedOnce
from model_checks.designs.work_lane_lockfree.trace.validate import validate_lines
from model_checks.harness.drain_watch import drain_violation
from model_checks.harness.lane_posts import Item, Posts, round_robin_producers
from model_checks.harness.lane_programs import (
    DrainOverlap,
    LaneRace,
    Program,
    assert_conserved,
    produce_then_stop,
    shown_trace,
)
from model_checks.harness.runtime import ControlledRuntime
from reference.results import Result
from reference.tracing import RecordingTracer
from reference.work_lane_lockfree import LaneSpec, LockFreeScheduler, Sizing, StopMode, trace_header


@dataclass(frozen=True)
class LockFreeScenario(LaneRace):
    # Smaller than the locked Work Lane's: every atomic of a lock-free lane is a scheduling point.
    items: int = 1
    lanes: int = 1
    workers: int = 1
    capacity: int = 2
    stop: StopMode = StopMode.DRAIN


@dataclass
class _Observed:
    """What the callbacks saw. Each producer appends to its own lists and each lane's callbacks
    (one at a time, ordered by the lane's own atomics) to that lane's, so recording adds no data
    race of its own; the final check merges them."""

    lanes: int
    producers: int
    invoked: list[list[Item]] = field(default_factory=list)  # per lane
    discarded: list[list[Item]] = field(default_factory=list)  # per lane
    stop_results: list[Result] = field(default_factory=list)
    posts: Posts[Result] = field(init=False)  # per producer

    def __post_init__(self) -> None:
        self.posts = Posts(self.producers, Result.SUCCESS)
        self.invoked = [[] for _ in range(self.lanes)]
        self.discarded = [[] for _ in range(self.lanes)]


class _DrainWatch:
    """ "One drainer per lane" on the events recorded since the last step; it runs as the
    scenario's invariant, in the harness's scheduler, so its bookkeeping is no shared state of the
    program under test."""

    def __init__(self, tracer: RecordingTracer) -> None:
        self._tracer = tracer
        self._seen = 0
        self._draining: dict[int, str] = {}  # lane -> the worker draining it
        self.empty_drains = 0

    def check(self) -> bool:
        if len(self._tracer) > self._seen:
            records = self._tracer.records(self._seen)
            self._seen += len(records)
            for thread, kind, fields in records:
                self._step(kind, fields.get("lane"), thread, fields)
        return True

    def _step(self, kind: str, lane: object, who: str, e: Mapping[str, Any]) -> None:
        if not isinstance(lane, int):
            return
        if kind == "cas" and e.get("from") == "draining":  # the drain's end: the CAS out of Draining
            kind = "drain_end"
            self.empty_drains += e.get("invoked") == 0
        violation = drain_violation(self._draining, lane, kind, who)
        if violation is not None:
            raise DrainOverlap(violation)


def lockfree_program(
    sc: LockFreeScenario,
    *,
    build: Callable[..., LockFreeScheduler[Any]] = LockFreeScheduler,
    validate: bool = False,
    judge: TraceJudge | None = None,
    **scheduler_options: Any,
) -> Program:
    """The scenario as a harness program. ``build`` makes the scheduler (``LockFreeScheduler``'s
    signature: a subclass, or a factory plugging mutant lanes in); ``scheduler_options`` are extra
    keyword arguments for it (e.g. a recording ``pool_factory``). With ``validate`` every
    execution's trace must also be allowed, complete, by the work-lane-lockfree trace format
    (version 2), checked before the scenario's own checks. With the race detector too: it makes
    the tracer's append a scheduling point of its own, as a real thread's preemption is, and the
    lane's trace locks keep each atomic step and its event one step
    (tests/work_lane_lockfree/test_trace_linearisation.py).

    The traces judged allowed are remembered for the life of the program (one search): most
    executions of a search differ only in steps that log nothing, so they emit a trace already
    judged, and the same lines always get the same verdict. Each distinct trace is still judged
    in full by the spec (``TraceJudge``; a test may pass its own ``judge`` to read its counts)."""
    judged = TraceJudge() if judge is None else judge

    def program(rt: ControlledRuntime) -> object:
        obs = _Observed(sc.lanes, sc.producers)
        tracer = RecordingTracer(make_header=trace_header)
        watch = _DrainWatch(tracer)
        sched: LockFreeScheduler[Item] = build(
            [LaneSpec(lambda lane, item: obs.invoked[lane].append(item), context=i) for i in range(sc.lanes)],
            workers=sc.workers,
            lane_capacity=sc.capacity,
            max_per_drain=sc.budget,
            runtime=rt,
            tracer=tracer,
            on_discard=lambda lane, item: obs.discarded[lane].append(item),
            sizing=Sizing.CHECKING,  # the spec's small sizes (capacity 1, ready queue = lanes)
            **scheduler_options,
        )
        handles = [sched.get_lane(i)[1] for i in range(sc.lanes)]

        producer = round_robin_producers(
            lambda lane, item: sched.try_post(handles[lane], item), sc.items, sc.lanes, obs.posts.record
        )
        rt.invariant(watch.check, "one drainer per lane")
        rt.pending_work(lambda: any(queued(sched, lane) for lane in range(sc.lanes)))
        rt.trace(shown_trace(tracer))

        stopped = produce_then_stop(
            rt, producer, sc.producers, lambda: sched.stop(sc.stop), sc.stop_races_posts
        )
        obs.stop_results.append(stopped)

        def final() -> tuple[int, int, int, int]:
            if validate:  # first: a bug the trace shows is reported in the trace's words
                judged.check(tracer)
            return (*final_checks(sc, obs, sched), watch.empty_drains)

        return final

    return program


def trace_lines(tracer: RecordingTracer) -> list[str]:
    """The recorded trace as JSON Lines, under the tracer's header (this design's version 2)."""
    return list(tracer.lines())


def check_lines(lines: list[str]) -> None:
    """The trace is a complete behaviour of the spec (the format's verdict otherwise)."""
    verdict = validate_lines(lines)
    assert verdict.allowed and not verdict.prefix, f"trace (format v2) not allowed: {verdict.message}"


class TraceJudge(JudgedOnce[bool]):
    """``check_lines`` on the traces of one search's executions, each distinct trace judged once
    (``conformance.judged_once``: a trace known by a digest of its lines, remembered only once the
    spec allowed it). ``judged`` and ``seen`` say how much the memo saved (tests read them)."""

    def __init__(self) -> None:
        super().__init__(_allowed, keep=bool)

    def check(self, tracer: RecordingTracer) -> None:
        self(trace_lines(tracer))


def _allowed(lines: Sequence[str]) -> bool:
    check_lines(list(lines))
    return True


def queued(sched: LockFreeScheduler[Any], lane: int) -> int:
    """How many items a lane holds, read from the model of its atomic cell, not through a scheduling
    point: this runs between steps (at a deadlock, in the final check)."""
    cell: Any = sched._lanes[lane].queue._cell
    return len(cell._st.value)


def final_checks(sc: LockFreeScenario, obs: _Observed, sched: LockFreeScheduler[Any]) -> tuple[int, int, int]:
    failure = sched.failure
    why = f": {failure.describe()} -- {failure.error}" if failure is not None else ""
    assert obs.stop_results == [Result.SUCCESS], f"Stop returned {obs.stop_results}{why}"
    left = {lane: queued(sched, lane) for lane in range(sc.lanes) if queued(sched, lane)}
    assert not left, f"lost wakeup: lanes {left} still hold items after Stop({sc.stop.value}) returned"
    accepted = sorted(item for item, _ in obs.posts.all_accepted())
    invoked = sorted(item for lane in obs.invoked for item in lane)
    discarded = sorted(item for lane in obs.discarded for item in lane)
    assert_conserved(sc.stop is StopMode.DRAIN, accepted, invoked, discarded)
    lane_of = dict(obs.posts.all_accepted())
    for lane in range(sc.lanes):
        for item in obs.invoked[lane] + obs.discarded[lane]:
            assert lane_of.get(item) == lane, f"{item} ran on lane {lane}, posted to {lane_of.get(item)}"
        for p in range(sc.producers):
            order = [i for q, i in obs.invoked[lane] if q == p]
            assert order == sorted(order), f"lane {lane} FIFO broken for producer {p}: {order}"
    return len(accepted), len(invoked), len(discarded)


SCENARIO_SPECS: dict[str, LockFreeScenario] = {
    # One producer, one lane, one worker: the post's push and CAS against the drain (a quick proof).
    "one-producer": LockFreeScenario(producers=1),
    # Two producers, one lane, one worker: a post's push and CAS race the drain's release,
    # re-check and reclaim (the empty drain is reached here).
    "one-lane-drain": LockFreeScenario(),
    # Two workers: a reclaim races another worker's take of the producer's submission.
    "one-lane-2-workers": LockFreeScenario(workers=2),
    # A full lane: one post is CAPACITY_EXCEEDED.
    "lane-at-capacity": LockFreeScenario(capacity=1),
    # Two lanes, two workers, Stop(drain) racing the posts.
    "two-lanes-stop-drain-races": LockFreeScenario(lanes=2, workers=2, stop_races_posts=True),
    # Stop(discard) racing the posts: refused posts, drains given up, the reset's report.
    "stop-discard-races-posts": LockFreeScenario(stop=StopMode.DISCARD, stop_races_posts=True),
    # Stop(discard) after two posts with a budget of one: a worker that re-reserved the lane has
    # its resubmission refused by the stopped pool, and the reset reports the item.
    "stop-discard-refused-resubmit": LockFreeScenario(stop=StopMode.DISCARD),
    # Two lanes under Stop(discard) after the posts.
    "two-lanes-stop-discard": LockFreeScenario(lanes=2, workers=2, stop=StopMode.DISCARD),
}
