"""One scenario, two readings: spec ``Constants`` and a harness program over the real reference.

A ``LinkScenario`` names producers ``p0``.., each posting its script (lanes, ``None`` = an invalid
handle) of items ``p<i>.<k>``, and Stop calls ``s0``.. each on its own thread, all started together
(so Stop may happen anywhere, as in the spec). Without a Stop the program waits for the pool to be
quiet, cuts the trace there (the spec's terminal state: every lane Idle), and only then stops the
scheduler to join its workers; the events after the cut are not part of the scenario.

``SequencedTracer`` makes every ``emit`` a scheduling point on one shared atomic counter, so that
DPOR treats any two trace events as dependent and explores every order in which they can be logged
(without it, two posts to different lanes commute for DPOR and only one order would be seen).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from model_checks.designs.work_lane import declared  # noqa: F401  (the design's GIL-atomic field)
from model_checks.harness.runtime import ControlledRuntime
from model_checks.spec_behaviours import canonical as canonical  # the link checks' name for it
from reference.results import Result as TkResult
from reference.scheduler import LaneHandle, LaneSpec, Sizing, StopMode, WorkerScheduler
from reference.tracing import Fields, RecordingTracer, Tracer

if TYPE_CHECKING:
    # (imported where used: the state search walks the globals of this module, whose functions
    # the program runs, at every state; the spec module is large and holds nothing of a run)
    from spec import work_lane as wl

Builder = Callable[..., WorkerScheduler[Any]]
Program = Callable[[ControlledRuntime], object]
Event = dict[str, Any]
# One event as a comparable value: (thread, event, sorted fields), lists as tuples.
EventKey = tuple[str, str, tuple[tuple[str, Any], ...]]
TraceKey = tuple[EventKey, ...]


class Sizes(TypedDict):
    workers: int
    lane_capacity: int
    max_per_drain: int
    ready_capacity: int


@dataclass(frozen=True)
class LinkScenario:
    lanes: int = 2
    workers: int = 2
    capacity: int = 2
    budget: int = 1
    script: tuple[tuple[int | None, ...], ...] = ((0,), (1,))
    stops: tuple[str, ...] = ()
    # The first invoke callback to run calls Stop(callback_stop) on its own scheduler (refused)
    callback_stop: str | None = None

    def sizes(self) -> Sizes:
        """The four sizes the reference's ``WorkerScheduler`` and the spec's ``Constants`` share."""
        return Sizes(
            workers=self.workers,
            lane_capacity=self.capacity,
            max_per_drain=self.budget,
            ready_capacity=self.lanes,
        )

    def constants(self) -> wl.Constants:
        from spec import work_lane as wl

        return wl.Constants(
            lanes=self.lanes,
            script=self.script,
            stops=self.stops,
            callback_stop=self.callback_stop is not None,
            **self.sizes(),
        )

    @classmethod
    def of(cls, c: wl.Constants) -> LinkScenario:
        """The scenario of spec constants (with no Stop from a callback: the spec's says only
        whether there is one, not its mode)."""
        return cls(
            lanes=c.lanes,
            workers=c.workers,
            capacity=c.lane_capacity,
            budget=c.max_per_drain,
            script=c.script,
            stops=c.stops,
        )

    def label(self) -> str:
        posts = "+".join("".join("x" if lane is None else str(lane) for lane in s) for s in self.script)
        stop = ",".join(self.stops) or "none"
        callback = "" if self.callback_stop is None else f" callback-stop {self.callback_stop}"
        return (
            f"{len(self.script)}p[{posts}] {self.lanes}l {self.workers}w "
            f"budget {self.budget} cap {self.capacity} stop {stop}{callback}"
        )


def _spec_config(name: str, callback_stop: str | None = None) -> LinkScenario:
    """The scenario of one of the spec's configurations; ``callback_stop``: the mode of its Stop from
    a callback, which the spec's constants leave open."""
    # imported here, not kept in this module's globals: the state search walks those at every state
    from model_checks.designs.work_lane.configs import CONFIGS

    c = CONFIGS[name]
    assert c.callback_stop == (callback_stop is not None), f"{name}: a Stop from a callback, or none"
    return replace(LinkScenario.of(c), callback_stop=callback_stop)


