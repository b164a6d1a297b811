"""``logged_as_steps``: with each event a step of its own, the harness stops a thread between a
change and the event that logs it, and finds a reader that acts on the change before the log has
it. Without it, that window is inside one step and no search can see it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, check
from model_checks.harness.logged_steps import logged_as_steps
from model_checks.harness.runtime import ControlledRuntime
from reference.tracing import RecordingTracer

pytestmark = pytest.mark.timeout(60)


def publish_then_observe(*, stepped: bool, reader_locks: bool) -> Callable[[ControlledRuntime], object]:
    """A writer sets a flag and logs ``set`` under a lock; a reader reads the flag (under that lock,
    or not) and logs ``saw`` when it is up. The log must never show ``saw`` before ``set``."""

    def program(rt: ControlledRuntime) -> object:
        recorded = RecordingTracer()
        tracer = logged_as_steps(rt, recorded) if stepped else recorded
        rt.trace(lambda: list(recorded.events()))
        lock, flag = rt.lock(name="L"), rt.atomic_int(0, name="flag")

        def writer() -> None:
            with lock:
                flag.store(1)
                tracer.emit("writer", "set", {})

        def reader() -> None:
            if reader_locks:
                with lock:
                    up = flag.load()
            else:
                up = flag.load()
            if up:
                tracer.emit("reader", "saw", {})

        rt.start_thread(writer, "writer")
        rt.start_thread(reader, "reader")

        def final() -> tuple[str, ...]:
            order = tuple(e["event"] for e in recorded.events())
            assert order[:1] != ("saw",), f"the log says the reader saw the flag before it was set: {order}"
            return order

        return final

    return program


@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_events_as_steps_find_a_reader_that_acts_before_the_log(backend: str) -> None:
    opts = Options(strategy="dpor", backend=backend)  # type: ignore[arg-type]
    found = check(publish_then_observe(stepped=True, reader_locks=False), opts)
    assert found.failure is not None and found.failure.kind == "assertion", found.report()
    assert "before it was set" in found.failure.message
    assert found.failure.preemptions == 1  # minimised: stop the writer once, between store and log


def test_without_events_as_steps_the_window_is_inside_one_step() -> None:
    unstepped = check(publish_then_observe(stepped=False, reader_locks=False), Options(strategy="dpor"))
    assert unstepped.verdict == "exhaustive", unstepped.report()
    assert unstepped.outcomes == {("set",), ("set", "saw")}


def test_a_reader_under_the_writers_lock_is_proved_with_events_as_steps() -> None:
    fixed = check(publish_then_observe(stepped=True, reader_locks=True), Options(strategy="dpor"))
    assert fixed.verdict == "exhaustive", fixed.report()
    assert fixed.outcomes == {("set",), ("set", "saw")}


def test_the_wrapper_passes_begin_and_every_event_through_in_order() -> None:
    def program(rt: ControlledRuntime) -> object:
        recorded = RecordingTracer()
        tracer = logged_as_steps(rt, recorded)
        tracer.begin({"workers": 1})
        tracer.emit("main", "a", {"n": 1})
        tracer.emit("main", "b", {})
        events = tuple((e["seq"], e["event"], e.get("n")) for e in recorded.events())
        return lambda: (str(recorded.config), events)

    result = check(program, Options(strategy="dpor"))
    assert result.verdict == "exhaustive"
    assert result.outcomes == {("{'workers': 1}", ((1, "a", 1), (2, "b", None)))}
