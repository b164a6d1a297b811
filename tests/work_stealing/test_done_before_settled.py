"""A task's ``done`` is logged before its state is stored (reference/work_stealing_base.py: ``_run``
emits, then ``_complete`` stores): a worker joining that task can still read it pending in between,
look for work, find none and park, and be woken by the completer. Both engines allow it; the open
spec's ``Done`` then ``Settle`` model the two steps (a real-thread trace of ``fib`` showed it: the
spec engine refused it while the fast engine allowed it)."""

from __future__ import annotations

import pytest

from model_checks.conformance.verdict import ALLOWED
from tests.work_stealing.both_engines import GOOD, both, lines_of
from tests.work_stealing.test_trace import E, done, finds_nothing, owner_runs, park, run

pytestmark = pytest.mark.timeout(120)

# w0 runs a, forks b and c; w1 steals b. w0 runs c, joins it, then joins b: w1 has logged b's
# done but not yet stored it, so w0 looks for work, finds none and parks; w1 stores b's state and
# wakes w0, whose join of b returns.
JOIN_SEES_PENDING_AFTER_DONE = [
    *GOOD[:10],  # a forks b and c on w0; w1 steals b and runs it
    *owner_runs(0, "c"),
    E("w0", "join", task="c"),
    done(1, "b"),
    *finds_nothing(0, 1),
    park(0),
    E("w1", "unpark", worker=0),
    E("w0", "join", task="b"),
    *GOOD[GOOD.index(done(0, "a")) :],  # a is done; both park; Stop(drain)
]
assert GOOD[9] == run(1, "b")


def test_a_join_that_reads_its_task_pending_after_its_done_is_allowed_by_both() -> None:
    fast, spec = both(lines_of(JOIN_SEES_PENDING_AFTER_DONE), complete=True)
    assert fast.code == ALLOWED, fast.message
    assert spec.code == ALLOWED, spec.message


def test_the_join_still_needs_the_done_first() -> None:
    # The same join of b before b's done: no behaviour has it (b is still running on w1).
    events = list(JOIN_SEES_PENDING_AFTER_DONE)
    at_done = events.index(done(1, "b"))
    at_join = events.index(E("w0", "join", task="b"))
    events.insert(at_join, events.pop(at_done))  # b's done after w0's join of b
    fast, spec = both(lines_of(events), complete=True)
    assert fast.code != ALLOWED and spec.code != ALLOWED, (fast.message, spec.message)
