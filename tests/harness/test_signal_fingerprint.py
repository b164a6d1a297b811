"""The abstract state while a signal handler runs on the main thread (``--strategy states``).

A handler runs on a greenlet of its own that stands for the main thread until it returns; main's
own frames, where the signal interrupted it, lie beneath. Both are the main thread's state: two
states alike but for where main was interrupted have different futures, so their fingerprints
must differ (else one is pruned as the other and its outcomes are lost). Today such a state is
not fingerprinted at all (the handlers' own frame holds the harness's objects, which the
encoders refuse), so it is never pruned: sound, and what this test holds to; a fingerprint that
reads main's frames beneath the handler's would have to pass it too."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import pytest

from model_checks.harness import Options, patched
from model_checks.harness.rt import fingerprint as fingerprints
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.stateful import check_states
from tests.harness import signal_interrupt_programs as programs

pytestmark = pytest.mark.timeout(120)

Position = tuple[tuple[int, int], ...]


def _interrupted_main(ex: Execution) -> Position | None:
    """Where main's program frames stand (line, reads so far) while a handler runs on its behalf;
    None when no handler is running. Read from outside the fingerprint, to hold it to."""
    g = ex.backend._greenlets.get(0)  # type: ignore[attr-defined]
    if type(g).__name__ != "_Handlers":
        return None
    f = g.real.gr_frame
    out = []
    while f is not None:
        if f.f_code.co_filename == programs.__file__:
            out.append((f.f_lineno, len(f.f_locals.get("reads", ()))))
        f = f.f_back
    return tuple(out)


def _explore(state_of: Callable[[Execution], Hashable | None]) -> dict[Hashable, set[Position]]:
    """Each fingerprint taken while a handler ran, with where main was (None: not fingerprinted)."""
    seen: dict[Hashable, set[Position]] = {}

    def spy(ex: Execution) -> Hashable | None:
        state = state_of(ex)
        where = _interrupted_main(ex)
        if where is not None:
            seen.setdefault(state, set()).add(where)
        return state

    with patched(programs):
        result = check_states(
            lambda rt: programs.handler_in_a_loop() and None, Options(time_limit=60), fingerprint_fn=spy
        )
    assert result.verdict == "exhaustive", result.report()
    return seen


@pytest.mark.parametrize(
    "state_of", [fingerprints.fingerprint, fingerprints.walk_fingerprint], ids=["C", "walk"]
)
def test_where_main_was_interrupted_is_state(state_of: Callable[[Execution], Hashable | None]) -> None:
    seen = _explore(state_of)
    positions = set().union(*seen.values()) if seen else set()
    # the handler was met blocking with main in more than one turn of its loop: else the check is idle
    assert len(positions) >= 2, positions
    conflated = {state: where for state, where in seen.items() if state is not None and len(where) > 1}
    assert not conflated, f"one fingerprint, main interrupted at {list(conflated.values())}"
