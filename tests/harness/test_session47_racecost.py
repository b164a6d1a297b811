"""Session 47: the race detector's cost on the state search (issue 16, ``work-lane/
stop-drain-races-posts``): a thread alone records no access, and the declared fields stay
installed for a whole state search."""

from __future__ import annotations

import types
from typing import Any

import pytest

from model_checks.harness import declare_atomic, races, undeclare_atomic
from model_checks.harness.options import Options
from model_checks.harness.patch import patched
from model_checks.harness.rt import encoder
from model_checks.harness.stateful import StatefulResult, check_states
from tests.harness import racecost_programs as prog
from tests.harness.patched_runs import assert_outcomes, assert_race, run_patched, run_with_outcomes


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, bool]]:
    """The (code name, line, write) of every access the detector records (gives a location)."""
    seen: list[tuple[str, int, bool]] = []
    access = races.RaceDetector._access

    def spy(
        self: races.RaceDetector, tid: int, obj: object, key: object, write: bool, *more: Any, **kw: Any
    ) -> None:
        before = self.accesses
        access(self, tid, obj, key, write, *more, **kw)
        frame = more[0]
        if self.accesses > before and isinstance(frame, types.FrameType):
            seen.append((frame.f_code.co_name, frame.f_lineno, write))

    monkeypatch.setattr(races.RaceDetector, "_access", spy)
    return seen


def _line(text: str) -> int:
    with open(prog.__file__) as fh:
        return next(i for i, src in enumerate(fh, 1) if text in src)


@pytest.mark.timeout(60)
def test_a_thread_alone_records_no_access(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before any other thread is made, every access of the main thread happens before every
    later one (program order, then the spawns): none is recorded. After, they are."""
    seen = _recorded(monkeypatch)
    result = run_with_outcomes(prog, prog.alone_then_joined, races=True)
    assert_outcomes(result, {5})
    lines = {line for name, line, _ in seen if name == "alone_then_joined"}
    assert _line("box.value = 1  # alone") not in lines, seen
    assert _line("box.value += box.value") not in lines, seen
    assert _line("return box.value  # after the join") in lines, seen


@pytest.mark.timeout(60)
def test_a_race_on_a_location_first_written_alone_is_still_found() -> None:
    result = run_patched(prog, prog.alone_then_racing, races=True)
    assert_race(result, prog, "Box.value", "box.value = 2  # main's write", "seen.append(box.value)")


@pytest.mark.timeout(60)
def test_a_method_shadowed_by_a_thread_alone_restarts_no_search() -> None:
    """A dataclass ``__init__`` run alone stores an object's own ``label`` over its class's
    function: no look-up of another thread can race with that store, so the look-ups of
    ``label`` are not made reads and the search does not start again."""
    result = run_with_outcomes(prog, prog.label_set_alone, races=True)
    assert_outcomes(result, {2})
    assert not [note for note in result.notes if "rebound at" in note], result.notes


@pytest.mark.timeout(60)
def test_a_method_shadowed_after_the_start_is_still_a_race() -> None:
    result = run_patched(prog, prog.label_set_racing, races=True)
    assert any("Env.label rebound at" in note for note in result.notes), result.notes
    assert_race(result, prog, "Env.label", "env.label = _other", "seen.append(env.label(1))")


@pytest.mark.timeout(120)
def test_the_state_search_keeps_the_declared_fields_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The declared fields' descriptors go on before the search takes the objects alive and come
    off after it: the classes' dicts keep their versions from one execution to the next, and the
    fingerprint's static section is written once (installed and removed by each execution, the
    descriptors were new objects each time and every state wrote the section again)."""
    made: list[int] = []
    section_init = encoder._Section.__init__

    def counting(self: encoder._Section, seeds: Any) -> None:
        made.append(1)
        section_init(self, seeds)

    monkeypatch.setattr(encoder._Section, "__init__", counting)
    before = prog.Box.__dict__.get("stop")
    declare_atomic(prog.Box, "stop", "a stop flag (test)")
    try:
        with patched(prog):
            result = check_states(
                lambda rt: (lambda value: lambda: value)(prog.flag_after_start()),
                Options(races=True, minimize=False),
            )
    finally:
        undeclare_atomic(prog.Box, "stop")
    assert isinstance(result, StatefulResult)
    assert result.verdict == "exhaustive", result.report()
    assert set(result.outcomes) == {0, 1, 2, 3, 4}  # every order of the flag's store and loads
    assert result.states >= 50, result.figures()
    # (measured: 3 writings for 89 states; 96 when each execution installed its own descriptors)
    assert len(made) <= 5, (len(made), result.figures())
    assert prog.Box.__dict__.get("stop") is before  # the descriptor is gone after the search
