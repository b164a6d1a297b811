"""The reference mutants' rows of a design's Scenario table (``model_checks.mutant_scenarios``), and
the mutant tables their classes register themselves in (akka-mailbox, work-lane-lockfree)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import pytest

from model_checks.design import Program, Scenario
from model_checks.designs.akka_mailbox import reference_mutants as akka
from model_checks.designs.akka_mailbox.spec_mutants import MUTANTS as AKKA_SPEC_MUTANTS
from model_checks.designs.event_pool.harness import SCENARIOS as POOL_SCENARIOS
from model_checks.designs.event_pool.reference_mutants import REFERENCE_MUTANTS as POOL_MUTANTS
from model_checks.designs.work_lane_lockfree import reference_mutants as lockfree
from model_checks.designs.work_lane_lockfree.harness import SCENARIOS as LOCKFREE_SCENARIOS
from model_checks.designs.work_lane_lockfree.spec_mutants import MUTANTS as LOCKFREE_SPEC_MUTANTS
from model_checks.mutant_scenarios import MUTANT_OPTIONS, mutant_scenarios
from reference.akka_mailbox import Dispatcher
from reference.work_lane_lockfree import LockFreeScheduler


@dataclass(frozen=True)
class _Mutant:
    doc: str
    expect: str


def _program(m: _Mutant) -> Program:
    return lambda rt: m.doc


def test_each_mutant_is_one_row_that_must_fail_as_it_says() -> None:
    table = mutant_scenarios(
        "toy",
        {"a": _Mutant("bug a", "deadlock"), "b": _Mutant("bug b", "assertion")},
        lambda m: partial(_program, m),
    )
    assert list(table) == ["mutant/a", "mutant/b"]
    row = table["mutant/b"]
    assert (row.name, row.expect, row.doc, row.subject) == (
        "mutant/b",
        "assertion",
        "bug b",
        "toy reference --mutant b",
    )
    assert row.must_fail and row.build()(None) == "bug b"
    assert row.options == MUTANT_OPTIONS and row.options is not table["mutant/a"].options


@pytest.mark.parametrize(
    ("scenarios", "mutants", "design"),
    [
        (POOL_SCENARIOS, POOL_MUTANTS, "event-pool"),
        (LOCKFREE_SCENARIOS, lockfree.REFERENCE_MUTANTS, "work-lane-lockfree"),
    ],
)
def test_the_designs_mutant_rows_are_their_mutants(
    scenarios: Mapping[str, Scenario], mutants: Mapping[str, Any], design: str
) -> None:
    rows = {name: s for name, s in scenarios.items() if name.startswith("mutant/")}
    assert list(rows) == [f"mutant/{name}" for name in mutants]
    for name, m in mutants.items():
        row = rows[f"mutant/{name}"]
        assert (row.expect, row.doc, row.subject) == (m.expect, m.doc, f"{design} reference --mutant {name}")
        assert dict(row.options) == {"strategy": "dpor", "time_limit": 60}


def test_the_registered_tables_keep_their_order_and_spec_twins() -> None:
    assert list(akka.REFERENCE_MUTANTS) == [
        "no-recheck",
        "check-then-set",
        "schedule-while-closed",
        "past-throughput",
        "resume-without-register",
        "idle-store",
        "send-no-clean-up",
        "decide-before-append",
    ]
    assert list(lockfree.REFERENCE_MUTANTS) == [
        "cas-before-push",
        "no-recheck",
        "idle-after-recheck",
        "stop-skips-inflight",
        "reset-drops-unreported",
    ]
    for table, spec_mutants in (
        (akka.REFERENCE_MUTANTS, AKKA_SPEC_MUTANTS),
        (lockfree.REFERENCE_MUTANTS, LOCKFREE_SPEC_MUTANTS),
    ):
        for name, m in table.items():
            assert m.name == m.spec_variant == name and name in spec_mutants
    assert {m.expect for m in lockfree.REFERENCE_MUTANTS.values()} == {"assertion"}
    assert akka.REFERENCE_MUTANTS["resume-without-register"].build is akka.ResumeWithoutRegisterDispatcher
    plugged = akka.REFERENCE_MUTANTS["idle-store"].build
    assert isinstance(plugged, partial) and plugged.func is Dispatcher
    assert plugged.keywords == {"mailbox_factory": akka.IdleStoreMailbox}
    assert lockfree.REFERENCE_MUTANTS["stop-skips-inflight"].build is lockfree.StopSkipsInflightScheduler
    lane = lockfree.REFERENCE_MUTANTS["no-recheck"].build
    assert isinstance(lane, partial) and lane.func is LockFreeScheduler
    assert lane.keywords == {"lane_factory": lockfree.NoRecheckLane}


def test_a_second_mutant_of_one_name_is_refused() -> None:
    with pytest.raises(ValueError, match="two mutants are named 'no-recheck'"):
        akka._mutant("no-recheck", "again", "invariant", akka._c(((0,),)))(akka.NoRecheckMailbox)
    assert akka.REFERENCE_MUTANTS["no-recheck"].doc == "the re-check after setAsIdle dropped"
