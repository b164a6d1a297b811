"""Session 46: orders DPOR and state pruning took as commuting though the outcome hangs on them
(review 13's F1 and F5; ``strategies/observed.py``). Each failing program was proved
("exhaustive") by ``dpor``, ``dpor-ipb`` and state pruning before, and found by ``dfs``; each
twin stays proved by all of them; an ordinary program is explored as before."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.harness import Options, Result, check, patched
from model_checks.harness.stateful import check_states
from model_checks.harness.strategies import observed
from tests.harness import session46_drops_programs as prog
from tests.harness.patched_runs import DRF, assert_fails

pytestmark = pytest.mark.timeout(180)

STRATEGIES = ("dpor", "dpor-ipb", "dfs", "states")
# (state pruning too, since the objects an execution drops die there and then: its fingerprint's
# memo, the race detector's strong references and an aborted thread's traceback kept them, and
# their finalizers ran in a later execution or never: test_session46_late_finalizers.py)


def _run(program: Callable[[], object], strategy: str) -> Result:
    options = Options(time_limit=60, minimize=False)
    with patched(prog):
        if strategy == "states":
            return check_states(lambda rt: program(), options)
        return check(lambda rt: program(), options.with_(strategy=strategy))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("program", [prog.callback_in_b, prog.finalizer_in_b])
def test_where_a_finalizer_runs_is_explored(program: Callable[[], object], strategy: str) -> None:
    assert_fails(_run(program, strategy), "assertion", "['A']")


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize(
    ("program", "words"),
    [
        (prog.still_alive, "object already collected"),  # a weak reference looked up
        (prog.counted_alive, "[0]"),  # a ``WeakSet``'s members counted
        (prog.generator_finally_in_b, "['A']"),  # a generator with a ``finally``
    ],
)
def test_an_objects_death_seen_otherwise_is_explored(
    program: Callable[[], object], words: str, strategy: str
) -> None:
    assert_fails(_run(program, strategy), "assertion", words)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("program", [prog.callback_anywhere, prog.finalizer_anywhere])
def test_finalizers_taken_anywhere_are_proved(program: Callable[[], object], strategy: str) -> None:
    result = _run(program, strategy)
    assert result.verdict == "exhaustive", result.summary()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_weak_reference_alive_or_not_is_proved(strategy: str) -> None:
    result = _run(prog.alive_or_not, strategy)
    assert result.verdict == "exhaustive", result.summary()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_worker_started_as_another_ends_may_get_its_ident(strategy: str) -> None:
    assert_fails(
        _run(prog.sessions_overlapping, strategy), "exception", "got the session of a finished thread"
    )


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_sessions_removed_are_proved(strategy: str) -> None:
    result = _run(prog.sessions_removed, strategy)
    assert result.verdict == "exhaustive", result.summary()


@pytest.mark.parametrize("strategy", ["dpor", "dpor-ipb", "states"])
def test_an_ordinary_program_is_explored_as_before(strategy: str) -> None:
    """No ident read, no weak reference, no finalizer: no search starts again, nothing is taken
    as dependent beyond what it was (main's executions: 11 for DPOR; state pruning's count hangs
    on the checks run before it in the process, 54 or 57, on main as here)."""
    result = _run(prog.plain_counter, strategy)
    assert result.verdict == "exhaustive", result.summary()
    assert result.summary().startswith(DRF) or strategy == "states"
    assert not observed.IDENTS_READ[0] and not observed.LIFETIMES[0]
    if strategy != "states":
        assert result.executions == 11, result.executions


@pytest.mark.parametrize("strategy", ["dpor", "states"])
def test_a_librarys_generators_and_weak_references_switch_nothing(strategy: str) -> None:
    """``as_completed`` is a generator with a ``finally`` (and ``concurrent.futures.thread``
    makes weak references): neither is the program observing a lifetime (with the library's
    generator counted, this program was bounded at 60 s under ``dpor-ipb``, 6,020 executions:
    the patched catalogue's proof of it lost)."""
    from tests.harness import threading_api_programs

    with patched(threading_api_programs):
        options = Options(time_limit=120, minimize=False, max_executions=50)
        program = threading_api_programs.futures_as_completed
        if strategy == "states":
            check_states(lambda rt: program(), options)
        else:
            check(lambda rt: program(), options.with_(strategy=strategy))
    assert not observed.LIFETIMES[0]
