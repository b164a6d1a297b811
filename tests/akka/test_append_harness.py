"""Every trace the reference writes under the harness's scheduler, on small scenarios, validates with
its ``append`` events and without them: the order of the appends in the trace is the queue's
(``Mailbox._append_traced``), whatever the interleaving with runners, cleanUps and re-checks."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import pytest

from model_checks.designs.akka_mailbox.reference_mutants import Build, program
from model_checks.designs.akka_mailbox.trace import validate, without_append_events
from model_checks.harness import Options, check
from model_checks.harness.logged_steps import logged_as_steps
from reference.akka_actor import OPEN, SCHEDULED, SHOULD_SCHEDULE_MASK
from reference.akka_mailbox import Dispatcher, Mailbox
from reference.tracing import RecordingTracer
from spec.akka_mailbox import Constants

pytestmark = pytest.mark.timeout(300)

# Two senders append to one mailbox while a run pops and a close cleans up: the appends race
# each other, the runner's pops and re-checks, and the cleanUp.
RACING = Constants(mailboxes=1, workers=1, throughput=2, script=((0, 0), (0,)), supervise=((("close", 0),),))
# Two senders, two mailboxes, two workers, a suspend and a resume.
SPREAD = Constants(
    mailboxes=2,
    workers=2,
    throughput=1,
    script=((0, 1), (0,)),
    supervise=((("suspend", 0), ("resume", 0)),),
)


def judged_run(
    c: Constants,
    dispatcher: Build,
    wrap: Callable[[RecordingTracer, Any], Any],
    judge: Callable[[Mapping[str, Any], list[dict[str, Any]]], None],
) -> Callable[[Any], object]:
    """``program(c)`` on ``dispatcher``, its tracer wrapped by ``wrap(tracer, runtime)``, whose final
    check also hands the run's header config and events to ``judge``."""
    made: list[tuple[Dispatcher, RecordingTracer]] = []

    def build(*args: Any, tracer: RecordingTracer, runtime: Any, **kwargs: Any) -> Dispatcher:
        d = dispatcher(*args, tracer=wrap(tracer, runtime), runtime=runtime, **kwargs)
        made.append((d, tracer))
        return d

    inner = program(c, build)

    def test(rt: Any) -> object:
        made.clear()
        final = inner(rt)

        def check_final() -> object:
            out = final()  # type: ignore[operator]
            d, tracer = made[0]
            judge(d.config(), tracer.events())
            return out

        return check_final

    return test


def validating(
    c: Constants, seen: list[int], dispatcher: Build = Dispatcher, *, yielding: bool = True
) -> Callable[[Any], object]:
    """``program(c)`` whose final check also validates the run's trace in both formats;
    ``yielding``: each event a step of its own (``harness.logged_steps``: under real threads another
    thread may run between a step and its ``emit``, which the harness otherwise never shows)."""

    def judge(config: Mapping[str, Any], events: list[dict[str, Any]]) -> None:
        validate(config, events, complete=True)
        validate(*without_append_events(config, events), complete=True)
        seen[0] += 1
        seen[1] += any(e["event"] == "append" for e in events)

    return judged_run(c, dispatcher, _each_event_a_step if yielding else (lambda tracer, rt: tracer), judge)


def _each_event_a_step(tracer: RecordingTracer, rt: Any) -> Any:
    return logged_as_steps(rt, tracer)


def test_every_trace_of_appends_racing_pops_and_a_close_validates_in_both_formats() -> None:
    """The first 1,000 schedules within one preemption, each event a step of its own, and 500 PCT
    schedules (bounded: a sample, not a proof)."""
    for options in (
        Options(preemption_bound=1, max_executions=1_000),
        Options(strategy="pct", seed=7, max_executions=500),
    ):
        seen = [0, 0]  # traces validated, of which with an append
        result = check(validating(RACING, seen), options)
        assert result.failure is None, result.summary()
        assert seen[0] == result.executions >= 500 and seen[1] > 100, seen


