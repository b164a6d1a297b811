"""Every design that defers its internal steps per unit (``trace_search.DEFERRED`` with a unit:
the Akka mailbox per mailbox, the Schedule Gate per actor), held to the same checks.

Its declaration holds on every reachable state of small configurations (``movers``, with the
unit: a blocked pair binds only steps about the same unit); a wrong declaration is caught, and so
is a unit of its own for every process (then no blocked pair binds). The designs' own files test
the rest (``tests/akka/test_deferred_units.py``, ``tests/gate/test_deferred_drains.py``).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import pytest

from model_checks.conformance.movers import Violation
from tests.akka.test_deferred_units import DECLARED as AKKA
from tests.conformance.deferral_checks import Declaration, Unit
from tests.gate.test_deferred_drains import DECLARED as GATE


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("declared", "config"),
    [(AKKA, "small"), (AKKA, "compare"), (AKKA, "close-races-sends"), (GATE, "small"), (GATE, "standard")],
    ids=[
        "akka-mailbox-small",
        "akka-mailbox-compare",
        "akka-mailbox-close-races-sends",
        "schedule-gate-small",
        "schedule-gate-standard",
    ],
)
def test_the_declaration_holds_per_unit_on_every_reachable_state(declared: Declaration, config: str) -> None:
    assert not declared.violations(config)


def _unit_of_its_own(s: Any, process: Hashable) -> Hashable:
    return process


# Per row: the design, the step declared (wrongly) free to move past every other, or the unit put
# in the design's place, and the pair that shows it on the small configuration.
@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("declared", "free", "unit", "caught"),
    [
        # An empty queue read cannot move past an append to that mailbox: the read would see it.
        (AKKA, "RegisterSeesEmpty", None, ("RegisterSeesEmpty", "Enqueue")),
        # The reads that do not move past a close of their mailbox.
        (AKKA, None, _unit_of_its_own, ("RegisterSeesOpen", "Close")),
        # An empty pop cannot move past a push to that mailbox: the pop would have found the event.
        (GATE, "FoundEmpty", None, ("FoundEmpty", "Publish")),
        # The empty pop that does not move past a push to its mailbox.
        (GATE, None, _unit_of_its_own, ("FoundEmpty", "Publish")),
    ],
    ids=["akka-mailbox-declaration", "akka-mailbox-unit", "schedule-gate-declaration", "schedule-gate-unit"],
)
def test_a_wrong_declaration_or_unit_is_caught(
    declared: Declaration, free: str | None, unit: Unit | None, caught: Violation
) -> None:
    blocked = None if free is None else {**declared.deferred, free: frozenset()}
    assert caught in declared.violations("small", blocked, unit)
