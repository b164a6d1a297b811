"""The race detector's trace functions (docs/harness.md, "Data races"): the C tracer
(``_race_tracer.c``) and the Python one behave identically, and neither traces the scheduler's own
evaluation between steps (invariants, final checks) while the code under test stays traced."""

from __future__ import annotations

import dis
import os
import random
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from model_checks.harness import Options, Result, check, patched, race_frames, race_report, race_sites, races
from model_checks.harness.runtime import ControlledRuntime
from tests.harness import race_programs as prog

TRACERS = ["c", "python"]


@pytest.fixture(params=TRACERS)
def tracer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test with one trace function: the C one (skipped where it cannot be built, not
    CPython 3.11) or the Python fallback (as if it were not built)."""
    if request.param == "c":
        if race_frames.NATIVE is None:
            pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    else:
        monkeypatch.setattr(races, "NATIVE", None)
        monkeypatch.setattr(races, "stack_value", race_frames.py_stack_value)
        monkeypatch.setattr(races, "join", race_frames.py_join)
        monkeypatch.setattr(races, "sync_op", race_frames.py_sync_op)
    yield request.param


Record = tuple[str, int, bool, str]


def recorded(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Record], list[str]]:
    """Every access the detector records, and the code name of every site its handler sees."""
    accesses: list[Record] = []
    sites: list[str] = []
    access, site = races.RaceDetector._access, races.RaceDetector._site

    def spy_access(
        self: races.RaceDetector,
        tid: int,
        obj: object,
        key: object,
        write: bool,
        frame: types.FrameType,
        label: str,
        owner: type | None = None,
        **more: Any,
    ) -> None:
        named = race_report.describe(obj if owner is None else owner, key)
        accesses.append((frame.f_code.co_qualname, frame.f_lasti, write, label or named))
        access(self, tid, obj, key, write, frame, label, owner, **more)

    def spy_site(self: races.RaceDetector, frame: types.FrameType, entry: tuple[int, Any] | None) -> None:
        sites.append(frame.f_code.co_qualname)
        site(self, frame, entry)

    monkeypatch.setattr(races.RaceDetector, "_access", spy_access)
    monkeypatch.setattr(races.RaceDetector, "_site", spy_site)
    return accesses, sites


def shared_total(counter: prog.Counter) -> bool:
    # an invariant reads the threads' shared data with no lock: it runs between steps, in the
    # scheduler, so it must neither be traced nor recorded (nor, so, race with the threads)
    return counter.count >= 0 and len({counter.count: 1}) == 1


def with_invariant(program: Callable[[prog.Counter], None]) -> Callable[[ControlledRuntime], None]:
    def test(rt: ControlledRuntime) -> None:
        counter = prog.Counter()
        rt.invariant(lambda: shared_total(counter))
        rt.final(lambda: shared_total(counter))
        program(counter)

    return test


def locked(counter: prog.Counter) -> None:
    prog._run(counter.locked_inc, counter.locked_inc)


def racy(counter: prog.Counter) -> None:
    prog._run(counter.racy_inc, counter.racy_inc)


def run(test: Callable[[ControlledRuntime], None]) -> Result:
    with patched(prog):
        return check(test, Options(races=True, max_executions=50))


@pytest.mark.timeout(60)
def test_invariants_are_not_traced_and_code_under_test_is(
    tracer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    accesses, sites = recorded(monkeypatch)
    result = run(with_invariant(locked))
    assert result.verdict == "exhaustive" and result.races, result.report()
    # the threads' accesses to the counter are recorded: the detector does see them
    assert any(r[0] == "Counter.locked_inc" and r[3] == "Counter.count" and r[2] for r in accesses)
    # the invariant's and the final check's frames were never opcode-traced, so recorded nothing
    assert not any("shared_total" in s or "<lambda>" in s for s in sites), sorted(set(sites))
    assert not any("shared_total" in r[0] for r in accesses)


@pytest.mark.timeout(60)
def test_a_race_is_still_caught_with_an_invariant_reading_the_data(tracer: str) -> None:
    result = run(with_invariant(racy))
    assert result.failure is not None and result.failure.kind == "data_race", result.report()
    assert "Counter.count" in result.failure.message and "race_programs.py" in result.failure.message


PROGRAMS = [
    prog.lost_update,
    prog.locked_counter,
    prog.released_early,
    prog.dict_check_then_act,
    prog.dict_locked,
    prog.read_only_sharing,
    prog.through_condition,
    prog.through_queue,
    prog.through_event,
    prog.through_join,
]


def accesses_of(program: Callable[[], object], monkeypatch: pytest.MonkeyPatch) -> tuple[list[Record], str]:
    with monkeypatch.context() as m:
        accesses, _ = recorded(m)
        with patched(prog):
            result = check(lambda rt: program(), Options(races=True, max_executions=20, keep_going=True))
    return accesses, result.summary()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_the_c_and_python_tracers_record_the_same_accesses(
    program: Callable[[], object], monkeypatch: pytest.MonkeyPatch
) -> None:
    if race_frames.NATIVE is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    in_c, verdict_c = accesses_of(program, monkeypatch)
    monkeypatch.setattr(races, "NATIVE", None)
    monkeypatch.setattr(races, "stack_value", race_frames.py_stack_value)
    monkeypatch.setattr(races, "join", race_frames.py_join)
    monkeypatch.setattr(races, "sync_op", race_frames.py_sync_op)
    in_python, verdict_python = accesses_of(program, monkeypatch)
    assert in_c, "no access recorded: the comparison would prove nothing"
    assert in_c == in_python
    assert verdict_c.split(",")[0] == verdict_python.split(",")[0]


def test_the_c_tracer_is_built_where_it_can_be() -> None:
    # CI installs with `pip install -e .`: on 3.11 the extension must be there, or every verify
    # row with races on silently runs at the Python tracer's speed
    if sys.version_info[:2] != (3, 11) or os.environ.get("LANECHECK_PURE") == "1":
        pytest.skip("the C tracer is for CPython 3.11 builds that compile")
    if os.environ.get("LANECHECK_RACE_TRACER") == "python":
        pytest.skip("LANECHECK_RACE_TRACER=python")
    assert race_frames.NATIVE is not None, race_frames.NATIVE_WHY
    assert race_frames.tracer_kind() == "c"


def test_the_entry_kinds_agree_with_the_c_tracer() -> None:
    if race_frames.NATIVE is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    names = race_frames.NATIVE.KINDS
    assert names == race_sites.KINDS
    assert [getattr(race_sites, name) for name in names] == list(range(len(names)))
    assert set(race_sites.OPCODES.values()) == set(range(len(names)))


def _implementations(name: str) -> list[Callable[..., Any]]:
    found = [getattr(race_frames, f"py_{name}")]
    if race_frames.NATIVE is not None:
        found.append(getattr(race_frames.NATIVE, name))
    return found


@pytest.mark.parametrize("join", _implementations("join"))
def test_join_is_the_pointwise_maximum(join: Callable[[list[int], list[int]], None]) -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = [rng.randrange(5) for _ in range(rng.randrange(6))]
        b = [rng.randrange(5) for _ in range(rng.randrange(6))]
        expected = [max(x, y) for x, y in zip(a + [0] * len(b), b + [0] * len(a), strict=True)][
            : max(len(a), len(b))
        ]
        join(a, b)
        assert a == expected


@pytest.mark.parametrize("stack_value", _implementations("stack_value"))
def test_stack_value_refuses_a_frame_outside_a_trace_event(stack_value: Callable[..., object]) -> None:
    frame = sys._getframe(0)
    with pytest.raises(ValueError, match="deep on this frame's stack"):
        # called from C (``map``), so this frame is inside a C call: it stores no stack pointer
        list(map(stack_value, [frame], [1]))


@pytest.mark.parametrize("stack_value", _implementations("stack_value"))
def test_stack_value_reads_the_traced_frames_stack(stack_value: Callable[..., object]) -> None:
    seen: list[object] = []
    marker = object()
    holder = types.SimpleNamespace(value=1)

    def local(frame: types.FrameType, event: str, arg: object) -> Any:
        if event == "opcode" and frame.f_code is body.__code__:
            op = frame.f_code.co_code[frame.f_lasti]
            if op == dis.opmap["STORE_ATTR"]:
                seen.append(stack_value(frame, 1))  # the object stored into
                seen.append(stack_value(frame, 2))  # the value stored
        return local

    def glob(frame: types.FrameType, event: str, arg: object) -> Any:
        if frame.f_code is body.__code__:
            frame.f_trace_opcodes = True
            return local
        return None

    def body() -> None:
        holder.value = marker

    previous = sys.gettrace()
    sys.settrace(glob)
    try:
        body()
    finally:
        sys.settrace(previous)
    assert seen == [holder, marker]


@pytest.mark.parametrize("fast_local", _implementations("fast_local"))
def test_fast_local_reads_a_closure_variables_cell(fast_local: Callable[..., object]) -> None:
    """``LOAD_DEREF slot`` reads through the cell in the frame's slot: the cell itself is the
    race detector's location, one for the outer frame and every closure over it."""
    count = 0
    found: dict[str, object] = {}

    def slot_of(code: types.CodeType) -> int:
        derefs = [i.arg for i in dis.get_instructions(code) if i.opname.endswith("_DEREF")]
        names = [i.argval for i in dis.get_instructions(code) if i.opname.endswith("_DEREF")]
        slot = derefs[names.index("count")]
        assert slot is not None
        return slot

    def inner() -> int:
        found["inner"] = fast_local(sys._getframe(0), slot_of(inner.__code__))
        return count

    inner()
    frame = sys._getframe(0)
    outer = fast_local(frame, slot_of(frame.f_code))
    assert isinstance(outer, types.CellType) and outer is found["inner"]
    assert outer.cell_contents == 0
    with pytest.raises(ValueError, match="no local slot"):
        fast_local(frame, 10_000)


