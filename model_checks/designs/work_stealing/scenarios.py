"""Harness programs for the work-stealing reference: loom-style races on the real deque and pool.

Deque programs (``deque_program``): the owner runs a script of pushes and takes on a
``ChaseLevDeque`` while thieves steal (an aborted steal retries: an abort means another
thread took that element). What must hold in every execution: every pushed item is obtained
exactly once -- by a take, a steal, or left in the deque at the end -- and nothing that was
never pushed comes out (a stale or unwritten slot).

Pool programs (``pool_program``): a ``WorkStealingPool`` (or any pool with its API) on the
controlled runtime; ``main`` submits root tasks, each of which may spawn children and join
them, joins the roots from outside, then stops the pool. What must hold: every root's value is
right (also when main does not join it: what the root's own joins added up to is checked), every
task submitted or spawned runs exactly once (or is discarded exactly once, under Stop(discard)),
Stop returns SUCCESS, a task's exception reaches ``on_error``; after every step,
no worker has stolen from itself (checked on the trace as it is emitted). A stop that never
returns while a task waits in a queue and a worker sleeps is a ``lost_wakeup``; workers all
blocked with no one parked, a ``deadlock``.

Memory model: the harness's, sequentially consistent (docs/harness.md); the deque's plain slot
accesses happen inside the step of the atomic access before them (see
``reference/work_stealing_deque.py``), and the race detector is off for these programs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from model_checks.designs.work_stealing import declared  # noqa: F401  (the design's GIL-atomic field)
from model_checks.harness.runtime import ControlledRuntime
from reference.results import Result
from reference.scheduler import StopMode
from reference.tracing import RecordingTracer
from reference.work_stealing import PoolBase, TaskFailed, TaskHandle, WorkStealingPool
from reference.work_stealing_deque import ABORT, OK, ChaseLevDeque

Program = Callable[[ControlledRuntime], object]


# -- the deque ---------------------------------------------------------------------------------


def deque_program(
    owner: Sequence[str],
    thieves: Sequence[int],
    *,
    capacity: int = 2,
    build: Callable[..., ChaseLevDeque[Any]] = ChaseLevDeque,
) -> Program:
    """``owner`` is a script of ``"push"`` and ``"take"``; thief ``i`` steals ``thieves[i]`` times."""

    def program(rt: ControlledRuntime) -> object:
        dq = build(rt, capacity, owner=0)
        pushed: list[str] = []
        # (who, item) per thread: each list is appended by its own thread only
        got_by: dict[str, list[tuple[str, Any]]] = {"owner": []}
        got_by.update({f"t{i + 1}": [] for i in range(len(thieves))})

        def owner_body() -> None:
            for op in owner:
                if op == "push":
                    name = f"x{len(pushed)}"
                    pushed.append(name)
                    dq.push(name)
                else:
                    status, item = dq.take()
                    if status == OK:
                        got_by["owner"].append(("owner", item))

        def thief(i: int) -> Callable[[], None]:
            def body() -> None:
                got = got_by[f"t{i + 1}"]
                for _ in range(thieves[i]):
                    status, item = dq.steal(i + 1)
                    while status == ABORT:
                        status, item = dq.steal(i + 1)
                    if status == OK:
                        got.append((f"t{i + 1}", item))

            return body

        threads = [rt.start_thread(owner_body, "owner")]
        threads += [rt.start_thread(thief(i), f"t{i + 1}") for i in range(len(thieves))]
        for t in threads:
            t.join()
        left = dq.drain()  # every thread is done: what is still in the deque, oldest first
        got = [pair for who in got_by for pair in got_by[who]]

        def final() -> tuple[Any, ...]:
            out = sorted(str(item) for _, item in got) + sorted(str(item) for item in left)
            for who, item in got:
                assert item in pushed, f"{who} obtained {item!r}, which was never pushed"
            assert sorted(out) == sorted(pushed), (
                f"exactly once broken: pushed {pushed}, obtained {got}, left in the deque {left}"
            )
            return tuple(sorted(got))

        return final

    return program


# -- the pool ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolScenario:
    workers: int = 2
    roots: int = 1  # root tasks submitted by main
    children: int = 2  # children each root spawns and joins
    stop: StopMode = StopMode.DRAIN
    join_roots: bool = True  # main joins every root before Stop
    raising_child: bool = False  # the first root's first child raises
    capacity: int = 2


class SelfSteal(AssertionError):
    """A worker stole from its own deque."""


class _StealWatch(RecordingTracer):
    """Checks "never steal from self" on each event as it is emitted (the invariant reports it)."""

    def __init__(self) -> None:
        super().__init__()
        self.violation: str | None = None

    def emit(self, thread: str, event: str, fields: dict[str, Any]) -> None:
        super().emit(thread, event, fields)
        if event == "steal" and fields["victim"] == fields["worker"] and self.violation is None:
            self.violation = f"{thread}: worker {fields['worker']} stole from itself ({fields['result']})"

    def check(self) -> bool:
        if self.violation is not None:
            raise SelfSteal(self.violation)
        return True


def _queued(pool: PoolBase) -> bool:
    """Does a task wait in a queue? Read from the model, between steps (no scheduling point)."""
    if isinstance(pool, WorkStealingPool):
        injector = pool._injector  # the controlled deque's model, not its len (a scheduling point)
        return bool(getattr(injector, "_items", injector)) or any(d.looks_nonempty() for d in pool._deques)
    return bool(getattr(pool, "_queue", ()))


def pool_program(
    sc: PoolScenario,
    *,
    build: Callable[..., PoolBase] = WorkStealingPool,
    watch: bool = False,
) -> Program:
    """The scenario as a harness program; ``build`` makes the pool (``WorkStealingPool``'s keyword
    signature). ``watch``: trace the pool and check, after every step, that no worker stole from
    itself (the deques then emit under their trace locks, which adds steps)."""

    def program(rt: ControlledRuntime) -> object:
        tasks = [f"r{r}" for r in range(sc.roots)]
        tasks += [f"r{r}.c{c}" for r in range(sc.roots) for c in range(sc.children)]
        # Starts per task, keyed in a fixed order: a count, not a history, so that two orders of
        # independent runs reach one state (state-hash pruning, `--strategy states`).
        runs = dict.fromkeys(tasks, 0)
        totals: dict[str, int] = {}  # root -> what its joins of its children added up to
        errors: list[object] = []
        discarded: list[object] = []
        tracer = _StealWatch() if watch else None
        pool = build(
            workers=sc.workers,
            capacity=sc.capacity,
            runtime=rt,
            tracer=tracer,
            on_error=lambda task, exc: errors.append(task.id),
            on_discard=lambda task: discarded.append(task.id),
        )
        if tracer is not None:
            rt.invariant(tracer.check, "no steal from self")
            rt.trace(lambda: list(tracer.events()))
        rt.pending_work(lambda: _queued(pool) and any(pool._parked))

        def child(name: str, value: int) -> Callable[[], int]:
            def body() -> int:
                runs[name] += 1
                if sc.raising_child and name == "r0.c0":
                    raise ValueError("a child fails on purpose")
                return value

            return body

        def root(r: int) -> Callable[[], int]:
            def body() -> int:
                runs[f"r{r}"] += 1
                handles = [pool.spawn(child(f"r{r}.c{c}", c + 1), f"r{r}.c{c}") for c in range(sc.children)]
                total = 0
                for h in handles:
                    try:
                        total += pool.join(h)
                    except TaskFailed:
                        total += 100
                totals[f"r{r}"] = total  # checked at the end also when main does not join the root
                return total

            return body

        handles: list[TaskHandle] = []
        for r in range(sc.roots):
            result, handle = pool.submit(root(r), f"r{r}")
            assert result is Result.SUCCESS and handle is not None, f"submit of r{r}: {result}"
            handles.append(handle)
        values = [pool.join(h) for h in handles] if sc.join_roots else []
        stop_result = pool.stop(sc.stop)

        def final() -> tuple[Any, ...]:
            assert stop_result is Result.SUCCESS, f"Stop returned {stop_result!r}"
            expected = sum(c + 1 for c in range(sc.children))
            if sc.raising_child and sc.children:
                expected += 100 - 1
                assert errors[:1] == ["r0.c0"], f"on_error saw {errors}"
            for r, value in enumerate(values):
                want = expected if r == 0 else sum(c + 1 for c in range(sc.children))
                assert value == want, f"root r{r} returned {value}, expected {want}"
            for name, total in totals.items():
                want = expected if name == "r0" else sum(c + 1 for c in range(sc.children))
                assert total == want, f"root {name}'s joins added up to {total}, expected {want}"
            if sc.stop is StopMode.DRAIN:
                assert sorted(totals) == sorted(f"r{r}" for r in range(sc.roots)), f"roots finished: {totals}"
            twice = [t for t, n in runs.items() if n > 1]
            assert not twice, f"a task ran twice: {twice}"
            ran = [t for t, n in runs.items() if n]
            if sc.stop is StopMode.DRAIN:
                assert not discarded, f"Stop(drain) discarded {discarded}"
                assert sorted(map(str, ran)) == sorted(tasks), (
                    f"ran {sorted(map(str, ran))}, expected {tasks}"
                )
            else:
                everything = sorted(map(str, ran + discarded))
                spawned_ok = set(everything) <= set(tasks) and len(everything) == len(set(everything))
                assert spawned_ok, f"ran {ran} + discarded {discarded}: a task twice or unknown"
                missing = [f"r{r}" for r in range(sc.roots) if f"r{r}" not in everything]
                assert not missing, f"roots neither run nor discarded: {missing}"
            return (tuple(values), len(ran), len(discarded))

        return final

    return program


SCENARIO_DOCS: dict[str, str] = {}


__all__ = ["PoolScenario", "SelfSteal", "deque_program", "pool_program"]
