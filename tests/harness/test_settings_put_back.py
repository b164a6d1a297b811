"""The interpreter's settings an execution changed for good are put back (``process_saved``, after
an execution the watch saw change them; ``patch_state`` no longer does it too): the next execution
and the check's caller see the values the check found."""

from __future__ import annotations

import gc
import socket
import sys
from collections.abc import Iterator

import pytest

from tests.harness import settings_programs as prog
from tests.harness.patched_runs import assert_outcomes, run_with_outcomes

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def found() -> Iterator[tuple[object, ...]]:
    """The settings now, set again after the test whatever it left."""
    now = prog.settings()
    yield now
    sys.set_int_max_str_digits(now[0])  # type: ignore[arg-type]
    gc.set_threshold(*now[1])  # type: ignore[misc]
    socket.setdefaulttimeout(now[2])  # type: ignore[arg-type]


@pytest.mark.parametrize("strategy", ["dpor-ipb", "dpor"])
def test_the_digit_limit_thresholds_and_timeout_an_execution_left_are_put_back(
    strategy: str, found: tuple[object, ...]
) -> None:
    assert found != prog.CHANGED  # (else a missed put-back would go unseen)
    result = run_with_outcomes(prog, prog.changed_for_good, strategy=strategy)
    assert result.executions > 1  # (the later ones start after a dirty one)
    assert_outcomes(result, {found})
    assert prog.settings() == found


def test_settings_changed_between_two_checks_are_the_second_checks_start(found: tuple[object, ...]) -> None:
    run_with_outcomes(prog, prog.changed_for_good, strategy="dpor-ipb")
    sys.set_int_max_str_digits(4400)
    gc.set_threshold(600, 6, 6)
    socket.setdefaulttimeout(3.0)
    between = prog.settings()
    result = run_with_outcomes(prog, prog.changed_for_good, strategy="dpor-ipb")
    assert_outcomes(result, {between})
    assert prog.settings() == between
