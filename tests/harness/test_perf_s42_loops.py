"""Session 42: a loop's later turns (review 9's reads of the container, s04/s49) cost a call of
the detector's handler each; over a list, dict or set only the looping frame holds, which no other
thread wrote, the C filter now lets them go unrecorded (``_race_filter.c``, ``frame_owned``). A
container handed to a worker between two turns, or held elsewhere too, is still read at each turn
(review 9's own programs: ``test_review9_loops.py``)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from model_checks.harness import Options, race_frames, races
from model_checks.harness.race_frames import NATIVE
from model_checks.harness.race_sites import RUN
from tests.harness import perf_s42_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(120)

native = pytest.mark.skipif(NATIVE is None, reason="the C tracer is not built")


@pytest.fixture(params=["c", "python"])
def tracer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each tracer (the Python one, ``race_frames.py_owned_turn``, skips the same turns)."""
    if request.param == "c" and NATIVE is None:
        pytest.skip("the C tracer is not built")
    if request.param == "python":
        monkeypatch.setattr(races, "NATIVE", None)
        monkeypatch.setattr(races, "stack_value", race_frames.py_stack_value)
        monkeypatch.setattr(races, "join", race_frames.py_join)
        monkeypatch.setattr(races, "sync_op", race_frames.py_sync_op)
    return str(request.param)


def test_a_turn_after_a_worker_wrote_the_handed_list_races(tracer: str) -> None:
    """The one execution where the worker appends and lets go of the list before the next turn:
    the list is the loop frame's alone again, but the worker's write is in the shadow memory
    (without ``virtual_timeouts`` the worker runs before the sleep ends; it was proved race free
    with the filter not reading the shadow memory)."""
    options = Options(max_executions=1, virtual_timeouts=False)
    result = run_patched(prog, prog.handed_between_turns, options=options)
    assert_race(result, prog, "list (whole)", "for x in xs:", "box.pop().append(3)")


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_a_turn_over_a_list_also_in_a_field_races(strategy: Any, tracer: str) -> None:
    result = run_patched(prog, prog.held_in_a_field, options=Options(strategy=strategy, max_executions=1))
    assert_race(result, prog, "list (whole)", "for item in xs:", "holder.items.append(4)")


def test_a_turn_over_a_set_handed_by_a_weak_reference_races(tracer: str) -> None:
    """A set (unlike a list or a dict) takes weak references, which add no count: with one the set
    is not the frame's own (proved race free before the filter read the weak references)."""
    result = run_patched(prog, prog.weakly_handed_set, options=Options(strategy="dfs"))
    assert_race(result, prog, "set[4] and set (whole)", "for _ in s:", "s.add(4)")


@native
def test_turns_over_the_frames_own_containers_call_no_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each turn of these loops follows an operation (a new epoch): before session 42 each was a
    call of the handler; now none is, and the program is still proved. Nor is the end of each
    thread (the harness's ``Done`` record, a dataclass, had an ``__init__`` made by ``exec``: traced
    as a program's code, two handler calls a thread)."""
    turns: Counter[str] = Counter()
    site = races.RaceDetector._site

    def counted(self: races.RaceDetector, frame: Any, entry: Any) -> None:
        if entry is not None and entry[0] == RUN:
            turns[frame.f_code.co_name] += 1
        if frame.f_code.co_filename == "<string>":  # (the harness's ``Done`` was a dataclass)
            turns["<string>"] += 1
        site(self, frame, entry)

    monkeypatch.setattr(races.RaceDetector, "_site", counted)
    assert_proved_race_free(run_patched(prog, prog.own_loops, options=Options(time_limit=60)))
    assert turns["work"] == 0 and turns["join_all"] == 0 and turns["<string>"] == 0, turns
    turns.clear()
    run_patched(prog, prog.held_in_a_field, options=Options(max_executions=1))
    assert turns["held_in_a_field"] > 0, turns  # (the counting sees turns where there are some)
