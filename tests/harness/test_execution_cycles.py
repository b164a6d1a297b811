"""An explored execution of the standard scenario is freed by reference counting: the execution
drops its links to the program once the next one starts (``Execution.release``), and the
scheduler under test drops its own cycles once its Stop has joined the workers, so nothing of it
waits for the cyclic collector (whose passes over those objects were about 6% of the time)."""

from __future__ import annotations

import gc

from model_checks.bench.harness import standard_scenario
from model_checks.harness import Options, check


def test_explored_executions_leave_nothing_to_the_cyclic_collector() -> None:
    program = standard_scenario()
    gc.collect()
    # an earlier test's last execution may still be held (a failing check's report keeps it) and
    # let go while this check runs: only what this check made counts
    before = {id(o) for o in gc.get_objects() if type(o).__name__ in ("Execution", "WorkerScheduler")}
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = check(program, Options(strategy="pct", seed=7, max_executions=12, backend="greenlet"))
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if id(o) not in before]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert result.failure is None
    # only the last execution's (kept until the check returns: ``Search.previous``)
    assert left.count("WorkerScheduler") <= 1
    assert left.count("Execution") <= 1
