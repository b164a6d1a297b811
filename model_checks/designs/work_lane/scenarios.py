"""Work Lane scenarios: the real ``reference.scheduler.WorkerScheduler`` under the harness.

Every scenario builds a scheduler on the controlled runtime, races producers (and Stop) against
the workers, and checks, in every explored execution:

* conservation -- every accepted item is invoked exactly once (Stop(drain)), or invoked or
  discarded exactly once (Stop(discard)); refused items are never invoked;
* per-lane FIFO -- one producer's accepted items on one lane are invoked in posting order;
* one drainer per lane -- drain_begin/drain_end of a lane never overlap, and every invoke of a
  lane happens inside a drain of that lane by the same worker (checked after every step);
* every Stop returns (a Stop that blocks forever is a deadlock / lost wakeup), with SUCCESS,
  except a Stop from a callback, which must be refused with INVALID_STATE;
* an invoke that raises is reported through ``on_error`` and the lane goes on;
* different lanes run in parallel (``rendezvous``): lane 0's first invoke blocks until lane 1
  has invoked an item, which only another worker can do -- a worker left parked while work
  waits (a lost or withheld wake-up) deadlocks it.

Schedule spaces here are large: use a preemption bound, an execution cap or PCT (see
``SCENARIO_OPTIONS``) unless you have minutes to spare.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model_checks.designs.work_lane import declared  # noqa: F401  (the design's GIL-atomic field)
from model_checks.harness.drain_watch import DRAIN_EVENTS, DrainWatch
from model_checks.harness.lane_posts import Posts, round_robin_producers
from model_checks.harness.lane_programs import (
    LaneRace,
    Program,
    ReportedTrace,
    assert_conserved,
    produce_then_stop,
    shown_trace,
)
from model_checks.harness.options import Options
from model_checks.harness.runtime import ControlledRuntime
from reference.results import Result as TkResult
from reference.scheduler import LaneSpec, Sizing, StopMode, WorkerScheduler
from reference.tracing import RecordingTracer


@dataclass(frozen=True)
class LaneScenario(LaneRace):
    stop: StopMode = StopMode.DRAIN
    stop_from_callback: bool = False  # the first invoke calls stop() and must be refused
    raising_item: tuple[int, int] | None = None  # (producer, index) whose invoke raises
    rendezvous: bool = False  # lane 0's first invoke waits until lane 1 has invoked an item
    # Untraced, the pool and lanes take their no-call fast paths (the ones users run); the
    # "one drainer per lane" watch needs the trace and is then off.
    traced: bool = True


@dataclass
class _Observed:
    """What the scenario's callbacks saw, recorded so that recording adds no data race of its own:
    each producer appends to its own lists, each lane's callbacks (run by whichever worker drains
    the lane, or by Stop discarding it; one at a time, ordered by the lane's own synchronisation)
    to that lane's lists. The lists exist before any thread starts; the final check merges them.

    Only what the checks need, and no history: per lane and producer, the indexes of the items
    invoked (discarded) in the order they were, which is all conservation, "posted to this lane"
    and per-producer FIFO read. Not which worker invoked an item, nor how one lane's invokes of
    two producers' items interleaved: kept, they would make states that differ only in the past
    (state pruning would then rarely see a state again)."""

    lanes: int
    producers: int
    # made by ``__post_init__`` (in this order), not by factories whose lists it would replace
    invoked: list[list[list[int]]] = field(init=False)  # [lane][producer] -> indexes
    discarded: list[list[list[int]]] = field(init=False)  # [lane][producer] -> indexes
    errors: list[list[tuple[int, tuple[int, int], str]]] = field(init=False)  # per lane
    stop_results: list[TkResult] = field(init=False)  # main thread only
    callback_stop: list[TkResult] = field(init=False)  # per lane 0's first invoke only
    posts: Posts[TkResult] = field(init=False)  # per producer

    def __post_init__(self) -> None:
        lanes = range(self.lanes)
        producers = range(self.producers)
        self.invoked = [[[] for _ in producers] for _ in lanes]
        self.discarded = [[[] for _ in producers] for _ in lanes]
        self.errors = [[] for _ in lanes]
        self.stop_results = []
        self.callback_stop = []
        self.posts = Posts(self.producers, TkResult.SUCCESS)

    def invoked_on(self, lane: int) -> int:
        """How many items ``lane`` has invoked (read by that lane's own callbacks)."""
        return sum(len(mine) for mine in self.invoked[lane])

    def all_invoked(self) -> list[tuple[int, tuple[int, int]]]:
        """Every invoke, as (lane, item)."""
        return [
            (lane, (p, i))
            for lane, per in enumerate(self.invoked)
            for p, mine in enumerate(per)
            for i in mine
        ]

    def all_discarded(self) -> list[tuple[int, int]]:
        return [(p, i) for per in self.discarded for p, mine in enumerate(per) for i in mine]


class _StepTracer(RecordingTracer):
    """The scheduler's tracer: a ``RecordingTracer`` whose records a reader may drop once read.
    (A subclass, so the race detector's declaration of the recorder's list holds for it too:
    ``harness/reference_fields.py``.)"""

    def raw(self) -> list[tuple[str, str, Any]]:
        """The list the records are appended to (the same list for the tracer's whole life: it is
        only ever cleared in place), for a reader that looks at it after every step. Read from
        the instance's dict: under the race detector ``_raw`` is a declared field, and reading
        it through its descriptor from a controlled thread would be a scheduling point of its own."""
        raw: list[tuple[str, str, Any]] = self.__dict__["_raw"]
        return raw


def _drain_watch(tracer: _StepTracer, report: ReportedTrace | None = None) -> DrainWatch:
    """The scenario's "one drainer per lane" invariant over its tracer's records. With ``report``
    the events read are dropped from the tracer and handed to the failure report instead
    (``lane_programs.ReportedTrace``), so the state keeps no trace."""
    return DrainWatch(tracer.raw(), None if report is None else report.keep)


def lane_program(
    sc: LaneScenario,
    *,
    build: Callable[..., WorkerScheduler[Any]] = WorkerScheduler,
    keep_trace: bool = True,
    **scheduler_options: Any,
) -> Program:
    """The scenario as a harness program. ``build`` makes the scheduler (same signature as
    ``WorkerScheduler``: a subclass, or a factory plugging mutant lanes/pools in);
    ``scheduler_options`` are extra keyword arguments for it (e.g. ``lane_factory``).

    ``keep_trace``: the scheduler's tracer (a ``RecordingTracer``) keeps the whole trace, for a
    caller that reads it (the link's validator, ``link/impl_to_spec.py``, is handed it through a
    ``pool_factory``). With False the program keeps no history: each step's events are checked
    and then dropped, and a failure report still shows them all (``ReportedTrace``). The checks
    are the same; what differs is only the state, which then lets state pruning
    (``lanecheck explore --strategy states``) meet a state again after two orders of independent
    steps. ``SCENARIOS`` uses False; the harness rows (``harness.py``) keep the trace, which the
    report site's real runs judge against the spec, and give the state search their False twin
    (``Scenario.build_for_states``)."""

    def program(rt: ControlledRuntime) -> object:
        obs = _Observed(sc.lanes, sc.producers)
        tracer = _StepTracer()
        report = None if keep_trace or not sc.traced else ReportedTrace(rt)
        watch = _drain_watch(tracer, report)
        holder: list[WorkerScheduler[tuple[int, int]]] = []
        lane1_ran = rt.event(name="lane1 invoked")

        def invoke(lane: int, item: tuple[int, int]) -> None:
            obs.invoked[lane][item[0]].append(item[1])
            if sc.rendezvous:
                if lane == 1:
                    lane1_ran.set()
                elif lane == 0 and obs.invoked_on(0) == 1:
                    lane1_ran.wait()
            if sc.stop_from_callback and lane == 0 and obs.invoked_on(0) == 1:
                obs.callback_stop.append(holder[0].stop(sc.stop))
            if sc.raising_item == item:
                raise ValueError(f"invoke of {item} fails on purpose")

        def on_error(lane: int, item: tuple[int, int], exc: BaseException) -> None:
            obs.errors[lane].append((lane, item, type(exc).__name__))

        sched: WorkerScheduler[tuple[int, int]] = build(
            [LaneSpec(invoke, i) for i in range(sc.lanes)],
            workers=sc.workers,
            lane_capacity=sc.capacity,
            max_per_drain=sc.budget,
            runtime=rt,
            tracer=tracer if sc.traced else None,
            on_error=on_error,
            on_discard=lambda lane, item: obs.discarded[lane][item[0]].append(item[1]),
            sizing=Sizing.CHECKING,  # the spec's small sizes (capacity 1, ready queue = lanes)
            **scheduler_options,
        )
        if sc.stop_from_callback:
            # Only then: the lanes hold ``invoke``, so the scheduler in its closure is a cycle
            # left to the cyclic collector after every execution.
            holder.append(sched)
        handles = [sched.get_lane(i)[1] for i in range(sc.lanes)]

        producer = round_robin_producers(
            lambda lane, item: sched.try_post(handles[lane], item), sc.items, sc.lanes, obs.posts.record
        )

        if sc.traced:
            # it reads only the tracer's records: checked after the steps that emitted some (and
            # that keep them: only drain events can break it, so only those steps)
            kinds = DRAIN_EVENTS if report is None else None
            rt.invariant(watch.check, "one drainer per lane", watch=watch.records, kinds=kinds)
            if report is None:
                rt.trace(shown_trace(tracer))
        rt.pending_work(lambda: any(_queued(lane.queue) for lane in sched._lanes))

        stopped = produce_then_stop(
            rt, producer, sc.producers, lambda: sched.stop(sc.stop), sc.stop_races_posts
        )
        obs.stop_results.append(stopped)

        def final() -> tuple[Any, ...]:
            return _final_checks(sc, obs)

        return final

    return program


# Looked up once, not at the end of every execution (``_final_checks``).
_SUCCESS = TkResult.SUCCESS
_DRAIN = StopMode.DRAIN


def _queued(queue: Any) -> bool:
    """Does a lane queue hold items? Read from the model (``_items``), not through a scheduling
    point: this runs at a deadlock, between steps."""
    return bool(queue._items)


def _final_checks(sc: LaneScenario, obs: _Observed) -> tuple[Any, ...]:
    # (list comprehensions, not generator expressions, and the lanes' lists walked directly:
    # this runs at the end of every execution)
    all_accepted = obs.posts.all_accepted()
    all_invoked = obs.all_invoked()
    accepted = sorted([item for item, _ in all_accepted])
    invoked = sorted([item for _, item in all_invoked])
    discarded = sorted(obs.all_discarded())
    assert obs.stop_results == [_SUCCESS], f"Stop returned {obs.stop_results}"
    if sc.stop_from_callback:
        assert obs.callback_stop == [TkResult.INVALID_STATE], f"Stop in a callback gave {obs.callback_stop}"
    assert_conserved(sc.stop is _DRAIN, accepted, invoked, discarded)
    lane_of = dict(all_accepted)
    for lane, item in all_invoked:
        assert lane_of.get(item) == lane, f"{item} invoked on lane {lane}, posted to {lane_of.get(item)}"
    for lane, per in enumerate(obs.invoked):
        for p, order in enumerate(per):
            assert order == sorted(order), f"lane {lane} FIFO broken for producer {p}: {order}"
    if sc.raising_item is not None and sc.raising_item in invoked:
        errors = [e for lane in obs.errors for e in lane]
        assert [e[1] for e in errors] == [sc.raising_item], f"on_error saw {errors}"
    return (len(accepted), len(invoked), len(discarded))


SCENARIO_SPECS: dict[str, LaneScenario] = {
    "lanes-2x2-budget1": LaneScenario(budget=1),
    "lanes-2x2-budget2": LaneScenario(budget=2),
    "lane-at-capacity": LaneScenario(producers=2, items=2, lanes=1, workers=1, capacity=1),
    "stop-drain-races-posts": LaneScenario(items=1, stop_races_posts=True),
    "stop-discard-races-posts": LaneScenario(items=1, stop=StopMode.DISCARD, stop_races_posts=True),
    "stop-discard-after-posts": LaneScenario(items=2, stop=StopMode.DISCARD, budget=1),
    "stop-from-callback": LaneScenario(producers=1, items=2, lanes=1, workers=1, stop_from_callback=True),
    "invoke-raises": LaneScenario(producers=1, items=2, lanes=1, workers=2, raising_item=(0, 0)),
    # The pool's park/wake handshake on its untraced fast path: both lanes' work items may be
    # queued before either worker wakes, and only the second worker can run lane 1.
    "lanes-in-parallel": LaneScenario(
        producers=1, items=2, lanes=2, workers=2, rendezvous=True, traced=False
    ),
}


def _factory(spec: LaneScenario) -> Callable[[], Program]:
    return lambda: lane_program(spec, keep_trace=False)


SCENARIOS: dict[str, Callable[[], Program]] = {
    f"work-lane/{name}": _factory(spec) for name, spec in SCENARIO_SPECS.items()
}

# What the harness's own tests and `lanecheck verify` run: bounded, and quick.
SCENARIO_OPTIONS = Options(strategy="dfs", preemption_bound=1, max_executions=3_000, max_steps=5_000)