# The scenario-sized configurations of checks 1 and 2.
LINK_SCENARIOS: dict[str, LinkScenario] = {
    "2x1-budget1": LinkScenario(script=((0,), (1,))),
    "2x1-same-lane": LinkScenario(script=((0,), (0,)), budget=1),
    "1x2-budget1": LinkScenario(script=((0, 0),), budget=1),
    "1x2-budget2": LinkScenario(script=((0, 0),), budget=2),
    "2x1-stop-drain": LinkScenario(script=((0,), (1,)), stops=("drain",)),
    "2x1-stop-discard": LinkScenario(script=((0,), (0,)), stops=("discard",)),
    "1x2-full-invalid": LinkScenario(script=((0, None),), capacity=1, lanes=1, workers=1),
    "2x1-cap1-full": LinkScenario(script=((0,), (0,)), capacity=1, lanes=1, workers=1, budget=1),
    "1x1-2w": LinkScenario(script=((0,),), capacity=1, lanes=1, workers=2),
    "1x2-2w-cap1": LinkScenario(script=((0, 0),), capacity=1, lanes=1, workers=2),
    "1x1-stop-drain": LinkScenario(script=((0,),), capacity=1, lanes=1, workers=1, stops=("drain",)),
    "1x1-stop-discard": LinkScenario(script=((0,),), capacity=1, lanes=1, workers=1, stops=("discard",)),
    "1x1-2w-stop-drain": LinkScenario(script=((0,),), capacity=1, lanes=1, workers=2, stops=("drain",)),
    "1x1-2w-stop-discard": LinkScenario(script=((0,),), capacity=1, lanes=1, workers=2, stops=("discard",)),
    # The spec's ``small`` configuration, all of it: two lanes and workers, a full lane, an invalid
    # handle, two Stops racing the posts, a Stop from a callback
    "small": _spec_config("small", callback_stop="drain"),
}


class EmitListener(Protocol):
    """Told about each event once it is logged (a coverage-guided search follows the trace)."""

    def logged(self, thread: str, event: str, fields: Fields) -> None: ...


class SequencedTracer(RecordingTracer):
    """A ``RecordingTracer`` whose ``emit`` is a scheduling point on one shared counter.

    ``observed`` limits the scheduling points to those events (the projection of a comparison):
    the order in which unobserved events are logged is never looked at, so exploring it is waste.
    ``listener`` hears of each event once it is logged.
    """

    def __init__(
        self,
        rt: ControlledRuntime | None = None,
        observed: Collection[str] | None = None,
        listener: EmitListener | None = None,
    ) -> None:
        super().__init__()
        self._counter = rt.atomic_int(0, name="trace.seq") if rt is not None else None
        self._observed = None if observed is None else frozenset(observed)
        self._listener = listener

    def emit(self, thread: str, event: str, fields: Fields) -> None:
        if self._counter is not None and (self._observed is None or event in self._observed):
            self._counter.fetch_add(1)
        super().emit(thread, event, fields)
        if self._listener is not None:
            self._listener.logged(thread, event, fields)


@dataclass
class Run:
    """What one execution of the program observed."""

    tracer: RecordingTracer
    cut: int | None = None  # events after this index are clean-up, not the scenario
    post_results: list[tuple[str, str, TkResult]] = field(default_factory=list)  # thread, item, result
    stop_results: list[tuple[str, TkResult]] = field(default_factory=list)

    def events(self) -> list[Event]:
        events = self.tracer.events()
        return events if self.cut is None else events[: self.cut]

    def lines(self) -> list[str]:
        return [json.dumps(self.tracer.header()), *(json.dumps(e) for e in self.events())]


