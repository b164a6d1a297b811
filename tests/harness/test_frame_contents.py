"""The fingerprint's frame reader in C (``_race_tracer.frame_contents`` through
``frames.native_contents``) reads what the ctypes reader (``frames.contents``) reads: the same
slots, the same objects, the same empty-slot marker, on a suspended frame that recorded its stack
depth and on one that did not (a caller in the middle of a call); a depth outside the frame's
stack is refused."""

from __future__ import annotations

import sys
import types
from collections.abc import Generator

import pytest

from model_checks.designs.work_lane.scenarios import SCENARIOS
from model_checks.harness import Options
from model_checks.harness.rt import fingerprint, frames
from model_checks.harness.rt.native import NATIVE, NATIVE_WHY
from model_checks.harness.stateful import StatefulResult, check_states

pytestmark = pytest.mark.timeout(120)


def _native() -> frames.NativeRead:
    if NATIVE is None:
        pytest.skip(f"no C module: {NATIVE_WHY}")
    read: frames.NativeRead = NATIVE.frame_contents
    return read


def _same(a: tuple[list[object], list[object]], b: tuple[list[object], list[object]]) -> bool:
    pairs = zip(a, b, strict=True)  # (locals, locals), (stack, stack)
    return all(len(x) == len(y) and all(p is q for p, q in zip(x, y, strict=True)) for x, y in pairs)


def _suspended() -> Generator[int, None, None]:
    unset: int
    box = [1, 2, 3]
    with open(__file__) as handle:  # a with block's exit function lives on the stack
        for item in box:  # and so does the loop's iterator
            yield item + len(handle.name)
    del unset  # noqa: F821  (a local never bound: an empty slot)


def test_a_suspended_generator_reads_the_same() -> None:
    native = frames.native_contents(_native())
    gen = _suspended()
    assert isinstance(gen, types.GeneratorType)
    next(gen)
    frame = gen.gi_frame
    assert isinstance(frame, types.FrameType)
    a, b = frames.contents(frame), native(frame)
    assert _same(a, b), (a, b)
    assert frames.NULL in a[0] and a[1], a  # an empty local and a non-empty stack were compared
    gen.close()


def test_a_caller_in_the_middle_of_a_call_reads_the_same() -> None:
    native = frames.native_contents(_native())
    # the caller's frame recorded no depth (it runs this call): the depth comes from the bytecode
    assert _native()(sys._getframe(0), -1, frames.NULL) is None

    Contents = tuple[list[object], list[object]]

    def callee(*args: object) -> tuple[Contents, Contents]:
        caller = sys._getframe(1)
        return frames.contents(caller), native(caller)

    a, b = callee("x", [1])
    assert _same(a, b), (a, b)


def test_a_depth_beyond_the_frames_stack_is_refused_not_read() -> None:
    read = _native()
    gen = _suspended()
    assert isinstance(gen, types.GeneratorType)
    next(gen)
    frame = gen.gi_frame
    assert frame is not None
    with pytest.raises(ValueError, match="out of range"):
        read(frame, frame.f_code.co_stacksize + 1, frames.NULL)
    with pytest.raises(ValueError, match="out of range"):
        read(frame, -2, frames.NULL)
    gen.close()


def test_a_search_stores_as_many_states_with_either_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    _native()
    options = Options(races=False, minimize=False, time_limit=60)
    found = []
    for reader in (frames.contents, frames.native_contents(_native())):
        monkeypatch.setattr(fingerprint, "_contents", reader)
        result = check_states(SCENARIOS["work-lane/stop-from-callback"](), options)
        assert isinstance(result, StatefulResult) and result.verdict == "exhaustive", result.figures()
        found.append((result.states, result.executions, result.outcomes))
    assert found[0] == found[1], found
