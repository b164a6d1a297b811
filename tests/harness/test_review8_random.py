"""Session 40's eighth review: false proofs of the per-thread draw model (``patch_random``).

Draws on one ``random.Random`` shared by two threads (r060, r067: 42 of 50 real runs fail), a
thread's ``random.seed`` against another's (r082: 36 of 50), a worker's seed reaching main's
draw (r005: 200 of 200) were "exhaustive": each thread drew its own sequence, and a draw was no
operation, so DPOR ran one order. Now the module's functions share one generator per execution
and every use of a generator in a controlled thread is an operation on it."""

from __future__ import annotations

import random
import threading
import uuid
from collections.abc import Callable

import pytest

from model_checks.harness import Result, check, patch_random, patched, replay
from model_checks.harness.stateful import check_states
from tests.harness import review8_random_programs as prog

pytestmark = pytest.mark.timeout(180)

BUGGY = [
    prog.shared_instance,
    prog.shared_unseeded_instance,
    prog.shared_instance_choice,
    prog.module_draws_in_two_threads,
    prog.seed_each_thread,
]


def _run(program: Callable[[], None], **options: object) -> Result:
    with patched(prog):
        return check(lambda rt: program(), **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor", "portfolio"])
@pytest.mark.parametrize("program", BUGGY, ids=lambda p: p.__name__)
def test_the_order_of_draws_on_a_shared_generator_is_explored(
    program: Callable[[], None], strategy: str
) -> None:
    # before: exhaustive under DPOR (the draws were taken to commute); only dfs/random/pct failed
    result = _run(program, strategy=strategy)
    assert result.verdict == "failed", result.report()
    assert result.failure is not None and result.failure.kind == "assertion", result.report()


@pytest.mark.parametrize("program", BUGGY, ids=lambda p: p.__name__)
def test_the_state_search_explores_them_too(program: Callable[[], None]) -> None:
    with patched(prog):
        result = check_states(lambda rt: program())
    assert result.verdict == "failed", result.summary()
    assert result.failure is not None and result.failure.kind == "assertion", result.summary()


def test_a_workers_seed_reaches_mains_later_draw() -> None:
    # r005: before, the worker reseeded only its own sequence, and the check was exhaustive
    result = _run(prog.seed_in_worker)
    assert result.verdict == "failed" and result.failure is not None, result.report()
    assert "reseeded by the worker" in result.failure.message, result.report()


def test_mains_seed_reaches_the_workers_draw() -> None:
    # r003 (correct): before, a false alarm (the worker drew its own sequence)
    out: list[float] = []
    result = _run(lambda: prog.seed_in_main(out))
    assert result.verdict == "exhaustive", result.report()
    assert set(out) == {random.Random(7).random()}, out


def test_the_verdict_names_the_shared_generator_and_its_seed() -> None:
    out: list[float] = []
    result = _run(lambda: prog.seed_in_main(out), seed=4)
    assert (
        "random draws: one shared generator, as CPython's, seeded 4 in every execution"
        in result.verdict_text()
    )


def test_the_shared_generator_is_seeded_with_the_draw_seed() -> None:
    seen: list[float] = []

    def draw() -> None:
        t = threading.Thread(target=lambda: seen.append(random.random()))
        t.start()
        t.join()

    assert _run(draw, seed=9).ok
    assert set(seen) == {random.Random(9).random()}, seen


def test_a_generator_of_one_thread_costs_no_executions() -> None:
    # a private generator's draws are operations on its own cell: independent of the other
    # thread's steps, so DPOR prunes them (the cost is steps, not executions)
    drawing = _run(prog.own_generators)
    plain = _run(prog.counter_only)
    assert drawing.verdict == plain.verdict == "exhaustive", (drawing.report(), plain.report())
    assert drawing.executions == plain.executions, (drawing.executions, plain.executions)


def test_a_failure_on_a_shared_generator_replays() -> None:
    def shared(rt: object) -> None:
        prog.shared_instance()

    with patched(prog):
        found = check(shared)
        assert found.failure is not None, found.report()
        again = replay(shared, found.failure.schedule)
    assert again.failure is not None and again.failure.kind == "assertion", again.report()
    assert again.failure.message == found.failure.message


def test_seeding_before_the_check_is_named_as_replaced() -> None:
    # r044 (open): a program's random.seed(3) at import is not carried into the executions;
    # the verdict says so rather than describing only the tool's generator
    out: list[float] = []
    saved = random.getstate()
    try:
        random.setstate(patch_random._AT_IMPORT)
        untouched = _run(lambda: prog.seed_in_main(out)).verdict_text()
        random.seed(3)
        touched = _run(lambda: prog.seed_in_main(out)).verdict_text()
    finally:
        random.setstate(saved)
    assert "before the check" not in untouched, untouched
    assert "seeded or drawn from before the check" in touched and "the draw seed replaces it" in touched


def test_two_threads_get_distinct_uuid4s() -> None:
    # the OS's entropy is each thread's own sequence: distinct across threads of one execution
    # (and the same in every execution: docs/harness.md, r047)
    ids: dict[int, str] = {}

    def make() -> None:
        def w(i: int) -> None:
            ids[i] = uuid.uuid4().hex

        ts = [threading.Thread(target=w, args=(i,)) for i in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert ids[0] != ids[1], ids

    result = _run(make)
    assert result.verdict == "exhaustive", result.report()
