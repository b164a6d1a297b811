"""Review 11's row 19: a controlled thread handing work to an event loop that another controlled
thread runs is refused when it posts (``patch_asyncio.refused_posts``), under the default options
too: the check reported a virtual timeout's ``TimeoutError`` as the program's failure, with
"Exception ignored in BaseEventLoop.__del__" and "coroutine ... was never awaited" on stderr."""

from __future__ import annotations

import gc
import sys
import warnings
from collections.abc import Callable

import pytest

from model_checks.harness import Options
from model_checks.harness.rt.scheduler import UsageError
from tests.harness import review11_asyncio_programs as prog
from tests.harness.patched_runs import run_patched

pytestmark = pytest.mark.timeout(60)

REFUSAL = r"asyncio's event loop .* would wait on its real selector"


@pytest.mark.parametrize("virtual_timeouts", [True, False])
@pytest.mark.parametrize("program", [prog.submitted_to_a_loop_thread, prog.posted_to_a_loop_thread])
def test_a_post_to_another_threads_loop_is_refused(
    program: Callable[[], None], virtual_timeouts: bool
) -> None:
    with pytest.raises(UsageError, match=REFUSAL):
        run_patched(prog, program, options=Options(time_limit=30, virtual_timeouts=virtual_timeouts))


def test_the_refusal_leaves_no_noise(monkeypatch: pytest.MonkeyPatch) -> None:
    # (the unclosed loop's ``__del__`` failed when a later collection found it: run twice)
    ignored: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: ignored.append(repr(info.exc_value)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            with pytest.raises(UsageError, match=REFUSAL):
                run_patched(prog, prog.submitted_to_a_loop_thread, options=Options(time_limit=30))
            gc.collect()
    assert ignored == [], ignored
    assert not [w for w in caught if "never awaited" in str(w.message)], [str(w.message) for w in caught]


@pytest.mark.parametrize("program", [prog.posted_to_its_own_loop, prog.posted_by_the_only_thread])
def test_a_post_the_loop_needs_no_wait_for_still_runs(program: Callable[[], None]) -> None:
    result = run_patched(prog, program, options=Options(time_limit=30))
    assert result.verdict == "exhaustive", result.report()
