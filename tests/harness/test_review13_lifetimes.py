"""Review 13's findings on object lifetimes (F2, A3, A4, C1): the programs of
``review13_lifetime_programs.py``, held to what they must give, and the race detector's shadow
memory, which holds the objects of its locations weakly where it can (``race_shadow.Held``)."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from model_checks.harness import Options, Result, patched, races
from model_checks.harness.options import STATES
from model_checks.harness.stateful import check_states
from tests.harness import review13_lifetime_programs as programs
from tests.harness.expected import Fails, Program
from tests.harness.patched_runs import assert_fails, assert_proved_race_free, run_patched


@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", programs.PROVED, ids=lambda p: p.__name__)
def test_a_correct_program_is_proved(program: Program) -> None:
    assert_proved_race_free(run_patched(programs, program, time_limit=60))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("case", programs.FOUND, ids=lambda c: c.name)
def test_a_finalizer_the_detector_kept_from_running_is_found(case: Fails) -> None:
    assert_fails(run_patched(programs, case.program, time_limit=60), case.kind, case.words)


def _explored(program: Program, strategy: str) -> Result:
    if strategy != STATES:
        return run_patched(programs, program, time_limit=60, races=False, strategy=strategy)
    with patched(programs):
        return check_states(lambda rt: program(), Options(time_limit=60, races=False))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", ["dpor-ipb", STATES])
def test_a_full_collection_is_ordered_with_the_garbage_another_thread_makes(strategy: str) -> None:
    """F3 (p36, ``--no-races``): a step that ran ``gc.collect()`` is dependent with every step
    of every other thread (``Execution.collected``), by the strategies that prune."""
    result = _explored(programs.collector_started_before_the_garbage_is_made, strategy)
    assert_fails(result, "assertion", "__del__ deadlocked")
    twin = _explored(programs.collector_lets_go_of_the_lock_first, strategy)
    assert twin.verdict == "exhaustive", twin.report()


def _generator_must_finish_in_b() -> None:
    programs.generator_finally_runs_where_it_is_dropped()
    assert programs.WHERE == ["B"], programs.WHERE


@pytest.mark.timeout(120)
def test_the_counterexample_of_an_abandoned_generator_is_one_cpython_can_give() -> None:
    """C1 (p64): the bug (``finally`` assumed to run in B) was found with ``AssertionError: []``,
    an outcome no real run has: the generator was never freed. Depth-first search (DPOR does not
    order two drops of one reference: docs/harness.md, "Data races") finds ``['A']``."""
    result = run_patched(programs, _generator_must_finish_in_b, strategy="dfs", time_limit=60)
    assert_fails(result, "assertion", "['A']")


class _Box:
    pass


@pytest.mark.timeout(120)
def test_a_freed_objects_locations_are_forgotten() -> None:
    """The shadow memory holds an object of a program's class weakly: once it is freed, no
    location of its ``__dict__`` is left (an ``id`` CPython may give to the next object)."""
    seen: dict[str, object] = {}

    def program() -> None:
        def work() -> None:
            box = _Box()
            box.x = 1  # type: ignore[attr-defined]
            ref = weakref.ref(box)
            detector = _detector()
            fields = id(box.__dict__)
            seen["while"] = _locations(detector, fields)
            del box
            gc.collect()
            seen["freed"] = ref() is None
            seen["after"] = _locations(detector, fields)

        t = threading.Thread(target=work)
        t.start()
        t.join()

    # (not one execution alone since session 46: a weak reference looked up starts the search again
    # with every step dependent, ``strategies/observed.py``)
    assert_proved_race_free(run_patched(programs, program, time_limit=60))
    assert seen["while"] and seen["freed"] and seen["after"] == 0, seen


def _locations(detector: races.RaceDetector, oid: int) -> int:
    known = list(detector.shadow)  # (this code is traced: a copy first, then no access)
    return sum(k[0] == oid for k in known)


def _detector() -> races.RaceDetector:
    found = [o for o in gc.get_objects() if type(o) is races.RaceDetector and o.ex.current is not None]
    assert len(found) == 1, found
    return found[0]
