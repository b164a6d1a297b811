"""Growing a streaming search as the trace reveals processes, units and script entries
(``conformance.search_binding``), on the schedule-gate spec's search."""

from __future__ import annotations

from typing import Any

import pytest

from model_checks.conformance.search_binding import add_process, add_units, forget_read, joined
from model_checks.designs.schedule_gate.trace import UNNAMED_ACTOR, GateChecker
from spec import schedule_gate as sg

CONFIG = {"workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 1}


def test_units_join_every_state_as_start_says_and_the_count_grows() -> None:
    checker = GateChecker(CONFIG)
    before = checker.c
    grown = add_units(checker.search, before, "actors", 2, UNNAMED_ACTOR)
    assert (before.actors, grown.actors, checker.search.c) == (0, 3, grown)
    for s in checker.search.states:
        assert s.gate.domain() == s.mailbox.domain() == (0, 1, 2)
        assert set(s.gate.values()) == {sg.IDLE_GATE} and set(s.mailbox.values()) == {()}


def test_an_index_already_counted_changes_nothing() -> None:
    checker = GateChecker(CONFIG)
    c = add_units(checker.search, checker.c, "actors", 1, UNNAMED_ACTOR)
    states = set(checker.search.states)
    assert add_units(checker.search, c, "actors", 0, UNNAMED_ACTOR) is c
    assert checker.search.states == states


def test_a_start_naming_no_component_of_the_state_fails() -> None:
    checker = GateChecker(CONFIG)
    with pytest.raises(AttributeError, match="no_such"):
        add_units(checker.search, checker.c, "actors", 0, {"no_such": 0})


def test_joined_leaves_the_components_start_does_not_name() -> None:
    (s,) = GateChecker(CONFIG).search.states
    after = joined(s, (0,), {"gate": sg.IDLE_GATE})
    assert after.gate.domain() == (0,) and after.mailbox == s.mailbox and after.free == s.free


def test_a_process_joins_every_state_where_it_begins() -> None:
    checker = GateChecker(CONFIG)
    checker.c.producers.append("p:t")
    checker.c.posts["p:t"] = {}
    add_process(checker.search, checker.c, "producer", "p:t", (sg.P_IDLE, 0, False))
    assert {s.producer["p:t"] for s in checker.search.states} == {(sg.P_IDLE, 0, False)}


def test_forget_read_drops_only_entries_before_every_states_position() -> None:
    script: dict[int, Any] = {0: "a", 1: "b", 2: "c", 3: "d"}
    forget_read(script, [2, 3], lambda position: position)
    assert script == {2: "c", 3: "d"}
    forget_read(script, [2], lambda position: position)
    assert script == {2: "c", 3: "d"}  # a state still reads entry 2


def test_forget_read_keeps_a_script_of_one_entry() -> None:
    script: dict[int, Any] = {0: "a"}
    forget_read(script, [5], lambda position: position)
    assert script == {0: "a"}
