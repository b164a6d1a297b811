"""Spec vs reference on the same traces (``model_checks/designs/work_stealing/link.py``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from model_checks.designs.work_stealing.link import (
    CONSTANTS,
    ONE_WORKER,
    compare,
    normalised,
    one_worker,
    spec_traces,
)
from model_checks.designs.work_stealing.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_stealing.spec_mutants import MUTANTS
from model_checks.explorer.check import check as explore
from model_checks.explorer.search import Options as ExplorerOptions
from spec.language import SpecError
from spec.work_stealing import SPEC


@pytest.fixture
def quiet() -> Iterator[None]:
    log = logging.getLogger("reference")  # a seeded bug makes the pool log its faults
    previous = log.level
    log.setLevel(logging.CRITICAL)
    yield
    log.setLevel(previous)


@pytest.mark.timeout(180)
def test_every_reference_trace_is_a_spec_trace_on_the_one_worker_fork_join() -> None:
    """One worker, a root forking two children and joining them: every trace of every DPOR
    execution of the reference (each validated as a complete trace too) is a projected spec
    behaviour. The spec has one more: the submit between the worker's empty take and its pop
    of the injector, an order of independent steps DPOR explores in one order only."""
    link = compare()
    assert link.result.verdict == "exhaustive" and link.result.failure is None, link.result.report()
    assert link.ok and not link.reference_only
    assert (len(link.spec), len(link.reference)) == (4, 3)
    assert link.reference < link.spec


@pytest.mark.timeout(60)
def test_the_one_worker_spec_holds_and_only_adds_the_no_victim_step() -> None:
    result = explore(ONE_WORKER, CONSTANTS, ExplorerOptions())
    assert result.verdict == "holds", result.verdict
    assert [a.name for a in ONE_WORKER.actions] == [a.name for a in SPEC.actions] + ["NoVictim"]
    with pytest.raises(SpecError, match="workers must be at least 2"):
        spec_traces(CONSTANTS, SPEC)


@pytest.mark.timeout(180)
def test_the_link_fails_on_a_reference_that_steals_from_itself(quiet: None) -> None:
    link = compare(build=REFERENCE_MUTANTS["steal-from-self"].build)
    assert link.result.verdict == "exhaustive"
    assert not link.ok and link.reference_only
    assert all(any("victim=0 worker=0" in w for w in t) for t in link.reference_only)


@pytest.mark.timeout(180)
def test_the_link_fails_against_a_spec_that_parks_without_the_recheck() -> None:
    reference = compare().reference
    mutated = spec_traces(CONSTANTS, one_worker(MUTANTS["park-without-recheck"].spec))
    assert reference - mutated


@pytest.mark.timeout(180)
def test_a_reference_that_loses_a_wakeup_fails_the_link(quiet: None) -> None:
    link = compare(build=REFERENCE_MUTANTS["park-without-recheck"].build)
    assert link.result.failure is not None and link.result.failure.kind == "lost_wakeup"
    assert not link.ok


def test_the_normalisation_renames_cuts_and_drops_what_the_spec_does_not_model() -> None:
    events = [
        {"seq": 1, "thread": "main", "event": "submit", "task": "r0", "result": "ok"},
        {"seq": 2, "thread": "main", "event": "unpark", "worker": 0},
        {"seq": 3, "thread": "w0", "event": "run", "worker": 0, "task": "r0"},
        {"seq": 4, "thread": "w0", "event": "done", "worker": 0, "task": "r0", "outcome": "ok"},
        {"seq": 5, "thread": "main", "event": "join", "task": "r0"},
        {"seq": 6, "thread": "w0", "event": "take", "worker": 0, "task": None, "result": "empty"},
        {"seq": 7, "thread": "main", "event": "stop_begin", "mode": "drain"},
        {"seq": 8, "thread": "w0", "event": "park", "worker": 0},
    ]
    assert normalised(events, {"r0": "a"}, client="main") == (
        "client submit result=ok task=a",
        "w0 unpark worker=0",
        "w0 run task=a worker=0",
        "w0 done outcome=ok task=a worker=0",
    )
