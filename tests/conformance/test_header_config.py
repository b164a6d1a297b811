"""``HeaderConfig``: one declaration of a trace header's config gives the limits, the keys, the
checker's constants and the design's streamed format; the designs' formats keep their limits."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from model_checks.conformance.header_config import SCHEMA_FILE, HeaderConfig
from model_checks.conformance.reader import MAX_INDEXED, MAX_SIZE
from model_checks.conformance.reader import header_problem as limits_problem
from model_checks.designs.akka_mailbox.trace import FORMAT as AKKA
from model_checks.designs.schedule_gate.trace import CONFIG_KEYS as GATE_KEYS
from model_checks.designs.schedule_gate.trace import FORMAT as GATE
from model_checks.designs.schedule_gate.trace import GateChecker
from model_checks.designs.work_lane.trace.spec_format import FORMAT as WORK_LANE
from model_checks.designs.work_lane_lockfree.trace.format import CONFIG_KEYS as LOCKFREE_KEYS
from model_checks.designs.work_lane_lockfree.trace.format import FORMAT as LOCKFREE

HEADER = HeaderConfig(index="actor", units="actors", indexed=("workers",), sizes=("permits", "budget"))


@dataclass(frozen=True)
class _Constants:
    actors: int
    workers: int
    permits: int
    budget: int
    flag: bool = False


def test_limits_bound_the_units_and_indexed_counts_tighter_than_sizes() -> None:
    assert HEADER.keys == ("actors", "workers", "permits", "budget")
    assert HEADER.limits == {
        "actors": MAX_INDEXED,
        "workers": MAX_INDEXED,
        "permits": MAX_SIZE,
        "budget": MAX_SIZE,
    }
    too_many = {"version": 1, "config": {"actors": MAX_INDEXED + 1, "workers": 1, "permits": 1, "budget": 1}}
    assert "config.actors" in str(limits_problem(too_many, HEADER.limits))


def test_a_key_declared_twice_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="'workers' is declared twice"):
        HeaderConfig(index="lane", units="lanes", indexed=("workers",), sizes=("workers",))
    with pytest.raises(ValueError, match="'lanes' is declared twice"):
        HeaderConfig(index="lane", units="lanes", sizes=("lanes",))


def test_constants_start_with_no_unit_and_read_every_other_key() -> None:
    c = HEADER.constants(_Constants, {"actors": 9, "workers": 2, "permits": 3, "budget": 4}, flag=True)
    assert c == _Constants(actors=0, workers=2, permits=3, budget=4, flag=True)


def test_constants_from_a_config_without_a_key_fail_naming_it() -> None:
    with pytest.raises(KeyError, match="budget"):
        HEADER.constants(_Constants, {"actors": 1, "workers": 2, "permits": 3})


def test_the_format_carries_the_declaration() -> None:
    fmt = HEADER.format(
        "toy",
        "model_checks.designs.schedule_gate",
        {"take": ()},
        make=GateChecker,
        rules={1: "r"},
        completion="end",
    )
    assert (fmt.index, fmt.bound, fmt.schema_file) == ("actor", "actors", SCHEMA_FILE)
    assert fmt.schema_package == "model_checks.designs.schedule_gate"
    assert fmt.header_limits == HEADER.limits
    assert dict(fmt.optional) == {}


def test_the_designs_formats_keep_their_limits_index_and_schema() -> None:
    assert GATE.header_limits == {
        "actors": MAX_INDEXED,
        "workers": MAX_INDEXED,
        "permits": MAX_SIZE,
        "mailbox_capacity": MAX_SIZE,
        "max_per_drain": MAX_SIZE,
    }
    assert GATE_KEYS == ("actors", "workers", "permits", "mailbox_capacity", "max_per_drain")
    assert AKKA.header_limits == {"mailboxes": MAX_INDEXED, "workers": MAX_INDEXED, "throughput": MAX_SIZE}
    lane_limits = {
        "lanes": MAX_INDEXED,
        "workers": MAX_INDEXED,
        "lane_capacity": MAX_SIZE,
        "max_per_drain": MAX_SIZE,
        "ready_capacity": MAX_SIZE,
    }
    assert LOCKFREE.header_limits == WORK_LANE.header_limits == lane_limits
    assert tuple(lane_limits) == LOCKFREE_KEYS
    shown = {(f.design, f.index, f.bound, f.schema_package) for f in (GATE, AKKA, LOCKFREE, WORK_LANE)}
    assert shown == {
        ("schedule-gate", "actor", "actors", "model_checks.designs.schedule_gate"),
        ("akka-mailbox", "mailbox", "mailboxes", "model_checks.designs.akka_mailbox"),
        ("work-lane-lockfree", "lane", "lanes", "model_checks.designs.work_lane_lockfree.trace"),
        ("work-lane", "lane", "lanes", "model_checks.designs.work_lane.trace"),
    }
    assert set(AKKA.optional) == {"run_end"} and set(LOCKFREE.optional) == {"post", "cas"}