def test_sync_op_is_the_same_in_c_and_python() -> None:
    if race_frames.NATIVE is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    rng = random.Random(11)
    states: list[tuple[list[list[int]], dict[int, list[int]], dict[int, list[int]], list[int]]] = []
    for sync_op in (race_frames.NATIVE.sync_op, race_frames.py_sync_op):
        rng.seed(11)
        clocks = [[0] * 4 for _ in range(4)]
        writes: dict[int, list[int]] = {}
        reads: dict[int, list[int]] = {}
        everything: list[int] = []
        for step in range(400):
            tid = rng.randrange(4)
            objs = frozenset(rng.sample(range(6), rng.randrange(1, 3)))
            yielded = [rng.randrange(3)] * 4 if step % 7 == 0 else None
            sync_op(clocks[tid], tid, objs, rng.random() < 0.4, writes, reads, yielded, everything)
        states.append((clocks, writes, reads, everything))
    assert states[0] == states[1]
    assert any(c[i] > 0 for i, c in enumerate(states[0][0]))  # the epochs did advance


def test_sync_op_refuses_what_is_not_a_clock() -> None:
    if race_frames.NATIVE is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    with pytest.raises(TypeError):
        race_frames.NATIVE.sync_op((0, 0), 0, [1], False, {}, {}, None, [])
    with pytest.raises(IndexError):
        race_frames.NATIVE.sync_op([0], 3, [1], False, {}, {}, None, [])


