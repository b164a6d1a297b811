"""Review 9 (s04, s49): a loop's turns after its first were "not looked at", so a worker that
signalled after its first turn, then went on over a list or dict another thread changed, was proved
race free. Now each turn over a list, dict or set (through an ``enumerate`` too) is a read of the
container, recorded once a step per site (the C filter's ``loop_container``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result
from model_checks.harness.options import Strategy
from tests.harness import review9_loop_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(120)


def _run(program: Callable[[], None], strategy: Strategy = "dpor-ipb") -> Result:
    return run_patched(prog, program, options=Options(strategy=strategy, time_limit=60))


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_later_turn_over_a_list_races_with_an_append(strategy: Strategy) -> None:
    assert_race(
        _run(prog.list_loop_late, strategy),
        prog,
        "list (whole)",
        "for i, x in enumerate(xs):",
        "xs.append(4)",
    )


def test_a_later_turn_over_a_dict_races_with_an_insert() -> None:
    assert_race(_run(prog.dict_loop_late), prog, "dict[99] and dict (whole)", "for _k in d:", 'd[99] = "z"')


@pytest.mark.parametrize("program", [prog.list_loop_locked, prog.local_loops])
def test_locked_and_local_loops_are_proved(program: Callable[[], None]) -> None:
    assert_proved_race_free(_run(program))


def test_a_race_in_generated_code_names_the_programs_line() -> None:
    """s24: a race inside code ``exec`` made (``<string>``) was reported at ``<string>:11`` with an
    empty source line; it is reported at the innermost caller with a real file."""
    failure = assert_race(_run(prog.generated_code_race), prog, "_Box.n", "add(box)  # the program's line")
    assert "<string>" not in failure.message, failure.message
    failure = assert_race(_run(prog.mp_value_race), prog, "c_int.value", "v.value += 1")
    assert "<string>" not in failure.message, failure.message