def test_scheduled_traces_with_a_suspension_validate_in_both_formats() -> None:
    """With a scheduling point before each ``emit``: a ``resume`` CAS read by a runner before its
    event is logged must not put the runner's ``process`` ahead of the ``resume`` (``process`` is
    logged under the trace lock too; without that, execution 2,214 of this search was refused)."""
    seen = [0, 0]
    result = check(validating(SPREAD, seen), Options(preemption_bound=1, max_executions=2_500))
    assert result.failure is None, result.summary()
    assert seen[0] == result.executions == 2_500 and seen[1] > 1_000


class AppendLoggedAfterTheTraceLock(Mailbox[Any]):
    """The append under the trace lock and its event after it: a runner or a cleanUp may take the
    message out and log it in between, so the trace shows it taken before its append."""

    def _append_traced(self, msg: Any, label: Any, trace_lock: Any) -> None:
        with trace_lock:
            self.queue.append(msg)
        self._emit("append", {"mailbox": self.index, "item": label})


def test_an_append_logged_after_the_trace_lock_is_caught() -> None:
    """The check above can fail: with the event outside the lock, some schedule's trace is refused."""
    seen = [0, 0]
    made = validating(RACING, seen, partial(Dispatcher, mailbox_factory=AppendLoggedAfterTheTraceLock))
    result = check(made, Options(preemption_bound=1, max_executions=2_000))
    assert result.failure is not None, result.summary()
    # a process or a cleanUp's dead_letter of the message logged before its append
    assert result.failure.kind == "exception" and "TraceRejected" in result.failure.details


# A resume races the worker's re-registration, then the supervisor closes another mailbox: the
# smallest scenario in which a registration that finds the word taken, and logs nothing, lets its
# thread log on another mailbox (found by a survey of the designs with each event a step).
RESUME_THEN_CLOSE = Constants(
    mailboxes=2,
    workers=1,
    throughput=1,
    script=((0,),),
    supervise=((("suspend", 0), ("resume", 0), ("close", 1)),),
)


class ReadsTheWordOutsideTheTraceLock(Mailbox[Any]):
    """The registration's reads of the word before session 31: outside the trace lock. A worker's
    ``schedule`` CAS made and not yet logged, the supervisor's registration reads the word taken,
    logs nothing and closes mailbox 1: its ``close`` comes before the ``schedule`` in the log."""

    def set_as_scheduled(self) -> bool:
        while True:
            s = self.status.load()
            if s & SHOULD_SCHEDULE_MASK != OPEN:
                return False
            if self._cas(s, s | SCHEDULED, "schedule", {"mailbox": self.index}):
                return True

    def can_be_scheduled(self, has_message_hint: bool) -> bool:
        return self._schedulable(has_message_hint)

    def logged_word(self) -> int:
        return self.status.load()


def each_event_a_step(c: Constants, dispatcher: Build) -> Callable[[Any], object]:
    """``program(c)`` with each event a step of its own (``harness.logged_steps``), its final check
    validating the trace (each distinct trace once: most executions repeat one)."""
    judged: set[tuple[str, ...]] = set()

    def judge(config: Mapping[str, Any], events: list[dict[str, Any]]) -> None:
        key = tuple(repr(sorted((k, v) for k, v in e.items() if k != "seq")) for e in events)
        if key not in judged:
            judged.add(key)
            validate(config, events, complete=True)

    return judged_run(c, dispatcher, lambda tracer, rt: logged_as_steps(rt, tracer), judge)


def test_with_each_event_a_step_a_registration_reading_outside_the_trace_lock_is_caught() -> None:
    bug = partial(Dispatcher, mailbox_factory=ReadsTheWordOutsideTheTraceLock)
    result = check(each_event_a_step(RESUME_THEN_CLOSE, bug), Options(strategy="dpor", time_limit=240))
    assert result.failure is not None, result.summary()
    assert "TraceRejected" in result.failure.details
    assert "s0 close {'mailbox': 1}" in result.failure.message, result.failure.message


def test_with_each_event_a_step_the_registrations_under_the_trace_lock_validate() -> None:
    """Bounded (the first 3,000 executions of the search that finds the bug above at about 6,800;
    150 s of it, 54,545 executions, refused none of 78 distinct traces), not a proof."""
    result = check(each_event_a_step(RESUME_THEN_CLOSE, Dispatcher), Options(max_executions=3_000))
    assert result.failure is None, result.summary()
    assert result.verdict == "bounded" and result.executions == 3_000
