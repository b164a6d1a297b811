"""The deterministic interleaving harness: run real code under a controlled scheduler.

Public surface (everything else is internal)::

    from model_checks.harness import Options, Result, check, explore, patched, replay, schedules

    def racy(rt):
        n = [0]
        def inc():
            v = n[0]; rt.yield_point(); n[0] = v + 1
        ts = [rt.start_thread(inc, f"t{i}") for i in range(2)]
        for t in ts:
            t.join()
        def final():
            assert n[0] == 2, n[0]
        return final

    result = check(racy, Options(strategy="dpor"))   # result.verdict == "failed"
"""

from typing import TYPE_CHECKING, Any

# First: importing ``core`` decides between the compiled core and its Python sources (core.py)
from model_checks.harness import core  # isort: skip
from model_checks.harness import reference_fields  # noqa: F401  # isort: skip  (declares the reference's fields)
from model_checks.harness.api import ExplorationFailed, ReplayDivergence, check, explore, replay
from model_checks.harness.declared import declare_atomic, undeclare_atomic
from model_checks.harness.options import Failure, Options, Result
from model_checks.harness.patch import patched
from model_checks.harness.runtime import ControlledRuntime

if TYPE_CHECKING:
    from model_checks.harness.stateful import check_states
    from model_checks.harness.strategies.hypothesis import schedules


def __getattr__(name: str) -> Any:
    # ``schedules`` needs Hypothesis, which the CLI's start-up would otherwise import for nothing.
    if name == "schedules":
        from model_checks.harness.strategies.hypothesis import schedules

        return schedules
    # ``check_states`` brings the heap fingerprint (frames, value stacks), which ``check`` never needs.
    if name == "check_states":
        from model_checks.harness.stateful import check_states

        return check_states
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ControlledRuntime",
    "ExplorationFailed",
    "Failure",
    "Options",
    "ReplayDivergence",
    "Result",
    "check",
    "check_states",
    "core",
    "declare_atomic",
    "explore",
    "patched",
    "replay",
    "schedules",
    "undeclare_atomic",
]
