"""The data-race detector: plain shared accesses that no synchronisation orders are failures, and
"exhaustive" says what it proves (docs/harness.md, "Data races")."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from model_checks.harness import check, declare_atomic, patched, replay, undeclare_atomic
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from tests.harness import race_programs as prog
from tests.harness.patched_runs import assert_race, run_patched

DRF = (
    "exhaustive (for a data-race-free program: every execution explored at "
    "synchronisation-point granularity, no data race)"
)

run = partial(run_patched, prog)


@pytest.mark.timeout(60)
def test_lost_update_is_a_race_with_both_sites_in_the_report() -> None:
    result = run(prog.lost_update)
    assert_race(result, prog, "Counter.count", "self.count += 1  # read-modify-write")
    report = result.report()
    assert "write of Counter.count" in report and "read of Counter.count" in report
    assert "self.count += 1" in report  # the source line of both sites
    # both threads, by their names as ``threading`` gives them: ``Thread-N (target)``
    assert "Thread-1 (racy_inc)" in report and "Thread-2 (racy_inc)" in report
    assert "replay" in report


@pytest.mark.timeout(60)
def test_a_race_replays_from_its_schedule() -> None:
    result = run(prog.lost_update)
    assert result.failure is not None

    def program(rt: ControlledRuntime) -> None:
        prog.lost_update()

    with patched(prog):
        first = check(program)
        assert first.failure is not None
        again = replay(program, first.failure.schedule)
    assert again.failure is not None and again.failure.kind == "data_race"


@pytest.mark.timeout(60)
def test_dict_check_then_act_is_a_race() -> None:
    assert_race(run(prog.dict_check_then_act), prog, "dict['a']", "self.data[key] = object()  # ...")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("program", [prog.locked_counter, prog.dict_locked])
def test_locked_versions_are_proved_exhaustive(program: Callable[[], object]) -> None:
    result = run(program)
    assert result.verdict == "exhaustive" and result.races, result.report()
    assert result.summary().startswith(DRF)


@pytest.mark.timeout(60)
def test_a_lock_released_before_the_write_is_still_a_race() -> None:
    result = run(prog.released_early)
    assert_race(result, prog, "Counter.count", "self.count = value + 1")


@pytest.mark.timeout(60)
def test_read_only_sharing_is_not_a_race() -> None:
    result = run(prog.read_only_sharing)
    assert result.verdict == "exhaustive", result.report()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "program", [prog.through_condition, prog.through_queue, prog.through_event, prog.through_join]
)
def test_happens_before_through_each_primitive(program: Callable[[], object]) -> None:
    result = run(program)
    assert result.verdict == "exhaustive" and result.races, result.report()


@pytest.mark.timeout(60)
def test_detection_off_states_its_granularity() -> None:
    result = run(prog.lost_update, races=False)
    # the false proof the detector exists for: without it the racy program "passes"
    assert result.verdict == "exhaustive"
    assert result.summary().startswith("exhaustive (synchronisation points only)")
    assert any("race detection off" in n for n in result.notes)


@pytest.mark.timeout(60)
def test_detection_is_on_by_default_in_patch_mode_only() -> None:
    assert run(prog.lost_update, strategy="random", max_executions=5).failure is not None
    # off by default on the controlled runtime, and the verdict says what it covers
    off = check(controlled_lost_update)
    assert not off.races and off.summary().startswith("exhaustive (synchronisation points only)")


def patching_inside(rt: ControlledRuntime) -> None:
    with patched(prog):
        prog.lost_update()


@pytest.mark.timeout(60)
def test_patching_inside_an_explored_test_is_refused_unless_races_are_chosen() -> None:
    """Patch mode entered inside the explored function comes too late for the default (the
    detector is decided when the check starts): it used to give "exhaustive (synchronisation
    points only)" for the racy program, whose verdict a reader takes for a proof."""
    with pytest.raises(UsageError, match=r"patched\(\) entered inside an explored test"):
        check(patching_inside)
    found = check(patching_inside, races=True)
    assert found.failure is not None and found.failure.kind == "data_race", found.report()
    off = check(patching_inside, races=False)  # said in so many words: no refusal
    assert off.verdict == "exhaustive" and off.summary().startswith(
        "exhaustive (synchronisation points only)"
    )
    with patched(prog):  # the way the docs show
        assert check(patching_inside).failure is not None


def controlled_lost_update(rt: ControlledRuntime) -> None:
    c = prog.Counter()
    threads = [rt.start_thread(c.racy_inc, f"t{i}") for i in range(2)]
    for t in threads:
        t.join()


def controlled_locked(rt: ControlledRuntime) -> None:
    c = prog.Counter()
    lock = rt.lock()

    def inc() -> None:
        with lock:
            c.count += 1

    threads = [rt.start_thread(inc, f"t{i}") for i in range(2)]
    for t in threads:
        t.join()


def controlled_cache(rt: ControlledRuntime) -> None:
    c = prog.Cache()

    def get() -> None:
        c.racy_get("k")

    threads = [rt.start_thread(get, f"t{i}") for i in range(2)]
    for t in threads:
        t.join()


@pytest.mark.timeout(60)
def test_controlled_runtime_races_and_proofs() -> None:
    racy = check(controlled_lost_update, races=True)
    assert racy.failure is not None and racy.failure.kind == "data_race", racy.report()
    assert "by t0" in racy.failure.message and "by t1" in racy.failure.message
    cache = check(controlled_cache, races=True)
    assert cache.failure is not None and "dict['k']" in cache.failure.message
    locked = check(controlled_locked, races=True)
    assert locked.verdict == "exhaustive" and locked.summary().startswith(DRF), locked.report()


@pytest.mark.timeout(60)
def test_a_yield_point_marks_an_access_the_explorer_interleaves() -> None:
    def racy(rt: ControlledRuntime) -> Callable[[], None]:
        n = [0]

        def inc() -> None:
            v = n[0]
            rt.yield_point()
            n[0] = v + 1

        threads = [rt.start_thread(inc, f"t{i}") for i in range(2)]
        for t in threads:
            t.join()

        def final() -> None:
            assert n[0] == 2, f"lost update: {n[0]}"

        return final

    result = check(racy, races=True)
    assert result.failure is not None and result.failure.kind == "assertion", result.report()


@pytest.mark.timeout(60)
def test_a_declared_field_is_a_scheduling_point_not_a_race() -> None:
    assert_race(run(prog.declared_flag), prog, "Flag.stop")
    declare_atomic(prog.Flag, "stop", "a stop flag (test)")
    try:
        result = run(prog.declared_flag)
    finally:
        undeclare_atomic(prog.Flag, "stop")
    assert result.verdict == "exhaustive", result.report()
    assert result.outcomes == {0, 1}  # both orders of the flag's store and load were explored
    assert "stop" not in vars(prog.Flag)  # the descriptor is gone after the check


@pytest.mark.timeout(60)
def test_declaring_needs_a_class_and_an_attribute_name() -> None:
    with pytest.raises(ValueError, match="attribute name"):
        declare_atomic(prog.Flag, "not a name")
    with pytest.raises(ValueError, match="module:Qualname"):
        declare_atomic("Flag", "stop")
