"""The work-stealing reference under real threads: API, argument errors, Stop, exceptions, fork/join."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from reference.global_queue_pool import GlobalQueuePool
from reference.global_queue_pool import create as create_global
from reference.results import Result
from reference.runtime import ThreadingRuntime
from reference.scheduler import StopMode
from reference.tracing import RecordingTracer
from reference.work_stealing import (
    PoolBase,
    TaskDiscarded,
    TaskFailed,
    TaskHandle,
    WorkStealingPool,
    create,
    header,
)
from reference.work_stealing_deque import ABORT, EMPTY, LOST, OK, ChaseLevDeque

POOLS = [WorkStealingPool, GlobalQueuePool]
pytestmark = pytest.mark.timeout(60)


def fib(pool: PoolBase, n: int) -> int:
    if n < 2:
        return n
    left = pool.spawn(lambda: fib(pool, n - 1))
    joined: int = pool.join(left)
    return fib(pool, n - 2) + joined


# -- the deque, single-threaded -------------------------------------------------------------


def test_deque_is_lifo_for_the_owner_and_fifo_for_thieves() -> None:
    dq: ChaseLevDeque[int] = ChaseLevDeque(ThreadingRuntime(), 2)
    for i in range(5):  # grows twice: 2 -> 4 -> 8
        dq.push(i)
    assert dq.capacity == 8 and len(dq) == 5
    assert dq.steal(1) == (OK, 0)
    assert dq.take() == (OK, 4)
    assert dq.steal(1) == (OK, 1)
    assert dq.take() == (OK, 3)
    assert dq.take() == (OK, 2)  # the last element: through the CAS
    assert dq.take() == (EMPTY, None)
    assert dq.steal(1) == (EMPTY, None)
    assert {OK, EMPTY, LOST, ABORT} == {"ok", "empty", "lost", "abort"}


def test_deque_refuses_a_capacity_that_is_not_a_power_of_two() -> None:
    with pytest.raises(ValueError, match="power of two"):
        ChaseLevDeque(ThreadingRuntime(), 3)


def test_deque_traces_each_operation() -> None:
    tracer = RecordingTracer()
    dq: ChaseLevDeque[str] = ChaseLevDeque(ThreadingRuntime(), 2, owner=0, tracer=tracer)
    for x in "abc":
        dq.push(x)
    dq.steal(1)
    dq.take()
    events = [(e["event"], e.get("task"), e.get("size"), e.get("result")) for e in tracer.events()]
    assert events == [
        ("push", "a", 1, None),
        ("push", "b", 2, None),
        ("resize", None, None, None),
        ("push", "c", 3, None),
        ("steal", "a", None, "ok"),
        ("take", "c", None, "ok"),
    ]


def test_deque_owner_and_thieves_under_real_threads_obtain_each_item_once() -> None:
    dq: ChaseLevDeque[int] = ChaseLevDeque(ThreadingRuntime(), 2)
    stolen: list[list[int]] = [[], []]
    stop = threading.Event()

    def thief(i: int) -> None:
        while not stop.is_set() or len(dq):
            status, item = dq.steal(i + 1)
            if status == OK:
                assert item is not None
                stolen[i].append(item)

    threads = [threading.Thread(target=thief, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    taken: list[int] = []
    for i in range(20_000):
        dq.push(i)
        if i % 3 == 0:
            status, item = dq.take()
            if status == OK:
                assert item is not None
                taken.append(item)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    everything = taken + stolen[0] + stolen[1] + dq.drain()
    assert sorted(everything) == list(range(20_000))


# -- the pools -------------------------------------------------------------------------------


@pytest.mark.parametrize("cls", POOLS)
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_fork_join_computes_fib(cls: Callable[..., PoolBase], workers: int) -> None:
    pool = cls(workers=workers, capacity=2)
    result, root = pool.submit(lambda: fib(pool, 15))
    assert result is Result.SUCCESS and root is not None
    assert pool.join(root) == 610
    assert pool.stop() is Result.SUCCESS
    assert sum(pool.stats.runs) == 1 + 986  # the root and one spawn per call with n >= 2


@pytest.mark.parametrize("cls", POOLS)
def test_many_external_submits_all_run(cls: Callable[..., PoolBase]) -> None:
    pool = cls(workers=3)
    ran: list[int] = []
    lock = threading.Lock()

    def task(i: int) -> Callable[[], None]:
        def body() -> None:
            with lock:
                ran.append(i)

        return body

    handles = [pool.submit(task(i))[1] for i in range(500)]
    assert pool.stop(StopMode.DRAIN) is Result.SUCCESS
    assert sorted(ran) == list(range(500))
    assert all(h is not None and h.done for h in handles)


@pytest.mark.parametrize("cls", POOLS)
def test_bad_arguments_are_refused_naming_the_field(cls: Callable[..., PoolBase]) -> None:
    with pytest.raises(TypeError, match="workers"):
        cls(workers=True)
    with pytest.raises(ValueError, match="workers"):
        cls(workers=0)
    with pytest.raises(ValueError, match="capacity"):
        cls(workers=1, capacity=3)
    with pytest.raises(TypeError, match="on_error"):
        cls(workers=1, on_error=42)
    with pytest.raises(TypeError, match="tracer"):
        cls(workers=1, tracer=object())
    pool = cls(workers=1)
    tracer_free = pool.submit(42)  # type: ignore[arg-type]
    assert tracer_free == (Result.INVALID_ARGUMENT, None)
    assert pool.submit(lambda: None, name=1.5)[0] is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="spawn"):
        pool.spawn(lambda: None)  # not from a task
    with pytest.raises(TypeError, match="task"):
        pool.join("not a handle")  # type: ignore[arg-type]
    assert pool.stop("drain") is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    assert pool.stop() is Result.SUCCESS


def test_create_factories_return_results() -> None:
    assert create(workers=0) == (Result.INVALID_ARGUMENT, None)
    assert create_global(workers="2") == (Result.INVALID_ARGUMENT, None)
    result, pool = create(workers=1)
    assert result is Result.SUCCESS and pool is not None
    assert pool.stop() is Result.SUCCESS


@pytest.mark.parametrize("cls", POOLS)
def test_after_stop_submit_is_invalid_state_and_stop_is_idempotent(cls: Callable[..., PoolBase]) -> None:
    tracer = RecordingTracer()
    pool = cls(workers=2, tracer=tracer)
    assert pool.stop() is Result.SUCCESS
    assert pool.submit(lambda: None) == (Result.INVALID_STATE, None)
    assert pool.stop() is Result.SUCCESS
    kinds = [e["event"] for e in tracer.events()]
    assert kinds.count("stop_begin") == 1 and kinds[-1] == "submit"
    assert tracer.events()[-1]["result"] == "invalid_state"


@pytest.mark.parametrize("cls", POOLS)
def test_stop_from_a_task_is_refused(cls: Callable[..., PoolBase]) -> None:
    pool = cls(workers=1)
    seen: list[Result] = []
    _, h = pool.submit(lambda: seen.append(pool.stop()))
    assert h is not None
    pool.join(h)
    assert seen == [Result.INVALID_STATE]
    assert pool.stop() is Result.SUCCESS


@pytest.mark.parametrize("cls", POOLS)
def test_a_raising_task_is_reported_and_join_raises(cls: Callable[..., PoolBase]) -> None:
    errors: list[tuple[Any, str]] = []
    pool = cls(workers=2, on_error=lambda task, exc: errors.append((task.id, str(exc))))

    def boom() -> None:
        raise ValueError("boom")

    def parent() -> str:
        child = pool.spawn(boom, name="child")
        try:
            pool.join(child)
        except TaskFailed as exc:
            assert isinstance(exc.__cause__, ValueError)
            return "caught"
        return "missed"

    _, h = pool.submit(parent, name="parent")
    assert h is not None
    assert pool.join(h) == "caught"
    assert errors == [("child", "boom")]
    assert pool.stop() is Result.SUCCESS


@pytest.mark.parametrize("cls", POOLS)
def test_stop_discard_reports_every_queued_task(cls: Callable[..., PoolBase]) -> None:
    tracer = RecordingTracer()
    discarded: list[Any] = []
    gate = threading.Event()
    pool = cls(workers=1, tracer=tracer, on_discard=lambda task: discarded.append(task.id))
    started = threading.Event()

    def block() -> bool:
        started.set()
        return gate.wait(10)

    _, blocker = pool.submit(block, name="blocker")
    assert started.wait(10)  # running before the others queue (the global-lock queue is LIFO)
    queued = [pool.submit(lambda: None, name=f"q{i}")[1] for i in range(5)]
    threading.Timer(0.2, gate.set).start()
    assert pool.stop(StopMode.DISCARD) is Result.SUCCESS
    ran = {e["task"] for e in tracer.events() if e["event"] == "run"}
    handled = list(map(str, discarded)) + list(map(str, ran - {"blocker"}))
    assert sorted(handled) == sorted(f"q{i}" for i in range(5))  # each exactly once
    for h in queued:
        assert h is not None
        if h.id in discarded:
            with pytest.raises(TaskDiscarded):
                h.outcome()
    listed = [t for e in tracer.events() if e["event"] == "discard" for t in e["tasks"]]
    assert sorted(map(str, listed)) == sorted(map(str, discarded))
    assert [e["event"] for e in tracer.events()][-1] == "stop_end"
    assert blocker is not None and blocker.outcome() is True


@pytest.mark.parametrize("cls", POOLS)
def test_context_manager_drains(cls: Callable[..., PoolBase]) -> None:
    with cls(workers=2) as pool:
        _, h = pool.submit(lambda: fib(pool, 10))
    assert h is not None and h.outcome() == 55
    assert not pool.running


def test_trace_header_and_vocabulary() -> None:
    tracer = RecordingTracer()
    pool = WorkStealingPool(workers=2, capacity=2, tracer=tracer)
    _, h = pool.submit(lambda: fib(pool, 8), name="root")
    assert h is not None and pool.join(h) == 21
    assert pool.stop() is Result.SUCCESS
    assert tracer.config is not None
    assert header(tracer.config) == {
        "trace": "lanecheck",
        "version": 1,
        "design": "work-stealing",
        "config": {"workers": 2, "capacity": 2, "pool": "stealing"},
    }
    kinds = {e["event"] for e in tracer.events()}
    assert {"submit", "push", "take", "run", "done", "join", "stop_begin", "stop_end"} <= kinds
    assert kinds <= {
        "submit", "push", "resize", "take", "steal", "park", "unpark", "run", "done", "join",
        "stop_begin", "discard", "stop_end",
    }  # fmt: skip
    for e in tracer.events():
        if e["event"] == "steal":
            assert e["victim"] != e["worker"]
        if e["event"] in ("push", "take"):
            assert e["thread"] == f"w{e['worker']}"


def test_a_fault_of_the_pool_fails_it_and_stop_reports_unknown() -> None:
    class Broken(WorkStealingPool):
        def _run(self, w: int, task: TaskHandle) -> None:
            raise RuntimeError("our own bug")

    discarded: list[Any] = []
    pool = Broken(workers=1, on_discard=lambda task: discarded.append(task.id))
    pool.submit(lambda: None, name="a")
    pool.submit(lambda: None, name="b")
    assert pool.stop() is Result.UNKNOWN
    assert pool.failed and pool.failure is not None
    assert "our own bug" in str(pool.failure.error)
    assert sorted(discarded) == ["a", "b"]  # "a" was in the worker's hand when it failed
    assert pool.submit(lambda: None)[0] is Result.INVALID_STATE


# -- the traces against the design's validator -------------------------------------------------


def _verdict(tracer: RecordingTracer) -> Any:
    import json

    from model_checks.designs.work_stealing.trace.validate import judge

    assert tracer.config is not None
    lines = [json.dumps(e) for e in tracer.events()]
    return judge(header(tracer.config), iter(lines), complete=True)


def _fib_traced(pool_class: Any, workers: int, mode: StopMode) -> RecordingTracer:
    """Three fib(11) roots on a traced pool of ``pool_class``, then a stop in ``mode``; its tracer."""
    tracer = RecordingTracer()
    pool = pool_class(workers=workers, capacity=2, tracer=tracer)
    handles = [pool.submit(lambda: fib(pool, 11))[1] for _ in range(3)]
    if mode is StopMode.DRAIN:
        assert [pool.join(h) for h in handles if h is not None] == [89, 89, 89]
    assert pool.stop(mode) is Result.SUCCESS
    return tracer


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("mode", [StopMode.DRAIN, StopMode.DISCARD])
def test_stealing_pool_traces_are_complete_behaviours(workers: int, mode: StopMode) -> None:
    verdict = _verdict(_fib_traced(WorkStealingPool, workers, mode))
    assert verdict.code == 0, verdict.message


def test_a_self_steal_trace_is_rejected_by_the_validator() -> None:
    from model_checks.designs.work_stealing.reference_mutants import StealFromSelfPool

    tracer = RecordingTracer()
    pool = StealFromSelfPool(workers=1, tracer=tracer)
    _, h = pool.submit(lambda: 1)
    assert h is not None and pool.join(h) == 1
    pool.stop()
    assert any(e["event"] == "steal" and e["victim"] == e["worker"] for e in tracer.events())
    assert _verdict(tracer).code != 0


@pytest.mark.parametrize("workers", [1, 2, 4])
@pytest.mark.parametrize("mode", [StopMode.DRAIN, StopMode.DISCARD])
def test_global_lock_pool_traces_are_complete_behaviours(workers: int, mode: StopMode) -> None:
    tracer = _fib_traced(GlobalQueuePool, workers, mode)
    assert tracer.config is not None and header(tracer.config)["config"]["pool"] == "global-lock"
    events = tracer.events()
    if mode is StopMode.DRAIN:
        assert any(e["event"] == "push" for e in events)  # spawns are the worker's pushes
    assert not any(e["event"] in ("take", "resize") for e in events)
    verdict = _verdict(tracer)
    assert verdict.code == 0, verdict.message


def _global_lock_trace() -> RecordingTracer:
    tracer = RecordingTracer()
    pool = GlobalQueuePool(workers=1, tracer=tracer)

    def root() -> int:
        a, b = pool.spawn(lambda: 1, name="a"), pool.spawn(lambda: 2, name="b")
        return int(pool.join(a)) + int(pool.join(b))

    _, h = pool.submit(root, name="root")
    assert h is not None and pool.join(h) == 3
    assert pool.stop() is Result.SUCCESS
    assert _verdict(tracer).code == 0
    return tracer


def _rejected(tracer: RecordingTracer, events: list[dict[str, Any]]) -> Any:
    import json

    from model_checks.designs.work_stealing.trace.validate import judge

    assert tracer.config is not None
    for seq, e in enumerate(events, 1):
        e["seq"] = seq
    verdict = judge(header(tracer.config), iter(json.dumps(e) for e in events), complete=True)
    assert verdict.code == 1, verdict.message
    return verdict


def test_a_corrupted_global_lock_trace_is_rejected() -> None:
    tracer = _global_lock_trace()
    events = [dict(e) for e in tracer.events()]
    # The global queue is LIFO: root's join of "a" runs "b" first (pushed last).
    assert [e["task"] for e in events if e["event"] == "push"] == ["a", "b"]
    pop = next(i for i, e in enumerate(events) if e["event"] == "steal" and e["task"] == "b")
    events[pop]["task"] = "a"  # the oldest instead
    verdict = _rejected(tracer, events)
    assert verdict.rule == 2 and "LIFO" in verdict.message


def test_a_global_lock_trace_with_a_deque_event_is_rejected() -> None:
    tracer = _global_lock_trace()
    events = [dict(e) for e in tracer.events()]
    i = next(i for i, e in enumerate(events) if e["event"] == "steal" and e["result"] == "ok")
    events[i] = {"thread": events[i]["thread"], "event": "take", "worker": 0, "task": events[i]["task"],
                 "result": "ok"}  # fmt: skip
    assert _rejected(tracer, events).rule == 3


def test_a_global_lock_trace_judged_as_stealing_is_rejected() -> None:
    # The same real trace under the stealing contract: its pushes put tasks in w0's deque,
    # which no steal from the injector can return.
    import json

    from model_checks.designs.work_stealing.trace.validate import judge

    tracer = _global_lock_trace()
    assert tracer.config is not None
    as_stealing = {**header(tracer.config), "config": {**tracer.config, "pool": "stealing"}}
    verdict = judge(as_stealing, iter(json.dumps(e) for e in tracer.events()), complete=True)
    assert verdict.code == 1, verdict.message
