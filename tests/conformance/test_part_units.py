"""The units the search reads with the pcs (``FunctionPcs(unit=...)``) are the binding's ``unit``.

``TraceSearch`` decides which deferred steps an event needs from the processes that can start one
in each held state and their units; with ``FunctionPcs(unit=..., unit_at=...)`` it reads those
units off the same component as the pcs instead of calling ``unit`` per state and process. On the
bench traces of the bindings that declare it, they agree after every event, and wrong ones are
caught.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from model_checks.conformance.search import FunctionPcs
from model_checks.designs.akka_mailbox.bench import akka_scheduled
from model_checks.designs.akka_mailbox.trace import AkkaChecker
from model_checks.designs.event_pool.trace import generate
from model_checks.designs.event_pool.trace.spec_binding import local_pc
from model_checks.designs.event_pool.trace.spec_search import PoolSearch
from model_checks.designs.schedule_gate.bench import gate_scheduled
from model_checks.designs.schedule_gate.trace import GateChecker
from model_checks.designs.work_lane.bench_traces import CONFIG, synthetic_events
from model_checks.designs.work_lane.trace.parse import Config
from model_checks.designs.work_lane.trace.spec_engine import SpecEngine

pytestmark = pytest.mark.timeout(300)


def _gate() -> tuple[Any, list[dict[str, Any]]]:
    config, events = gate_scheduled(40, 0)
    return GateChecker(config), [e for e in events if e["event"] != "stop_end"]


def _akka() -> tuple[Any, list[dict[str, Any]]]:
    config, events = akka_scheduled(30, 0)
    return AkkaChecker(config), events


def _work_lane() -> tuple[Any, list[dict[str, Any]]]:
    return SpecEngine(Config(**CONFIG)), list(synthetic_events(400, 5))


def _event_pool() -> tuple[Any, list[dict[str, Any]]]:
    # Timeouts and late SetEvents make the threads' and the setters' deferred steps start.
    return PoolSearch(generate.header(4)["config"]), list(generate.events(600, seed=3))


def _disagreements(checker: Any, events: list[dict[str, Any]]) -> tuple[int, int]:
    """(starts read, of them with a unit other than ``unit``'s) over every state after every event."""
    read = wrong = 0
    for ev in events:
        checker.step(ev)
        search = checker.search
        for s in search.states:
            for q, unit in search.starts(s):
                read += 1
                wrong += unit != search.unit(s, q)
    return read, wrong


@pytest.mark.parametrize(
    "make",
    [_gate, _akka, _work_lane, _event_pool],
    ids=["schedule-gate", "akka-mailbox", "work-lane", "event-pool"],
)
def test_the_units_read_with_the_pcs_are_the_bindings_unit(make: Callable[[], Any]) -> None:
    checker, events = make()
    read, wrong = _disagreements(checker, events)
    assert read > 0  # deferred steps could start: the units were read
    assert wrong == 0


def test_a_wrong_unit_item_is_caught() -> None:
    checker, events = _akka()
    search = checker.search
    for i, (_, pcs_of) in enumerate(search.pc_parts):
        assert isinstance(pcs_of, FunctionPcs)
        pcs_of.unit = 0  # the pc, not the mailbox
        search.forget_pcs(i)
    _, wrong = _disagreements(checker, events)
    assert wrong > 0


def test_a_unit_read_at_the_wrong_pcs_is_caught() -> None:
    # The Work Lane's workers are about their lane only while they drain (their pops); read at
    # every pc, a worker that took a lane would be about it too, which ``drained_lane`` says not.
    checker, events = _work_lane()
    search = checker.search
    workers = 1  # the part read off the ``worker`` component
    pcs_of = search.pc_parts[workers][1]
    assert isinstance(pcs_of, FunctionPcs)
    pcs_of.unit_at = None
    search.forget_pcs(workers)
    _, wrong = _disagreements(checker, events)
    assert wrong > 0


def test_the_event_pools_parts_are_its_pcs() -> None:
    # Session 47: the event pool's pcs are read in parts (threads, client, setters); each part's
    # pairs must be ``local_pc`` of every process, in every state, or the search would look up
    # another pc's steps (a setter owing a SetEvent read at 0 would never make it).
    checker, events = _event_pool()
    setters_owed = 0
    for ev in events:
        checker.step(ev)
        search = checker.search
        for s in search.states:
            pairs = [pair for part in search.part_pcs(s) for pair in part]
            assert sorted(p for p, _ in pairs) == sorted(search._processes)
            for p, pc in pairs:
                assert pc == local_pc(s, p)
                setters_owed += isinstance(pc, int) and pc > 0
    assert setters_owed > 0  # the setters' part was read where it matters
