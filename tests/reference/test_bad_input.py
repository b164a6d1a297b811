"""Bad input at the references' public API (issue 14), the ToolKit's size rule (issue 15) and the
failed state: a fault of a scheduler's own code loses nothing and is loud."""

from __future__ import annotations

import math
import re
import threading
from typing import Any

import pytest

from reference import (
    MAX_LANES,
    MAX_SIZE,
    MAX_WORKERS,
    LaneHandle,
    LaneSpec,
    Result,
    SchedulerFailed,
    Sizing,
    StopMode,
    WorkerPool,
    WorkerScheduler,
    WorkLane,
    config_error,
    create,
)
from reference.akka_mailbox import ActorRef, Dispatcher, Send
from reference.schedule_gate import GateScheduler
from reference.schedule_gate import config_error as gate_config_error
from tests.helpers.gated import Gated

GOOD: dict[str, Any] = {"workers": 1, "lane_capacity": 4, "max_per_drain": 2}


def _noop(context: Any, item: Any) -> None:
    return None


def _lanes(n: int = 1) -> list[LaneSpec[Any]]:
    return [LaneSpec(_noop)] * n


def _refused(field: str, lanes: Any = None, **changes: Any) -> None:
    """``create`` answers INVALID_ARGUMENT and the constructor raises an error naming ``field``."""
    lanes = _lanes() if lanes is None else lanes
    config = {**GOOD, **changes}
    assert create(lanes, **config) == (Result.INVALID_ARGUMENT, None)
    assert config_error(lanes, config["workers"], config["lane_capacity"], config["max_per_drain"], None) or (
        set(changes) - {"workers", "lane_capacity", "max_per_drain"}
    )
    with pytest.raises((TypeError, ValueError), match="^" + re.escape(field)):
        WorkerScheduler(lanes, **config)


# --------------------------------------------------------------------------- Work Lane: types


@pytest.mark.timeout(10)
@pytest.mark.parametrize("budget", [2.0, 1.5, math.nan, math.inf, True, "2", None])
def test_a_budget_that_is_not_an_int_is_refused(budget: Any) -> None:
    # The lost items: 2.0 used to be accepted and kill the worker on range(2.0).
    _refused("max_per_drain", max_per_drain=budget)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("capacity", [math.nan, math.inf, 2.0, False, "4", None, -4])
def test_a_lane_capacity_that_is_not_a_size_is_refused(capacity: Any) -> None:
    _refused("lane_capacity", lane_capacity=capacity)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("workers", [True, 1.0, math.nan, "1", None, 0, -1])
def test_workers_must_be_a_positive_int(workers: Any) -> None:
    _refused("workers", workers=workers)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("field", "lanes"),
    [
        ("lanes", None),
        ("lanes", 3),
        ("lanes", "ab"),
        ("lanes", (LaneSpec(_noop) for _ in range(2))),
        ("lanes", []),
        ("lanes[0]", [object()]),
        ("lanes[0]", [_noop]),
        ("lanes[1].invoke", [LaneSpec(_noop), LaneSpec(5)]),  # type: ignore[arg-type]
    ],
)
def test_lanes_must_be_lane_specs_with_callable_invokes(field: str, lanes: Any) -> None:
    if lanes is None:
        assert create(None, **GOOD) == (Result.INVALID_ARGUMENT, None)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^lanes "):
            WorkerScheduler(None, **GOOD)  # type: ignore[arg-type]
        return
    _refused(field, lanes=lanes)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("field", "option"),
    [
        ("runtime", {"runtime": object()}),
        ("tracer", {"tracer": object()}),
        ("on_error", {"on_error": 5}),
        ("on_discard", {"on_discard": "log"}),
        ("item_label", {"item_label": 1}),
        ("lane_factory", {"lane_factory": None}),
        ("pool_factory", {"pool_factory": 3}),
        ("sizing", {"sizing": "checking"}),
        ("ready_capacity", {"ready_capacity": 2.0}),
    ],
)
def test_every_option_of_a_wrong_type_is_refused(field: str, option: dict[str, Any]) -> None:
    assert create(_lanes(), **GOOD, **option) == (Result.INVALID_ARGUMENT, None)
    with pytest.raises(TypeError, match="^" + field):
        WorkerScheduler(_lanes(), **GOOD, **option)