def link_program(
    sc: LinkScenario,
    sink: Callable[[Run], None],
    *,
    build: Builder = WorkerScheduler,
    sequenced: bool = True,
    checks: Sequence[Callable[[Run], object]] = (),
    on_start: Callable[[Run], None] | None = None,
    observed: Collection[str] | None = None,
    listener: EmitListener | None = None,
) -> Program:
    """The scenario as a harness program. ``sink(run)`` receives the ``Run`` of each execution that
    completes (from a final check); ``checks`` are more final checks (raise to fail the execution);
    ``listener`` hears of every event (``SequencedTracer``)."""

    def program(rt: ControlledRuntime) -> object:
        tracer = SequencedTracer(rt if sequenced else None, observed, listener)
        run = Run(tracer)
        if on_start is not None:
            on_start(run)
        holder: list[WorkerScheduler[Any]] = []
        invoked = [0]

        def invoke(context: object, item: object) -> None:
            invoked[0] += 1
            if sc.callback_stop is not None and invoked[0] == 1:
                run.stop_results.append(("callback", holder[0].stop(StopMode(sc.callback_stop))))

        sched, handles = start_scheduler(sc, build, rt, tracer, None if sc.callback_stop is None else invoke)
        holder.append(sched)

        def producer(p: int) -> Callable[[], None]:
            def body() -> None:
                for k, lane in enumerate(sc.script[p]):
                    post_scripted(run, sched, handles, p, k, lane)

            return body

        def stopper(i: int) -> Callable[[], None]:
            def body() -> None:
                run.stop_results.append((f"s{i}", sched.stop(StopMode(sc.stops[i]))))

            return body

        threads = [rt.start_thread(producer(p), f"p{p}") for p in range(len(sc.script))]
        threads += [rt.start_thread(stopper(i), f"s{i}") for i in range(len(sc.stops))]
        for t in threads:
            t.join()
        if not sc.stops:
            sched._pool.wait_quiescent()
            run.cut = len(tracer)
            sched.stop(StopMode.DRAIN)
        return [
            lambda: sink(run),
            lambda: _callback_stop_refused(run),
            *(lambda check=check: check(run) for check in checks),
        ]

    return program


def _callback_stop_refused(run: Run) -> None:
    """A Stop from a callback would wait for itself: the scheduler must refuse it."""
    for who, result in run.stop_results:
        if who == "callback":
            assert result is TkResult.INVALID_STATE, f"Stop from a callback returned {result.name}"


def start_scheduler(
    sc: LinkScenario,
    build: Builder,
    rt: ControlledRuntime,
    tracer: Tracer,
    invoke: Callable[[object, object], object] | None = None,
) -> tuple[WorkerScheduler[Any], list[LaneHandle]]:
    """The scenario's scheduler (no-op invokes unless ``invoke``; lane ``i`` has context ``i``)
    and its lane handles."""
    sched = build(
        [LaneSpec(invoke or _ignore, context=i) for i in range(sc.lanes)],
        **sc.sizes(),
        runtime=rt,
        tracer=tracer,
        sizing=Sizing.CHECKING,  # the spec's sizes: a lane of capacity 1, a ready queue of 3
    )
    return sched, [sched.get_lane(i)[1] for i in range(sc.lanes)]


def post_scripted(
    run: Run, sched: WorkerScheduler[Any], handles: list[LaneHandle], p: int, k: int, lane: int | None
) -> None:
    """``scripted_post``, its result recorded in ``run``."""
    run.post_results.append((f"p{p}", *scripted_post(sched, handles, p, k, lane)))


def scripted_post(
    sched: WorkerScheduler[Any], handles: list[LaneHandle], p: int, k: int, lane: int | None
) -> tuple[str, TkResult]:
    """Producer ``p``'s ``k``-th post, item ``p{p}.{k}`` (lane None: a handle of no scheduler)."""
    handle = LaneHandle() if lane is None else handles[lane]
    item = f"p{p}.{k}"
    return item, sched.try_post(handle, item)


def _ignore(context: object, item: object) -> None:
    return None


# ----------------------------------------------------------------------------- traces as values


def event_key(ev: Mapping[str, Any]) -> EventKey:
    return emitted_key(str(ev["thread"]), str(ev["event"]), ev)


def emitted_key(thread: str, event: str, fields: Mapping[str, Any]) -> EventKey:
    """The key of an event as ``emit`` receives it (``fields`` may hold seq/thread/event too:
    they are left out)."""
    return (
        thread,
        event,
        tuple(
            sorted(
                (k, tuple(v) if isinstance(v, list) else v)
                for k, v in fields.items()
                if k not in ("seq", "thread", "event")
            )
        ),
    )


def key_lines(constants: wl.Constants, trace: TraceKey) -> Iterator[str]:
    """A trace value back as JSON Lines (for the validator)."""
    yield json.dumps(
        {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": constants.header()}
    )
    for seq, (thread, event, fields) in enumerate(trace, start=1):
        ev: dict[str, Any] = {"seq": seq, "thread": thread, "event": event}
        ev.update({k: list(v) if isinstance(v, tuple) else v for k, v in fields})
        yield json.dumps(ev)


def show(trace: TraceKey) -> str:
    parts = []
    for thread, event, fields in trace:
        body = ",".join(f"{k}={v}" for k, v in fields if k != "item")
        item = dict(fields).get("item")
        parts.append(
            f"{thread}:{event}" + (f"({item})" if item is not None else "") + (f"[{body}]" if body else "")
        )
    return " ".join(parts)
