"""The event pool's spec engine defers the steps its traces do not log (``spec_binding.DEFERRED``).

The declaration (which internal steps move right past which, a thread's wait and timeout per
thread) is checked on every reachable state of a spec configuration (``conformance.movers``),
wrong ones are caught, the deferred search gives the same verdict, word for word, as the search
that takes every internal step at once, and it holds fewer states.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import pytest

from model_checks.designs.event_pool.trace.generate import lines as generated
from model_checks.designs.event_pool.trace.late_signals import is_setter
from model_checks.designs.event_pool.trace.spec_binding import (
    DEFERRED,
    SPEC,
    local_pc,
    thread_unit,
)
from model_checks.designs.event_pool.trace.spec_search import SPEC_FORMAT, PoolSearch
from spec import event_pool as ep
from tests.conformance.deferral_checks import reachable_violations, same_verdict
from tests.event_pool.spec_search_checks import edits

pytestmark = pytest.mark.timeout(600)

# Two threads, two submissions, cancel and timeouts: every step the trace binding has.
CONFIG = ep.Constants(threads=2, submits=2, cancel=True, timeouts=True)


# One submission: enough to catch each wrong declaration below, in a tenth of the states.
SMALL = ep.Constants(threads=2, submits=1, cancel=True, timeouts=True)


def _violations(
    blocked: dict[str, frozenset[str]], unit: Any = thread_unit, config: ep.Constants = CONFIG
) -> set[tuple[str, str]]:
    return reachable_violations(
        SPEC, config, blocked, local=local_pc, unit=unit, unit_field="to", at_least=1_000
    )


def test_the_declaration_holds_on_every_reachable_state() -> None:
    assert not _violations(DEFERRED)


def test_wrong_declarations_are_caught() -> None:
    # A logged signal's SetEvent before the wait leaves the event set (the wait returns at once);
    # after it, it releases the blocked wait: the two orders differ.
    assert ("WaitForWork", "MakeSetEvent") in _violations(
        {**DEFERRED, "WaitForWork": frozenset({"Close"})}, config=SMALL
    )
    # Timed out before the SetEvent, the wait reports a timeout and leaves the event set; after, event.
    assert ("TimeOut", "MakeSetEvent") in _violations(
        {**DEFERRED, "TimeOut": frozenset({"Close"})}, config=SMALL
    )
    # Timed out before the stop event is set, the wait reports a timeout; after, stop.
    assert ("TimeOut", "Close") in _violations(
        {**DEFERRED, "TimeOut": frozenset({"MakeSetEvent"})}, config=SMALL
    )
    # A wake by stop needs the stop event set first.
    assert ("Close", "Wake") in _violations({**DEFERRED, "Close": frozenset()}, config=SMALL)

    # A SetEvent owed releases a blocked wait, so a wake may need it made first.
    made = DEFERRED["MakeSetEvent"] - {"Wake"}
    assert ("MakeSetEvent", "Wake") in _violations({**DEFERRED, "MakeSetEvent": made}, config=SMALL)

    # A thread's wait is about its own event: a SetEvent said to be about another unit is caught.
    def setter_unit(s: ep.Vars, process: Any) -> Any:
        return "setter" if process == "client" or is_setter(process) else "t0"

    assert ("WaitForWork", "MakeSetEvent") in _violations(DEFERRED, unit=setter_unit, config=SMALL)


EAGER = dataclasses.replace(SPEC_FORMAT, make=lambda config: PoolSearch(config, deferred={}))


def test_deferred_and_eager_agree_on_generated_traces_and_their_edits() -> None:
    judged = rejected = 0
    for seed in range(8):
        text = list(generated(300, threads=1 + seed % 4, seed=seed, timeouts=0.05, cancels=0.05))
        rng = random.Random(seed)
        for edited in [text, *(e for _, e in edits(text, rng, 6))]:
            for complete in (False, True):
                lazy = same_verdict(SPEC_FORMAT, EAGER, edited, complete)
                judged += 1
                rejected += not lazy.allowed
    assert judged >= 100 and rejected >= 20


def test_the_deferred_search_holds_fewer_states() -> None:
    peaks = []
    for deferred in (DEFERRED, {}):
        checker = PoolSearch({"threads": 4}, deferred=deferred)
        lines = list(generated(2_000, seed=1))
        for line in lines[1:]:
            checker.step(json.loads(line))
        peaks.append(checker.search.peak)
    lazy, eager = peaks
    assert lazy * 4 <= eager, peaks
