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


class YieldingTracer:
    """The program's tracer with a scheduling point before each event: under real threads another
    thread may run between a step and its ``emit`` (the GIL passes anywhere), which the harness
    otherwise never shows (an ``emit`` is no synchronisation)."""

    def __init__(self, inner: RecordingTracer, rt: Any) -> None:
        self.inner = inner
        self.rt = rt

    def begin(self, config: Mapping[str, int]) -> None:
        self.inner.begin(config)

    def emit(self, thread: str, event: str, fields: dict[str, Any]) -> None:
        self.rt.yield_point("emit")
        self.inner.emit(thread, event, fields)


def validating(
    c: Constants, seen: list[int], dispatcher: Build = Dispatcher, *, yielding: bool = True
) -> Callable[[Any], object]:
    """``program(c)`` whose final check also validates the run's trace in both formats;
    ``yielding``: through a ``YieldingTracer``."""
    made: list[Dispatcher] = []

    def build(*args: Any, tracer: RecordingTracer, runtime: Any, **kwargs: Any) -> Dispatcher:
        shown = YieldingTracer(tracer, runtime) if yielding else tracer
        d = dispatcher(*args, tracer=shown, runtime=runtime, **kwargs)
        made.append(d)
        return d

    inner = program(c, build)

    def test(rt: Any) -> object:
        made.clear()
        final = inner(rt)

        def check_final() -> object:
            out = final()  # type: ignore[operator]
            d = made[0]
            tracer = d.tracer.inner if isinstance(d.tracer, YieldingTracer) else d.tracer
            events = tracer.events()  # type: ignore[union-attr]
            validate(d.config(), events, complete=True)
            validate(*without_append_events(d.config(), events), complete=True)
            seen[0] += 1
            seen[1] += any(e["event"] == "append" for e in events)
            return out

        return check_final

    return test


def test_every_trace_of_appends_racing_pops_and_a_close_validates_in_both_formats() -> None:
    """The first 1,000 schedules within one preemption (of about 21,000), a scheduling point
    before each ``emit`` included, and 500 PCT schedules."""
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
