"""`lanecheck bench work-stealing` in its quick form: the figures are there and consistent (never timed)."""

from __future__ import annotations

import pytest

from model_checks.designs.work_stealing import bench
from reference.work_stealing import TaskHandle, WorkStealingPool


@pytest.mark.timeout(120)
def test_quick_bench_reports_every_pool_with_ratios_from_the_same_run() -> None:
    figures = bench.bench(quick=True)
    rounds = figures["rounds"]
    assert rounds == bench.QUICK["rounds"]
    assert set(figures["fork_join"]) == {"stealing", "global-lock"}
    assert set(figures["tree"]) == {"stealing", "global-lock", "ThreadPoolExecutor"}
    tasks = 2 ** (figures["tree_depth"] + 1) - 1
    for name, f in figures["tree"].items():
        assert f["tasks"] == tasks and f["rounds"] == rounds, name
        assert sum(f["per_worker"]) == tasks, name
        assert len(f["per_worker"]) == figures["workers"], name
    for f in figures["fork_join"].values():
        assert f["tasks"] == bench._fib_tasks(figures["fib_n"])
        assert sum(f["per_worker"]) == f["tasks"]
    for f in [*figures["fork_join"].values(), *figures["tree"].values()]:
        for key in ("seconds", "tasks_per_s", "us_per_task", "cpu_us_per_task"):
            spread = f[key]
            assert 0 < spread["min"] <= spread["median"] <= spread["max"], (key, spread)
        assert "overhead_us_per_task" in f
    for key in ("fork_join_vs_global_lock", "tree_vs_global_lock", "tree_vs_thread_pool_executor"):
        compared = figures[key]
        assert compared["goal"] == bench.GOALS[key]
        assert 0 < compared["tasks_per_s"]["min"] <= compared["tasks_per_s"]["max"]
        assert compared["cpu_per_task"]["median"] > 0
        assert figures["goals"][key] in ("met", "met by the median, not every round", "not met")
    assert figures["cpu_count"] >= 1
    for machine in (figures["machine"], figures["machine_after"]):
        assert {"load", "cores", "usable_cores", "pinned"} <= set(machine)


def test_same_round_ratios_pair_the_runs_of_one_round() -> None:
    def run(rate: float, cpu: float) -> dict[str, float]:
        return {"tasks_per_s": rate, "cpu_us_per_task": cpu}

    stealing = [run(300.0, 2.0), run(100.0, 6.0), run(200.0, 2.0)]
    baseline = [run(100.0, 4.0), run(100.0, 6.0), run(400.0, 3.0)]
    compared = bench._comparison(stealing, baseline, goal=1.0)
    # round by round: 3.0, 1.0, 0.5 (not best against best: 300 / 400)
    assert compared["tasks_per_s"] == {"median": 1.0, "min": 0.5, "max": 3.0}
    assert compared["cpu_per_task"] == {"median": 1.5, "min": 1.0, "max": 2.0}
    assert compared["met_by_median"] and not compared["met_every_round"]
    assert bench._verdict(compared) == "met by the median, not every round"


def test_rounds_must_be_positive() -> None:
    with pytest.raises(ValueError, match="rounds"):
        bench.bench(quick=True, rounds=0)


def test_fib_task_count_matches_the_recursion() -> None:
    # fib(n) forks once per call with n >= 2; plus the root.
    def spawns(n: int) -> int:
        return 0 if n < 2 else 1 + spawns(n - 1) + spawns(n - 2)

    for n in range(12):
        assert bench._fib_tasks(n) == 1 + spawns(n)


@pytest.mark.timeout(60)
def test_a_wrong_result_fails_the_bench() -> None:
    class Wrong(WorkStealingPool):
        def join(self, task: TaskHandle) -> object:
            value = super().join(task)
            return value + 1 if isinstance(value, int) else value

    with pytest.raises(AssertionError, match="fib"):
        bench.run_fib(Wrong, 6, 2)
