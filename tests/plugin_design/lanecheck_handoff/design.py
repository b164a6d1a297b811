"""Everything lanecheck knows about the handoff: the ``Design`` its entry point names."""

from __future__ import annotations

from typing import Any

from model_checks.design import Design, Program, Scenario, SpecMutant
from spec.language import variant

from . import reference
from .spec import SPEC, Constants, Vars


def CheckThenWait(c: Constants, s: Vars, w: str) -> object:
    """BUG: the consumer finds the box empty, lets go of the lock, and only then waits."""
    if s.consumer == "check" and s.box is None:
        return s._replace(consumer="going-to-wait")
    if s.consumer == "going-to-wait":
        return s._replace(consumer="waiting")
    return None


class CheckThenWaitHandoff(reference.Handoff):
    """The same bug in code: the empty check and the wait in two critical sections."""

    def _wait_empty(self) -> None:
        self._changed.release()  # lets go after seeing the box empty ...
        self._changed.acquire()
        self._changed.wait()  # ... and waits without looking again


def handoff_program(cls: type[reference.Handoff], items: int = 2) -> Program:
    def program(rt: Any) -> object:
        box = cls(rt)
        got: list[Any] = []

        def produce() -> None:
            for i in range(items):
                box.put(i)

        def consume() -> None:
            for _ in range(items):
                got.append(box.take())

        threads = [rt.start_thread(produce, "producer"), rt.start_thread(consume, "consumer")]
        for t in threads:
            t.join()

        def final() -> None:
            assert got == list(range(items)), f"the consumer got {got}"

        return final

    return program


DESIGN = Design(
    name="handoff",
    spec=SPEC,
    configs={"small": Constants(items=1), "standard": Constants(items=2)},
    mutants={
        "check-then-wait": SpecMutant(
            "check-then-wait",
            "the consumer's empty check and its wait in separate critical sections",
            variant(SPEC, "check-then-wait", replace_actions={"Wait": CheckThenWait}),
            expect="Deadlock",
            length=3,
        )
    },
    summary="a two-thread handoff through a one-slot box (the plug-in example)",
    trace_format="lanecheck_handoff.trace:FORMAT",
    scenarios={
        "producer-consumer": Scenario("producer-consumer", lambda: handoff_program(reference.Handoff)),
        "check-then-wait": Scenario(
            "check-then-wait", lambda: handoff_program(CheckThenWaitHandoff), expect="deadlock"
        ),
    },
)