settrace = sys.settrace  # the real one, taken before any patching
gettrace = sys.gettrace  # (patched, a controlled thread's gives the program's: None)


@pytest.mark.timeout(60)
def test_a_saved_c_tracer_restored_with_settrace_traces_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # execution.py restores ``sys.gettrace()`` with ``sys.settrace``: when that is the C tracer
    # (a check inside a controlled thread), it must come back as a working trace function
    native = race_frames.NATIVE
    if native is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    accesses, _ = recorded(monkeypatch)

    def program(rt: ControlledRuntime) -> None:
        counter = prog.Counter()
        # a second thread made first: the accesses of a thread alone are in no race, not recorded
        rt.start_thread(lambda: None, "other").join()
        saved = gettrace()
        assert isinstance(saved, native.Tracer)
        # (execution.py's calls, made here in its place: patch mode refuses the program's own)
        settrace(None)
        settrace(saved)  # as a Python-level trace function: called at the next call event
        # the call that reinstalls it, and the only one: its own accesses must be recorded
        counter.racy_inc()

    with patched(prog):
        result = check(program, Options(races=True, max_executions=1))
    assert result.failure is None, result.report()
    assert any(r[0] == "Counter.racy_inc" and r[2] for r in accesses), accesses


def _named_calls(shared: list[int]) -> None:
    # a listed function with no container among its arguments touches no shared data
    str(7), repr(1.5), sorted((3, 1)), max(2, 5)


def _named_call_on_a_list(shared: list[int]) -> None:
    str(shared)


@pytest.mark.timeout(60)
def test_the_c_tracer_calls_the_handler_only_for_a_named_call_with_a_container(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if race_frames.NATIVE is None:
        pytest.skip(f"no C tracer: {race_frames.NATIVE_WHY}")
    shared = [1, 2]
    accesses, sites = recorded(monkeypatch)
    with patched(prog):
        result = check(
            lambda rt: prog._run(lambda: _named_calls(shared), lambda: _named_call_on_a_list(shared)),
            Options(races=True, max_executions=5),
        )
    assert result.verdict == "exhaustive", result.report()
    assert "_named_calls" not in sites  # decided in C: no call into Python
    assert "_named_call_on_a_list" in sites
    assert ("_named_call_on_a_list", True) not in {(a[0], a[2]) for a in accesses}
    assert any(a[0] == "_named_call_on_a_list" and a[3] == "str(list)" for a in accesses), accesses
