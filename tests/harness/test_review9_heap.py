"""Review 9 (s20): two threads' heapq C calls on one list, each atomic under the GIL, are a race
by the detector's rules (as two ``list.append`` are). ``declare_atomic`` declares fields only, so
the report now says how to declare such a container: keep it in an object's field and declare the
field; each access through it is then a scheduling point and the list's accesses in that step are
not checked (``race_report._held_in_a_field``)."""

from __future__ import annotations

import pytest

from model_checks.harness import Options, declare_atomic
from model_checks.harness.declared import undeclare_atomic
from tests.harness import review9_heap_programs as prog
from tests.harness.patched_runs import assert_proved_race_free, assert_race, run_patched

pytestmark = pytest.mark.timeout(120)


def test_a_heap_in_a_local_says_how_to_declare_it() -> None:
    result = run_patched(prog, prog.heap_in_a_local, options=Options(time_limit=60))
    failure = assert_race(
        result, prog, "list (whole)", "heapq.heapreplace(h, 100 + i)", "heapq.heappushpop(h, 500 + i)"
    )
    assert "keep it in an object's field" in failure.details, failure.details


def test_a_heap_in_a_declared_field_is_proved() -> None:
    declare_atomic(prog.Jobs, "heap", "each heapq C call is GIL-atomic")
    try:
        result = run_patched(prog, prog.heap_in_a_declared_field, options=Options(time_limit=60))
    finally:
        undeclare_atomic(prog.Jobs, "heap")
    assert_proved_race_free(result)