@pytest.mark.timeout(10)
def test_create_never_raises_for_an_unknown_option_or_a_plug_in_that_does_not_fit() -> None:
    assert create(_lanes(), **GOOD, bogus=1) == (Result.INVALID_ARGUMENT, None)
    assert create(_lanes(), **GOOD, lane_factory=lambda: None) == (Result.INVALID_ARGUMENT, None)


# --------------------------------------------------------------------------- Work Lane: limits


@pytest.mark.timeout(10)
def test_huge_arguments_are_refused_at_once_not_allocated() -> None:
    _refused("lanes", lanes=range(2**70))  # its len() overflows: still a clear error
    _refused("lanes", lanes=[LaneSpec(_noop)] * (MAX_LANES + 1))
    _refused("workers", workers=MAX_WORKERS + 1)
    _refused("workers", workers=10**9)
    _refused("lane_capacity", lane_capacity=MAX_SIZE * 2)
    _refused("max_per_drain", max_per_drain=MAX_SIZE + 1)
    _refused("max_per_drain", max_per_drain=10**5000)  # past the int-to-str limit: the message still works
    _refused("ready_capacity", ready_capacity=2**70)


# --------------------------------------------------------------------------- Work Lane: ToolKit sizes


@pytest.mark.timeout(10)
@pytest.mark.parametrize("capacity", [1, 3, 6, 100])
def test_lane_capacity_must_be_a_power_of_two_of_at_least_two(capacity: int) -> None:
    _refused("lane_capacity", lane_capacity=capacity)


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("lanes", "ready"), [(1, 1), (2, 3), (3, 6), (3, 2)])
def test_ready_capacity_must_be_a_power_of_two_holding_every_lane(lanes: int, ready: int) -> None:
    _refused("ready_capacity", lanes=_lanes(lanes), ready_capacity=ready)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("capacity", [2, 4, 1024])
def test_powers_of_two_are_accepted(capacity: int) -> None:
    result, scheduler = create(
        _lanes(3), workers=1, lane_capacity=capacity, max_per_drain=1, ready_capacity=4
    )
    assert result is Result.SUCCESS and scheduler is not None
    assert scheduler.stop() is Result.SUCCESS


@pytest.mark.timeout(10)
def test_checking_sizes_accept_the_specs_small_sizes_and_nothing_wrong() -> None:
    small: dict[str, Any] = {
        "workers": 1,
        "lane_capacity": 1,
        "max_per_drain": 1,
        "ready_capacity": 3,
        "sizing": Sizing.CHECKING,
    }
    result, scheduler = create(_lanes(3), **small)
    assert result is Result.SUCCESS and scheduler is not None
    assert scheduler.config.as_trace_config()["ready_capacity"] == 3
    assert scheduler.stop() is Result.SUCCESS
    for bad in ({"lane_capacity": 0}, {"lane_capacity": 1.0}, {"ready_capacity": 2}, {"workers": True}):
        assert create(_lanes(3), **{**small, **bad}) == (Result.INVALID_ARGUMENT, None)


# --------------------------------------------------------------------------- Work Lane: methods


@pytest.mark.timeout(10)
def test_stop_refuses_anything_but_a_stop_mode_and_keeps_running() -> None:
    seen: list[Any] = []
    scheduler = WorkerScheduler([LaneSpec(lambda c, i: seen.append(i))], **GOOD)
    for mode in ("discard", "bogus", None, 42, "drain", StopMode.DRAIN.value):
        assert scheduler.stop(mode) is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
        assert scheduler.running
    handle = scheduler.get_lane(0)[1]
    assert scheduler.try_post(handle, 1) is Result.SUCCESS
    assert scheduler.stop(StopMode.DISCARD) is Result.SUCCESS
    assert scheduler.stopped


