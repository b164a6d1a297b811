"""The fingerprint's walk of a thread's frames (``rt/thread_frames.py``): the C walk and its Python
twin give, at every state of a search, what the walk it replaced gives (``stacks._stack_of``, then
``frames.contents`` and ``frames.position`` for each frame, the module data of code under test);
a code object missing from the table is handed back to be entered; a frame whose stack depth is
not known is refused."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Hashable
from typing import Any

import pytest

from model_checks.harness import examples
from model_checks.harness.rt import fingerprint as fp
from model_checks.harness.rt import frames, thread_frames, under_test
from model_checks.harness.rt.native import NATIVE, NATIVE_WHY
from model_checks.harness.rt.object_kinds import _atom
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.rt.stacks import _below_chooser, _stack_of
from model_checks.harness.stateful import StatefulResult, check_states

pytestmark = pytest.mark.timeout(120)

Walk = Callable[[types.FrameType | None, dict[types.CodeType, Any], object], Any]
WALKS: list[tuple[str, Walk]] = [("python", thread_frames.thread_frames_in_python)]
if NATIVE is not None:
    WALKS.append(("c", NATIVE.thread_frames))


def _as_before(ex: Execution, tid: int) -> tuple[list[object], list[str]]:
    """The thread's frame parts and program modules as ``fingerprint`` read them before."""
    parts: list[object] = []
    names: list[str] = []
    for f in _stack_of(ex, tid):
        local, stack = frames.contents(f)
        parts.append((_atom(f.f_code), frames.position(f), local, stack))
        if under_test._program_file(f.f_code.co_filename):
            names.append(str(f.f_globals.get("__name__", "?")))
    return parts, names


def _walked(walk: Walk, start: types.FrameType | None) -> Any:
    while True:
        got = walk(start, thread_frames.TABLE, frames.NULL)
        if not isinstance(got, types.CodeType):
            return got
        thread_frames.TABLE[got] = thread_frames.entry(got)


def _compare(walk: Walk, seen: list[int]) -> Callable[[Execution], Hashable | None]:
    def fingerprint(ex: Execution) -> Hashable | None:
        current = ex.backend.current()
        for t in ex.threads:
            start = _below_chooser(ex) if t.tid == current else ex.backend.frame(t.tid)
            parts, module_data = _walked(walk, start)
            before, names = _as_before(ex, t.tid)
            assert parts == before
            assert [str(g.get("__name__", "?")) for g in module_data] == names
            seen.append(len(parts))
        return fp.fingerprint(ex)

    return fingerprint


@pytest.mark.parametrize(("name", "walk"), WALKS, ids=[name for name, _ in WALKS])
@pytest.mark.parametrize(
    "program",
    [examples.bounded_buffer(1, 2, 1, 1), examples.handoff(use_while=True), examples.counter(2, locked=True)],
    ids=["bounded-buffer", "handoff", "counter"],
)
def test_the_walk_reads_every_state_as_the_frames_were_read_before(
    name: str, walk: Walk, program: Any
) -> None:
    seen: list[int] = []
    result = check_states(program, fingerprint_fn=_compare(walk, seen))
    assert isinstance(result, StatefulResult) and result.verdict == "exhaustive"
    assert seen and max(seen) >= 2  # threads with frames of their own were read


@pytest.mark.parametrize(("name", "walk"), WALKS, ids=[name for name, _ in WALKS])
def test_the_work_lane_stop_drain_frames_are_read_as_before(name: str, walk: Walk) -> None:
    # imported here: a global of this module is read by the other cases' fingerprints
    from model_checks.commands.explore import build_scenario

    program = build_scenario("work-lane/stop-drain-races-posts", for_states=True)
    seen: list[int] = []
    result = check_states(program, fingerprint_fn=_compare(walk, seen), max_executions=60)
    assert result.failure is None and max(seen) >= 5


def test_the_kinds_are_numbered_as_the_c_module_numbers_them() -> None:
    if NATIVE is None:
        pytest.skip(f"no C module: {NATIVE_WHY}")
    names = ("SKIP", "STOP", "READ", "READ_GLOBALS")
    assert tuple(NATIVE.FRAME_KINDS) == names
    assert [getattr(thread_frames, n) for n in names] == list(range(4))


def _suspended() -> types.FrameType:
    def inner() -> types.FrameType:
        f = sys._getframe()
        assert f.f_back is not None
        return f.f_back

    return inner()


@pytest.mark.parametrize(("name", "walk"), WALKS, ids=[name for name, _ in WALKS])
def test_a_code_missing_from_the_table_is_handed_back_and_none_is_no_frame(name: str, walk: Walk) -> None:
    f = _suspended()
    assert walk(f, {}, frames.NULL) is f.f_code
    assert walk(None, {}, frames.NULL) == ([], [])


@pytest.mark.parametrize(("name", "walk"), WALKS, ids=[name for name, _ in WALKS])
def test_the_walk_stops_at_the_backend_loop_and_skips_machinery(name: str, walk: Walk) -> None:
    f = _suspended()
    outer = f.f_back
    assert outer is not None
    table: dict[types.CodeType, Any] = {
        f.f_code: (thread_frames.SKIP, 0, None, None),
        outer.f_code: (thread_frames.STOP, 0, None, None),
    }
    assert walk(f, table, frames.NULL) == ([], [])
    table[f.f_code] = (thread_frames.READ_GLOBALS, 7, None, frames.stack_depths(f.f_code))
    parts, module_data = walk(f, table, frames.NULL)
    assert [p[0] for p in parts] == [7] and module_data == [f.f_globals]


@pytest.mark.parametrize(("name", "walk"), WALKS, ids=[name for name, _ in WALKS])
def test_a_running_frame_whose_depth_is_not_known_is_refused(name: str, walk: Walk) -> None:
    # this test's own frame is running, and calls the walk through C code (``map``): it records no
    # stack depth, so the table's depths decide
    f = sys._getframe()
    table: dict[types.CodeType, Any] = {f.f_code: (thread_frames.READ, 1, None, None)}
    back = f.f_back
    while back is not None:
        table[back.f_code] = (thread_frames.SKIP, 0, None, None)
        back = back.f_back
    with pytest.raises((ValueError, frames.Unreadable), match="no stack depth"):
        list(map(lambda _: walk(f, table, frames.NULL), [0]))
    table[f.f_code] = (thread_frames.READ, 1, None, {})
    with pytest.raises((ValueError, frames.Unreadable), match="no stack depth"):
        list(map(lambda _: walk(f, table, frames.NULL), [0]))


def test_thread_frames_turns_a_refusal_into_unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuses(frame: object, table: object, null: object) -> object:
        raise ValueError("no stack depth at offset 4")

    monkeypatch.setattr(thread_frames, "_walk", refuses)
    with pytest.raises(frames.Unreadable, match="no stack depth"):
        thread_frames.thread_frames(None)
