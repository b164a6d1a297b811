"""A surplus permit may go back after its actor went Idle again: the spec allows what the reference does.

A producer whose CAS from Idle lost holds a surplus permit and returns it with a separate atomic
increment; meanwhile the actor's drain may end and send it Idle. The spec once folded the failed
CAS and the release into one step (enabled only on a runnable gate) and refused real-thread traces
of the reference at that release (the fixture, trimmed from one: its seq 12 was seq 16602).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance.validator import validate_lines
from model_checks.designs.schedule_gate.configs import CONFIGS
from model_checks.designs.schedule_gate.scenarios import gate_program
from model_checks.harness import Options, check
from model_checks.harness.runtime import ControlledRuntime
from reference.schedule_gate import GateScheduler, header
from reference.tracing import RecordingTracer
from spec import schedule_gate as sg
from tests.helpers.spec_walk import steps

FIXTURE = Path(__file__).parent / "fixtures" / "surplus_after_idle.jsonl"
SURPLUS_SEQ = 12  # p3 permit_release surplus, after w1's drain sent actor 10 Idle (seq 10, 11)


def fixture_events() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    head, *events = (json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines())
    return head["config"], events


def lines_of(config: dict[str, Any], events: list[dict[str, Any]]) -> list[str]:
    numbered = [{**e, "seq": n} for n, e in enumerate(events, start=1)]
    return [json.dumps(header(config))] + [json.dumps(e) for e in numbered]


def test_the_refused_real_thread_trace_is_a_complete_behaviour() -> None:
    config, events = fixture_events()
    release = events[SURPLUS_SEQ - 1]
    assert (release["thread"], release["event"], release["reason"]) == ("p3", "permit_release", "surplus")
    verdict = validate_lines(lines_of(config, events))
    assert verdict.code == 0 and not verdict.prefix, verdict.message


def test_a_surplus_release_with_no_lost_cas_is_refused() -> None:
    """p3's gate stays Idle from its permit_acquire to its release: its CAS could not have lost."""
    config, events = fixture_events()
    acquire = {**events[3], "actor": 11}  # p3's permit_acquire, for an actor nobody else posts to
    release = {"thread": "p3", "event": "permit_release", "actor": 11, "reason": "surplus"}
    early = [*events[:3], acquire, release]
    verdict = validate_lines(lines_of(config, early))
    assert verdict.code == 1 and verdict.seq == 5 and verdict.rule == 1, verdict.message
    assert "surplus" in verdict.message and "Idle" in verdict.message, verdict.message


def test_a_surplus_permit_goes_back_once() -> None:
    config, events = fixture_events()
    twice = [*events[:SURPLUS_SEQ], events[SURPLUS_SEQ - 1], *events[SURPLUS_SEQ:]]
    verdict = validate_lines(lines_of(config, twice))
    assert verdict.code == 1 and verdict.seq == SURPLUS_SEQ + 1 and verdict.rule == 1, verdict.message


def test_a_second_permit_before_the_surplus_goes_back_is_refused() -> None:
    """p3 holds the permit of seq 4 (its CAS lost or not yet tried): it cannot take another."""
    config, events = fixture_events()
    kept = [e for n, e in enumerate(events, start=1) if n != SURPLUS_SEQ]
    verdict = validate_lines(lines_of(config, kept))
    assert verdict.code == 1 and verdict.seq == SURPLUS_SEQ and verdict.rule == 1, verdict.message


@pytest.mark.timeout(60)
def test_small_releases_a_surplus_on_an_idle_gate() -> None:
    """The spec has the behaviour: in `small`, some ReleaseSurplus fires while its actor is Idle."""
    for state, t in steps(sg.SPEC, CONFIGS["small"]):
        fields = t.fields or {}
        if t.action.name == "ReleaseSurplus" and state.gate[fields["actor"]] == sg.IDLE_GATE:
            return
    pytest.fail("no ReleaseSurplus on an Idle gate in `small`")


class _Witness(Exception):
    """The execution released a surplus permit on an Idle gate, and its trace validated."""


def _surplus_on_idle(events: list[dict[str, Any]]) -> bool:
    """Whether some permit_release surplus comes while its actor's gate is Idle (in trace order)."""
    runnable: set[int] = set()
    for e in events:
        kind = e["event"]
        if kind == "admit_begin" and e["permit"]:
            runnable.add(e["actor"])
        elif kind in ("admit_end", "drain_end") and e["directive"] == sg.RELEASE:
            runnable.discard(e["actor"])
        elif kind == "permit_release" and e["reason"] == "surplus" and e["actor"] not in runnable:
            return True
    return False


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_the_reference_under_the_harness_releases_a_surplus_on_an_idle_gate() -> None:
    """Two producers, two permits: the search reaches the interleaving, and its trace validates."""
    built: list[GateScheduler[Any]] = []

    def build(*args: Any, **kwargs: Any) -> GateScheduler[Any]:
        built.append(GateScheduler(*args, **kwargs))
        return built[-1]

    inner = gate_program(build, permits=2, validate=True)

    def program(rt: ControlledRuntime) -> object:
        final = inner(rt)

        def checked() -> object:
            outcome = final()  # type: ignore[operator]
            tracer = built[-1]._tracer
            assert isinstance(tracer, RecordingTracer)
            if _surplus_on_idle(list(tracer.events())):
                raise _Witness
            return outcome

        return checked

    result = check(program, Options(strategy="random", seed=1, max_executions=20_000, time_limit=200))
    assert result.failure is not None, f"the interleaving was not reached: {result.figures()}"
    assert "_Witness" in result.failure.message, result.failure.message
