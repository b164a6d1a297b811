"""Bad input at the Akka dispatcher's public API, and the hostile callbacks the probe found
(a shutdown from receive, a raising label or tracer): refused naming it, or run, never hung or lost."""

from __future__ import annotations

import math
import threading
from typing import Any

import pytest

from reference.akka_mailbox import ActorRef, Dispatcher, Send


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("field", "arguments"),
    [
        ("throughput", {"throughput": 0}),
        ("throughput", {"throughput": -5}),
        ("throughput", {"throughput": True}),
        ("throughput", {"throughput": 2.0}),
        ("throughput", {"throughput": math.nan}),
        ("workers", {"workers": True}),
        ("workers", {"workers": 10**9}),
        ("runtime", {"runtime": "threads"}),
        ("tracer", {"tracer": object()}),
        ("on_error", {"on_error": 1}),
        ("on_dead_letter", {"on_dead_letter": 1}),
        ("item_label", {"item_label": None}),
        ("mailbox_factory", {"mailbox_factory": 7}),
    ],
)
def test_the_dispatcher_refuses_bad_arguments_naming_the_field(field: str, arguments: dict[str, Any]) -> None:
    config: dict[str, Any] = {"throughput": 1, "workers": 1, **arguments}
    with pytest.raises((TypeError, ValueError), match="^" + field):
        Dispatcher(**config)


@pytest.mark.timeout(10)
def test_spawn_and_dispatch_refuse_bad_arguments() -> None:
    d, other = Dispatcher(throughput=1, workers=1), Dispatcher(throughput=1, workers=1)
    try:
        with pytest.raises(TypeError, match=r"^receive "):
            d.spawn(5)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^name "):
            d.spawn(print, name=5)  # type: ignore[arg-type]
        foreign = other.spawn(print).mailbox
        with pytest.raises(ValueError, match="another dispatcher"):
            d.dispatch(foreign, "x")
        with pytest.raises(TypeError, match=r"^mailbox "):
            d.dispatch("mb0", "x")  # type: ignore[arg-type]
        for method in (d.suspend, d.resume, d.close):
            with pytest.raises(ValueError, match="another dispatcher"):
                method(foreign)
            with pytest.raises(TypeError, match=r"^mailbox "):
                method(None)  # type: ignore[arg-type]
    finally:
        d.shutdown()
        other.shutdown()


# -- found by the rerun of the probe (tests/fuzz/probe_bad_input/) --------------------------------


@pytest.mark.timeout(10)
def test_shutdown_from_a_receive_is_refused_instead_of_waiting_for_itself() -> None:

    seen: list[BaseException] = []
    done = threading.Event()
    dispatcher = Dispatcher(2, 1)

    def receive(msg: object) -> None:
        try:
            dispatcher.shutdown()
        except RuntimeError as exc:
            seen.append(exc)
        done.set()

    dispatcher.spawn(receive).tell("m")
    assert done.wait(5), "shutdown from receive never returned (it waited for itself)"
    assert len(seen) == 1 and "receive" in str(seen[0])
    report = dispatcher.shutdown()  # the real one, from outside, still works
    assert report.ok and report.processed == 1


@pytest.mark.timeout(10)
def test_a_raising_item_label_leaves_the_message_with_the_sender_and_shutdown_returns() -> None:

    from reference.tracing import RecordingTracer

    def label(msg: object) -> object:
        if msg == "bad":
            raise KeyError("label")
        return msg

    got: list[object] = []
    dispatcher = Dispatcher(2, 1, tracer=RecordingTracer(), item_label=label)
    ref = dispatcher.spawn(got.append)
    assert ref.tell("a") is Send.OK
    with pytest.raises(KeyError):
        ref.tell("bad")  # refused: not queued
    assert ref.tell("b") is Send.OK
    report = dispatcher.shutdown()  # before the fix: hung on a queued message never scheduled
    assert got == ["a", "b"] and report.ok and not report.dead_letters


@pytest.mark.timeout(10)
def test_a_tracer_raising_after_a_send_was_queued_still_runs_it() -> None:

    from reference.tracing import RecordingTracer

    class Tracer(RecordingTracer):
        def emit(self, thread: str, event: str, fields: Any) -> None:
            if event == "send" and fields.get("item") == "boom":
                raise RuntimeError("tracer")
            super().emit(thread, event, fields)

    got: list[object] = []
    dispatcher = Dispatcher(2, 1, tracer=Tracer())
    ref = dispatcher.spawn(got.append)
    with pytest.raises(RuntimeError):
        ref.tell("boom")  # queued before the tracer raised
    report = dispatcher.shutdown()
    assert got == ["boom"] and report.ok


@pytest.mark.timeout(10)
def test_dead_letters_are_reported_even_when_labelling_them_raises() -> None:

    from reference.tracing import RecordingTracer

    labelled = {"on": True}

    def label(msg: object) -> object:
        if not labelled["on"]:
            raise KeyError("label")
        return msg

    dispatcher = Dispatcher(2, 1, tracer=RecordingTracer(), item_label=label)
    ref: ActorRef[int] = dispatcher.spawn(lambda m: None)
    ref.suspend()  # its messages stay queued until the close
    for k in range(3):
        ref.tell(k)
    labelled["on"] = False
    assert ref.close() == [0, 1, 2]  # before the fix: the label raised after the queue was cleared
    assert dispatcher.shutdown().dead_letters == {ref.name: [0, 1, 2]}