@pytest.mark.timeout(10)
def test_a_bool_or_float_never_names_a_lane() -> None:
    seen: list[Any] = []
    scheduler = WorkerScheduler([LaneSpec(lambda c, i: seen.append(i))] * 2, **GOOD)
    try:
        for index in (True, False, 0.0, 1.0, "0", None, 2**70):
            assert scheduler.get_lane(index) == (Result.INVALID_ARGUMENT, LaneHandle())  # type: ignore[arg-type]
        for lane in (True, 0.0, 1.0, "1", None, 2**70):
            assert scheduler.try_post(LaneHandle(scheduler, lane), "x") is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    finally:
        assert scheduler.stop() is Result.SUCCESS
    assert seen == []


# --------------------------------------------------------------------------- the failed state


class _BudgetTurnsFloatLane(WorkLane[Any]):
    """The issue's fault, injected now that the constructor refuses it: range(2.0) in the drain."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.budget = 2.0  # type: ignore[assignment]


class _EndDrainRaisesLane(WorkLane[Any]):
    def _end_drain(self, invoked: int) -> bool:
        raise RuntimeError("end of drain broke")


class _TakeRaisesPool(WorkerPool):
    def _take(self, finished: bool) -> Any:
        if finished:  # the worker's loop breaks after its first work item
            raise RuntimeError("the pool's loop broke")
        return super()._take(finished)


class _QuiescenceRaisesPool(WorkerPool):
    def wait_quiescent(self) -> None:
        raise RuntimeError("stop's wait broke")


def _posted(scheduler: WorkerScheduler[Any], items: int, lanes: int = 1) -> list[Any]:
    accepted = []
    for k in range(items):
        handle = scheduler.get_lane(k % lanes)[1]
        if scheduler.try_post(handle, k) is Result.SUCCESS:
            accepted.append(k)
    return accepted


def _wait_failed(scheduler: Any) -> None:
    deadline = threading.Event()
    for _ in range(500):
        if scheduler.failed:
            return
        deadline.wait(0.01)
    raise AssertionError("the scheduler never failed")


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "options",
    [
        {"lane_factory": _BudgetTurnsFloatLane},
        {"lane_factory": _EndDrainRaisesLane},
        {"pool_factory": _TakeRaisesPool},
    ],
    ids=["budget-turns-float", "end-drain-raises", "pool-loop-raises"],
)
def test_a_fault_of_the_schedulers_own_code_fails_it_loudly_and_loses_nothing(
    options: dict[str, Any],
) -> None:
    invoked: list[Any] = []
    discarded: list[tuple[int, Any]] = []
    scheduler = WorkerScheduler(
        [LaneSpec(lambda c, i: invoked.append(i))] * 2,
        workers=1,
        lane_capacity=4,
        max_per_drain=2,
        on_discard=lambda lane, item: discarded.append((lane, item)),
        **options,
    )
    accepted = _posted(scheduler, 6, lanes=2)
    assert accepted  # the posts before the fault were accepted
    _wait_failed(scheduler)
    assert not scheduler.running
    assert scheduler.try_post(scheduler.get_lane(0)[1], "late") is Result.INVALID_ARGUMENT  # no handle
    assert scheduler.get_lane(0)[0] is Result.INVALID_STATE
    assert scheduler.stop(StopMode.DRAIN) is Result.UNKNOWN
    failure = scheduler.failure
    assert failure is not None and isinstance(failure.error, TypeError | RuntimeError)
    assert failure.discarded == discarded
    # Every accepted item was invoked or reported; none twice.
    assert sorted(invoked + [item for _, item in discarded]) == accepted
    assert scheduler.stopped and scheduler.stop() is Result.UNKNOWN  # stays failed


@pytest.mark.timeout(20)
def test_a_post_after_the_failure_is_refused_with_invalid_state() -> None:
    scheduler = WorkerScheduler(_lanes(2), **GOOD, lane_factory=_EndDrainRaisesLane)
    handle = scheduler.get_lane(1)[1]
    assert scheduler.try_post(scheduler.get_lane(0)[1], "a") is Result.SUCCESS
    _wait_failed(scheduler)
    assert scheduler.try_post(handle, "b") is Result.INVALID_STATE
    assert scheduler.stop() is Result.UNKNOWN


@pytest.mark.timeout(20)
def test_without_on_discard_the_failure_keeps_the_items() -> None:
    scheduler = WorkerScheduler(
        _lanes(), workers=1, lane_capacity=4, max_per_drain=2, lane_factory=_BudgetTurnsFloatLane
    )
    accepted = _posted(scheduler, 4)
    assert accepted == [0, 1, 2, 3]
    assert scheduler.stop() is Result.UNKNOWN
    assert scheduler.failure is not None
    assert [item for _, item in scheduler.failure.discarded] == accepted


@pytest.mark.timeout(20)
def test_a_fault_during_stop_joins_the_workers_and_reports_the_items() -> None:
    invoke: Gated[Any] = Gated(timeout=5)
    scheduler = WorkerScheduler([LaneSpec(invoke)], **GOOD, pool_factory=_QuiescenceRaisesPool)
    accepted = _posted(scheduler, 3)
    invoke.gate.set()
    assert scheduler.stop(StopMode.DRAIN) is Result.UNKNOWN
    failure = scheduler.failure
    assert failure is not None and "stop's wait broke" in str(failure.error)
    assert sorted(invoke.seen + [item for _, item in failure.discarded]) == accepted


@pytest.mark.timeout(20)
def test_a_fault_while_stop_waits_does_not_hang_it() -> None:
    invoke: Gated[Any] = Gated(timeout=5)
    scheduler = WorkerScheduler([LaneSpec(invoke)], **GOOD, lane_factory=_EndDrainRaisesLane)
    accepted = _posted(scheduler, 3)
    assert invoke.started.wait(5)
    results: list[Result] = []
    stopper = threading.Thread(target=lambda: results.append(scheduler.stop(StopMode.DRAIN)))
    stopper.start()
    invoke.gate.set()  # the drain ends, and its end raises while Stop waits for a quiet pool
    stopper.join(10)
    assert results == [Result.UNKNOWN]
    assert scheduler.failure is not None
    assert len(scheduler.failure.discarded) == len(accepted) - 2  # the first drain ran two


@pytest.mark.timeout(20)
def test_leaving_a_with_block_of_a_failed_scheduler_raises() -> None:
    scheduler = WorkerScheduler(_lanes(), **GOOD, lane_factory=_BudgetTurnsFloatLane)
    with pytest.raises(SchedulerFailed, match="1 accepted items") as info, scheduler:
        _posted(scheduler, 1)
        _wait_failed(scheduler)
    assert isinstance(info.value.__cause__, TypeError)


# --------------------------------------------------------------------------- Schedule Gate


def _handler(event: object) -> None:
    return None


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("field", "arguments"),
    [
        ("actors", {"actors": None}),
        ("actors", {"actors": []}),
        ("actors", {"actors": range(2**70)}),
        ("actors", {"actors": [_handler] * (MAX_LANES + 1)}),
        ("actors[0]", {"actors": [5]}),
        ("permits", {"permits": True}),
        ("permits", {"permits": 0}),
        ("permits", {"permits": 2.0}),
        ("workers", {"workers": 10**9}),
        ("workers", {"workers": True}),
        ("mailbox_capacity", {"mailbox_capacity": math.nan}),
        ("mailbox_capacity", {"mailbox_capacity": math.inf}),
        ("max_per_drain", {"max_per_drain": -1}),
        ("max_per_drain", {"max_per_drain": 1.5}),
        ("runtime", {"runtime": object()}),
        ("tracer", {"tracer": 1}),
        ("on_error", {"on_error": "log"}),
        ("on_discard", {"on_discard": 3}),
    ],
)
def test_the_gate_refuses_bad_arguments_naming_the_field(field: str, arguments: dict[str, Any]) -> None:
    config: dict[str, Any] = {"actors": [_handler], "permits": 1, "workers": 1, **arguments}
    actors = config.pop("actors")
    with pytest.raises((TypeError, ValueError), match="^" + re.escape(field)):
        GateScheduler(actors, **config)
    if set(arguments) <= {"actors", "permits", "workers", "mailbox_capacity", "max_per_drain"}:
        merged = {"mailbox_capacity": 1, "max_per_drain": 1, **config}
        message = gate_config_error(
            actors, merged["permits"], merged["workers"], merged["mailbox_capacity"], merged["max_per_drain"]
        )
        assert message is not None and message.startswith(field)


@pytest.mark.timeout(10)
def test_the_gate_refuses_a_bool_actor() -> None:
    ran: list[object] = []
    sched: GateScheduler[str] = GateScheduler([ran.append, ran.append], permits=1, workers=1)
    try:
        for actor in (True, False, 0.0, "0", None, 2, -1):
            assert sched.post(actor, "x") is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^actor "):
            sched.queued(True)
        with pytest.raises(ValueError, match=r"^actor "):
            sched.gate(2)
    finally:
        assert sched.stop() is Result.SUCCESS
    assert ran == []


class _DrainEndRaisesGate(GateScheduler[Any]):
    @staticmethod
    def _drain_end_word(old: int, budget_spent: bool) -> Any:
        raise RuntimeError("the drain's decision broke")


@pytest.mark.timeout(20)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_gate_fault_fails_it_loudly_and_loses_nothing() -> None:
    ran: list[object] = []
    discarded: list[tuple[int, object]] = []
    sched = _DrainEndRaisesGate(
        [ran.append, ran.append],
        permits=2,
        workers=2,
        mailbox_capacity=8,
        max_per_drain=1,
        on_discard=lambda actor, event: discarded.append((actor, event)),
    )
    accepted = [k for k in range(6) if sched.post(k % 2, k) is Result.SUCCESS]
    _wait_failed(sched)
    assert sched.post(0, "late") is Result.INVALID_STATE
    assert sched.stop() is Result.UNKNOWN
    assert sched.failure is not None and sched.failure.discarded == discarded
    assert sorted([*ran, *(e for _, e in discarded)]) == accepted  # type: ignore[type-var]
    assert sched.stop() is Result.UNKNOWN


# --------------------------------------------------------------------------- Akka mailbox


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


@pytest.mark.timeout(20)
def test_a_dispatcher_fault_fails_it_loudly_and_loses_nothing() -> None:
    from reference.akka_mailbox import Mailbox

    class IdleRaisesMailbox(Mailbox[Any]):
        def set_as_idle(self, processed: int) -> None:
            raise RuntimeError("set_as_idle broke")

    got: list[Any] = []
    d = Dispatcher(
        throughput=1,
        workers=1,
        mailbox_factory=lambda dispatcher, index, name, receive: IdleRaisesMailbox(
            dispatcher, index, name, receive
        ),
    )
    ref = d.spawn(got.append)
    sent = [k for k in range(5) if ref.tell(k) is Send.OK]
    _wait_failed_dispatcher(d)
    assert ref.tell("late") is Send.DEAD_LETTER
    report = d.shutdown()
    assert not report.ok and isinstance(report.failure, RuntimeError)
    dead = report.dead_letters[ref.name]
    assert sorted([*got, *(m for m in dead if m != "late")]) == sent


def _wait_failed_dispatcher(d: Dispatcher) -> None:
    pause = threading.Event()
    for _ in range(500):
        if d.failure is not None:
            return
        pause.wait(0.01)
    raise AssertionError("the dispatcher never failed")


# -- found by the rerun of the probe (tests/fuzz/probe_bad_input.py) --------------------------------


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
