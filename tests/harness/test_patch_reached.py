"""Patch mode stands in for the synchronisation objects a module's data reaches (``patch_reach``),
and puts the real ones back when it ends."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from model_checks.harness import Options, check, patched
from model_checks.harness.patch_imported import StandIn
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import reached_programs as prog

PROGRAMS = [
    prog.in_a_dict,
    prog.in_a_tuple,
    prog.in_a_named_tuple,
    prog.as_a_default,
    prog.in_a_closure,
    prog.in_a_partial,
    prog.in_a_slot,
    prog.inside_another_object,
    prog.in_a_class_list,
    prog.condition_in_a_dict,
    prog.in_a_set,
    prog.in_a_list_in_a_dict,
    prog.pool_made_at_import,
    prog.pool_never_shut_down,
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_a_lock_the_modules_data_reaches_is_interleaved(program: Callable[[], None]) -> None:
    with patched(prog):
        result = check(lambda rt: program(), Options(time_limit=60))
    assert result.verdict == "exhaustive", result.report()
    assert result.summary().startswith("exhaustive (for a data-race-free program"), result.summary()
    assert result.executions > 1  # the lock's operations were interleaved


def _reached() -> list[object]:
    return [
        prog.LOCKS["count"],
        prog.PAIR[0],
        prog.PAIR[1],
        prog.GUARDED.lock,
        prog._default.__defaults__[0],  # type: ignore[index]
        prog.CLOSED.__closure__[0].cell_contents,  # type: ignore[index]
        prog.PARTIAL.keywords["lock"],
        prog.SLOTTED.lock,
        prog.OUTER.inner.lock,
        prog.Registry.locks[0],
        prog.CONDITIONS["ready"],
        next(iter(prog.IN_A_SET)),
        prog.NESTED["locks"][0],
    ]


@pytest.mark.timeout(60)
def test_the_real_objects_are_back_when_patching_ends() -> None:
    before = _reached()
    assert not any(isinstance(x, StandIn) for x in before)
    with patched(prog):
        during = _reached()
        assert all(isinstance(x, StandIn) for x in during), during
        assert isinstance(prog.PAIR, tuple) and prog.GUARDED.name == "guarded"
    after = _reached()
    assert all(a is b for a, b in zip(before, after, strict=True))


@pytest.mark.timeout(60)
def test_the_real_objects_are_back_after_a_check_of_several_executions() -> None:
    """Each execution put copies of the lists inside a module's dict in its place (``patch_state``):
    the undo put the real lock back into the first list only, and a stand-in stayed (session 41)."""
    before = _reached()
    with patched(prog):
        result = check(lambda rt: prog.in_a_list_in_a_dict(), Options(time_limit=60))
    assert result.executions > 1, result.report()
    after = _reached()
    assert not any(isinstance(x, StandIn) for x in after), after
    assert all(a is b for a, b in zip(before, after, strict=True)), after


@pytest.mark.timeout(60)
def test_a_thread_made_at_import_is_a_controlled_thread_of_each_execution() -> None:
    with patched(prog):
        result = check(lambda rt: prog.thread_made_at_import_read_before_join(), Options(time_limit=30))
        again = check(lambda rt: prog.thread_made_at_import_read_before_join(), Options(time_limit=30))
    assert result.failure is not None and result.failure.kind == "data_race", result.report()
    assert "SEEN" in result.failure.message or "Box.n" in result.failure.message, result.failure.message
    assert again.failure is not None and again.failure.kind == "data_race"  # a fresh thread each time


STARTED = """
import threading
W = threading.Thread(target=print, args=("",))
W.start()
W.join()
"""
SUBCLASS = """
import threading
class Worker(threading.Thread):
    pass
W = Worker()
"""
BUSY_POOL = """
from concurrent.futures import ThreadPoolExecutor
POOL = ThreadPoolExecutor(max_workers=1)
POOL.submit(int).result()
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("source", "words"),
    [
        (STARTED, "a thread started at import"),
        (SUBCLASS, "a Worker made at import"),
        (BUSY_POOL, "a ThreadPoolExecutor given work at import"),
    ],
    ids=["started", "subclass", "busy-pool"],
)
def test_a_thread_or_pool_that_cannot_start_afresh_is_refused_by_name(
    source: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "made_at_import.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("made_at_import")
    try:
        with pytest.raises(UsageError, match=words), patched(module):
            pass
    finally:
        sys.modules.pop("made_at_import", None)
        getattr(module, "POOL", None) and module.POOL.shutdown()
