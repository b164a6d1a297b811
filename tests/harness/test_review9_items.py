"""Review 9 (s05, s06, s23): a subscript of an object that is no listed container, whose item
methods are C code or the standard library's untraced Python, was no access, so lost updates on
an ``mmap``, a numpy array and a ``configparser`` section were proved race free. Now such a
subscript is an access of (object, key) at the program's line (``race_items``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result
from model_checks.harness.options import Strategy
from tests.harness import review9_items_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(120)


def _run(program: Callable[[], None], strategy: Strategy = "dpor-ipb") -> Result:
    return run_patched(prog, program, options=Options(strategy=strategy, time_limit=60))


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_lost_update_on_an_mmap_is_a_race(strategy: Strategy) -> None:
    assert_race(_run(prog.mmap_counter, strategy), prog, "mmap[0]", "mm[0] = v + 1", "v = mm[0]")


def test_a_lost_update_on_a_numpy_array_is_a_race() -> None:
    pytest.importorskip("numpy")
    assert_race(_run(prog.numpy_counter), prog, "ndarray[0]", "a[0] = v + 1", "v = a[0]")


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_lost_update_on_a_config_section_is_a_race(strategy: Strategy) -> None:
    assert_race(
        _run(prog.config_counter, strategy),
        prog,
        "SectionProxy['hits']",
        'cfg["stats"]["hits"] = str(n + 1)',
        'n = int(cfg["stats"]["hits"])',
    )


def test_a_message_header_and_a_weak_key_count_are_races() -> None:
    assert_race(_run(prog.message_header), prog, "Message['Subject']", 'del msg["Subject"]')
    assert_race(_run(prog.weak_key_counter), prog, "WeakKeyDictionary[key]", "counts[key] = counts[key] + 1")


@pytest.mark.parametrize(
    "program",
    [prog.mmap_counter_locked, prog.mmap_own_positions, prog.config_counter_locked, prog.guarded_mapping],
)
def test_locked_or_disjoint_twins_are_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))
