"""A link scenario as a harness program whose state keeps no history (for ``reachable.py``).

``scenario.link_program`` records the trace and the results of every post and Stop. That is
history: with it in the state, two orders of independent steps never meet again, and state
pruning (``harness.stateful.check_states``) has nothing to cut. This program runs the same
threads on the same scheduler but keeps only what its future depends on:

* each observed event goes to ``outbox``, a list the search empties every time it takes a state
  (``reachable.py`` follows the events through the spec's automaton there, outside the program),
  so the list is empty in every state; ``START`` and ``END`` mark where an execution's trace
  begins and ends;
* each observed event is a scheduling point, as ``SequencedTracer`` makes it (the order of
  logging is what is compared), but a *read* of one atomic cell: a counter would be history;
* the scenario's check on results (a Stop from a callback is refused) is made on the spot.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from model_checks.designs.work_lane.link.scenario import (
    Builder,
    LinkScenario,
    Program,
    scripted_post,
    start_scheduler,
)
from model_checks.harness.runtime import ControlledRuntime
from reference.results import Result as TkResult
from reference.scheduler import StopMode, WorkerScheduler
from reference.tracing import Fields

START = "start"  # an execution begins
END = "end"  # its trace is complete (later events are clean-up, not the scenario's)
Outbox = list[Any]  # START, END and (thread, event, fields) in the order logged


class OutboxTracer:
    """The reference's tracer: an observed event is a scheduling point, then goes to ``outbox``."""

    def __init__(self, rt: ControlledRuntime, outbox: Outbox, observed: Collection[str] | None) -> None:
        self.config: dict[str, int] | None = None
        self._point = rt.atomic_int(0, name="trace.point")
        self._outbox = outbox
        self._observed = None if observed is None else frozenset(observed)

    def begin(self, config: Any) -> None:
        self.config = dict(config)

    def emit(self, thread: str, event: str, fields: Fields) -> None:
        if self._observed is None or event in self._observed:
            self._point.load()
            self._outbox.append((thread, event, fields))


def reach_program(
    sc: LinkScenario,
    outbox: Outbox,
    *,
    observed: Collection[str] | None = None,
    build: Builder = WorkerScheduler,
) -> Program:
    """``sc`` as ``scenario.link_program`` runs it, its events sent to ``outbox``."""

    def program(rt: ControlledRuntime) -> object:
        outbox.append(START)
        tracer = OutboxTracer(rt, outbox, observed)
        holder: list[WorkerScheduler[Any]] = []
        called = [False]

        def invoke(context: object, item: object) -> None:
            if not called[0]:
                called[0] = True
                assert sc.callback_stop is not None
                result = holder[0].stop(StopMode(sc.callback_stop))
                assert result is TkResult.INVALID_STATE, f"Stop from a callback returned {result.name}"

        sched, handles = start_scheduler(sc, build, rt, tracer, None if sc.callback_stop is None else invoke)
        holder.append(sched)

        def producer(p: int) -> Callable[[], None]:
            def body() -> None:
                for k, lane in enumerate(sc.script[p]):
                    scripted_post(sched, handles, p, k, lane)

            return body

        def stopper(mode: str) -> Callable[[], None]:
            def body() -> None:
                sched.stop(StopMode(mode))

            return body

        threads = [rt.start_thread(producer(p), f"p{p}") for p in range(len(sc.script))]
        threads += [rt.start_thread(stopper(m), f"s{i}") for i, m in enumerate(sc.stops)]
        for t in threads:
            t.join()
        if not sc.stops:
            sched._pool.wait_quiescent()
            outbox.append(END)
            sched.stop(StopMode.DRAIN)
            return None
        return lambda: outbox.append(END)

    return program
