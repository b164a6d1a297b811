"""`lanecheck bench work-stealing` in its quick form: the figures are there and consistent (never timed)."""

from __future__ import annotations

import pytest

from model_checks.designs.work_stealing import bench
from reference.work_stealing import TaskHandle, WorkStealingPool


@pytest.mark.timeout(120)
def test_quick_bench_reports_every_pool_with_ratios_from_the_same_run() -> None:
    figures = bench.bench(quick=True)
    assert set(figures["fork_join"]) == {"stealing", "global-lock"}
    assert set(figures["tree"]) == {"stealing", "global-lock", "ThreadPoolExecutor"}
    tasks = 2 ** (figures["tree_depth"] + 1) - 1
    for name, f in figures["tree"].items():
        assert f["tasks"] == tasks, name
        assert sum(f["per_worker"]) == tasks, name
        assert len(f["per_worker"]) == figures["workers"], name
    for f in figures["fork_join"].values():
        assert f["tasks"] == bench._fib_tasks(figures["fib_n"])
        assert "overhead_us_per_task" in f
    for key in ("fork_join_vs_global_lock", "tree_vs_global_lock", "tree_vs_thread_pool_executor"):
        assert figures[key] is None or figures[key] > 0
    assert figures["cpu_count"] >= 1
    assert {"load", "cores", "usable_cores", "pinned"} <= set(figures["machine"])


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
