"""What session 46 stopped doing at every access, thread or execution stays right: the race
detector reads an access's code and its object's id without an audit event
(``race_frames.frame_code`` and ``address``: with the process watch's audit hook installed each
event cost CPython about 1,500 and 460 instructions), and still finds the race; a controlled
thread's recursion depth is read and lent in C (``rt/recursion.py``), as deep as ctypes read it."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from model_checks.harness import check, patched
from model_checks.harness.race_frames import NATIVE

# A check of a racy counter in a fresh process (an audit hook cannot be removed), counting the
# audit events raised from the race detector's own frames while it runs.
_COUNTED = textwrap.dedent(
    """
    import collections, sys
    from model_checks.harness import check, patched
    from tests.harness import session46_cost_programs as programs

    seen = collections.Counter()
    # (the modules of the detector's path at every access; not what runs once a check or a thread)
    HOT = {f"model_checks.harness.{m}" for m in ("races", "race_attributes", "race_methods")}
    ON = [False]

    def hook(event, args):
        if ON[0] and event in ("builtins.id", "object.__getattr__"):
            name = sys._getframe(1).f_globals.get("__name__", "")
            if name in HOT:
                seen[(event, name)] += 1

    sys.addaudithook(hook)
    with patched(programs):
        ON[0] = True
        result = check(programs.racy_counter, strategy="dfs")
        ON[0] = False
    print(result.failure.kind if result.failure else None, result.executions, dict(seen))
    """
)


@pytest.mark.timeout(120)
@pytest.mark.skipif(NATIVE is None, reason="the C readers (without them: the audited reads)")
def test_the_race_detector_reads_codes_and_ids_without_audit_events() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _COUNTED], capture_output=True, text=True, timeout=100, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    kind, executions, seen = done.stdout.split(maxsplit=2)
    assert kind == "data_race", done.stdout
    assert int(executions) >= 1
    assert seen.strip() == "{}", seen


def _depth_both_ways() -> tuple[int | None, int | None]:
    from model_checks.harness.rt import recursion

    native = recursion.depth()
    kept, recursion._USED = recursion._USED, None  # (the ctypes reading, as before session 46)
    try:
        return native, recursion.depth()
    finally:
        recursion._USED = kept


def _nested(n: int) -> tuple[int | None, int | None]:
    return _depth_both_ways() if n == 0 else _nested(n - 1)


@pytest.mark.skipif(NATIVE is None, reason="the C reader of the recursion counters")
def test_the_recursion_depth_read_in_c_is_the_one_ctypes_reads() -> None:
    for n in (0, 1, 5, 40):
        native, through_ctypes = _nested(n)
        assert native is not None and native == through_ctypes, (n, native, through_ctypes)


@pytest.mark.timeout(120)
@pytest.mark.skipif(NATIVE is None, reason="the C reader of the recursion counters")
def test_a_controlled_thread_is_given_its_depth_without_ctypes_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from model_checks.harness.rt import recursion
    from tests.harness import review7_alarms_programs as deep

    calls: list[int] = []
    real_state = recursion._state

    def counted() -> int | None:
        calls.append(1)
        return real_state()  # type: ignore[no-any-return]

    monkeypatch.setattr(recursion, "_state", counted)
    with patched(deep):
        result = check(lambda rt: deep.deep_recursion_worker(), races=False)
    assert result.verdict == "exhaustive", result.report()
    assert calls == []
