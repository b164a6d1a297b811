"""The eleventh outside review's row 15 (session 43, ``review11_numpy_programs.py``): numpy's
global generator, seeded and drawn by two threads, stopped the check with "the test is not
deterministic" (numpy.random, imported lazily in the first execution, held its controlled lock;
each execution started from the last one's draws). Now each of its functions is an operation on
the generator, and every execution starts from the generator as the check's start found it."""

from __future__ import annotations

import subprocess
import sys
from functools import partial

import pytest

np = pytest.importorskip("numpy")

from tests.harness import review11_numpy_programs as prog  # noqa: E402
from tests.harness.patched_runs import assert_outcomes, run_with_outcomes  # noqa: E402

pytestmark = pytest.mark.timeout(180)

_run = partial(run_with_outcomes, prog)


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_two_threads_seeding_the_global_generator(strategy: str) -> None:
    """u01 (BUGGY): some order draws A's value after B's seed and draw (was "not deterministic")."""
    assert_outcomes(_run(prog.global_seeded, strategy=strategy), {True, False})


def test_a_generator_of_each_threads_own_proves() -> None:
    assert_outcomes(_run(prog.private_seeded), {True})


def test_each_execution_starts_from_the_generator_as_the_check_found_it() -> None:
    """One thread's unseeded draw: the same value in every execution (the draws of one execution
    were the next one's start), the generator's state put back after the check."""
    np.random.seed(3)
    expected = float(np.random.RandomState(3).rand())
    result = _run(prog.drawn_unseeded, strategy="dfs", preemption_bound=None)
    assert_outcomes(result, {expected})
    assert "numpy's global generator: the state the check found, in every execution" in result.draws
    assert float(np.random.rand()) == expected  # (the check's start, put back after it)
    assert "numpy" not in _run(prog.private_seeded).draws  # (a check that did not use it)


_NOT_IMPORTED = """
import sys
from tests.harness import review11_state_programs as prog
from tests.harness.patched_runs import run_with_outcomes
result = run_with_outcomes(prog, prog.shown_once)
print(result.verdict, "numpy" in sys.modules)
"""


def test_the_harness_imports_no_numpy_for_a_program_that_did_not() -> None:
    out = subprocess.run([sys.executable, "-c", _NOT_IMPORTED], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["exhaustive", "False"], out.stdout + out.stderr


_LAZY_PROGRAM = """
import threading
from tests.harness.program_threads import start_then_release
def main():
    import numpy as np
    gate, out = threading.Lock(), {}
    def a():
        np.random.seed(7)
        with gate:
            pass
        out["a"] = float(np.random.rand())
    def b():
        np.random.seed(7)
        out["b"] = float(np.random.rand())
    gate.acquire()
    start_then_release(gate, a, b)
    return out["a"] == out["b"] == float(np.random.RandomState(7).rand())
"""
_LAZY = f"""
import sys
from tests.harness.patched_runs import module_from_source, run_with_outcomes
prog = module_from_source({_LAZY_PROGRAM!r}, "review11_lazy_numpy", "review11_lazy_numpy.py")
before = "numpy" in sys.modules
result = run_with_outcomes(prog, prog.main)
print(before, result.verdict, sorted(result.outcomes))
"""


def test_numpy_imported_by_the_explored_function_itself() -> None:
    """u01 with ``import numpy as np`` inside the functions (numpy not loaded when the check
    begins: a fresh interpreter): found, where its first execution imported it ("not
    deterministic")."""
    out = subprocess.run([sys.executable, "-c", _LAZY], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "exhaustive", "[False,", "True]"], out.stdout + out.stderr
