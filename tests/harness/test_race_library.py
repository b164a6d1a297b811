"""The data-race detector where the tracer does not see the access itself (session 37, each proved
"exhaustive (for a data-race-free program)" before): a container's method handed to a thread, a
timer or a pool; the standard library's algorithms written in Python (``Counter.update``,
``ChainMap``, ``heapq.nsmallest``, ``statistics.mean``, ``dataclasses.replace``, ``copy.copy``);
an object's fields read whole (``vars(obj)``, ``copy.copy``, ``pickle.dumps``); a container's
truth (``if not pending:``) and C code that reads a container (``deque(xs)``, ``list.append(xs, 9)``,
``yield from xs``, ``itertools.islice``). A report names the program's line, not the library's."""

from __future__ import annotations

from functools import partial

import pytest

from model_checks.harness import race_library, race_sites
from tests.harness import race_library_programs as prog
from tests.harness.patched_runs import assert_race, run_patched

run = partial(run_patched, prog)


@pytest.mark.timeout(60)
def test_a_library_access_is_told_by_the_call_the_program_made() -> None:
    failure = assert_race(run(prog.mean_race), prog, "list (whole)")
    assert "read (mean())" in failure.message, failure.message
    assert "statistics.py" not in failure.message, failure.message


def test_only_the_listed_library_modules_are_traced() -> None:
    """The standard library's own state stays unchecked: a traced module is an algorithm over the
    caller's data, and its globals and the containers among them are exempt."""
    import collections
    import copy
    import logging
    import threading

    assert race_sites.under_test(collections.__file__)
    assert not race_sites.under_test(logging.__file__)
    assert not race_sites.under_test(threading.__file__)
    state = race_library.library_state()
    assert id(copy._copy_dispatch) in state  # type: ignore[attr-defined]
    assert id(collections.__dict__) in state
