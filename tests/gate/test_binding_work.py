"""The Schedule Gate binding's per-event work (issue 24): the pcs the search reads off the states
(``pc_parts``), the refined program counter (``announced_pc``) and the actors Idle since a
producer's last event (``was_idle``) must say exactly what the plain definitions say, and their
memos stay bounded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.bench.traces import trace_benches
from model_checks.conformance.search import TraceSearch
from model_checks.designs.schedule_gate import trace as gate_trace
from model_checks.designs.schedule_gate.configs import CONFIGS
from model_checks.designs.schedule_gate.trace import (
    ENABLED_AT,
    P_IDLE_UNANNOUNCED,
    GateChecker,
    announced_pc,
)
from spec import schedule_gate as sg
from tests.spec_helpers import assert_enabled_only_at


@pytest.fixture(scope="module")
def bench_trace(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The gate bench's short trace: (header config, events)."""
    bench = trace_benches()["schedule-gate"]
    path = tmp_path_factory.mktemp("gate") / "bench.jsonl"
    bench.write(path, bench.quick_sizes[1], 0)
    header, *events = (json.loads(line) for line in path.read_text().splitlines())
    assert len(events) > 200, len(events)
    return header["config"], [e for e in events if e["event"] != "stop_end"]


def test_announced_pc_keeps_enabled_at_the_first_guard() -> None:
    """``SeeIdle`` never fires where ``announced_pc`` says the post is not shown yet."""
    c = CONFIGS["small"]
    assert_enabled_only_at(sg.SPEC, c, ENABLED_AT, lambda s, p: announced_pc(c, s, p))


def test_the_table_check_fails_for_a_refinement_that_hides_an_enabled_step() -> None:
    # Calling every idle producer "not shown yet" hides the SeeIdle steps of announced posts.
    def wrong(s: sg.Vars, p: Any) -> str:
        pc = announced_pc(c, s, p)
        return P_IDLE_UNANNOUNCED if pc == sg.P_IDLE else pc

    c = CONFIGS["small"]
    with pytest.raises(AssertionError, match="SeeIdle"):
        assert_enabled_only_at(sg.SPEC, c, ENABLED_AT, wrong)


def _plain_key(checker: GateChecker, s: sg.Vars) -> tuple[tuple[tuple[str, str], ...], ...]:
    return (
        tuple((p, checker.local(s, p)) for p in s.producer.domain()),
        tuple((w, checker.local(s, w)) for w in s.worker.domain()),
    )


class _PlainIdle(GateChecker):
    """The definition, walked: per producer a set of actors, every state's gates looked at after
    every event (the binding as it was)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.plain: dict[str, set[int]] = {}
        super().__init__(config)

    def _grow(self, ev: dict[str, Any]) -> dict[str, Any]:
        actors = self.c.actors
        named = super()._grow(ev)
        for seen in self.plain.values():
            seen.update(range(actors, self.c.actors))
        return named

    def _add(self, role: str, name: str) -> None:
        if role == "p":
            self.plain[name] = set(range(self.c.actors))  # every gate starts Idle
        super()._add(role, name)

    def _track_idle(self, p: str, actor: int) -> None:
        if p in self.plain:
            self.plain[p] = {a for s in self.search.states for a, g in s.gate.items() if g.phase == sg.IDLE}
        if any(s.gate[actor].phase == sg.IDLE for s in self.search.states):
            for seen in self.plain.values():
                seen.add(actor)

    def was_idle(self, p: str, actor: int) -> bool:
        return actor in self.plain[p]

    def idle_since(self, p: str) -> set[int]:
        return {self.units.traced(a) for a in self.plain[p]}


class _OnlyTheEventsActor(_PlainIdle):
    """A wrong shortcut: only the event's actor is looked at (an event drops states, so other
    actors can stop being Idle in every state held)."""

    def _track_idle(self, p: str, actor: int) -> None:
        if p in self.plain:
            self.plain[p] = set()
        if any(s.gate[actor].phase == sg.IDLE for s in self.search.states):
            for seen in self.plain.values():
                seen.add(actor)


def _idle_since(checker: GateChecker) -> dict[str, set[int]]:
    return {p: checker.idle_since(p) for p in checker.c.producers}


def _first_divergence(a: GateChecker, b: GateChecker, events: list[dict[str, Any]]) -> int | None:
    for n, ev in enumerate(events):
        a.step(ev)
        b.step(ev)
        if _idle_since(a) != _idle_since(b) or a.search.states != b.search.states:
            return n
    return None


def test_idle_since_a_producers_last_event_is_the_walk_over_every_gate(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    config, events = bench_trace
    assert _first_divergence(GateChecker(config), _PlainIdle(config), events) is None
    # The comparison sees a wrong shortcut.
    assert _first_divergence(_OnlyTheEventsActor(config), _PlainIdle(config), events) is not None


def test_the_parts_pcs_are_every_process_local_after_every_event(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    config, events = bench_trace
    checker = GateChecker(config)
    unannounced = 0
    for ev in events:
        checker.step(ev)
        for s in checker.search.states:
            key = checker.search.part_pcs(s)
            assert key == _plain_key(checker, s), ev
            unannounced += P_IDLE_UNANNOUNCED in [pc for _, pc in key[0]]
    assert unannounced > 0  # the refinement is met, not only its absence


def _states_after_each_event(
    config: dict[str, Any], events: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch, **options: Any
) -> list[frozenset[Any]]:
    class Searching(TraceSearch):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, **options})

    with monkeypatch.context() as patch:
        patch.setattr(gate_trace, "TraceSearch", Searching)
        checker = GateChecker(config)
        seen = []
        for ev in events:
            checker.step(ev)
            seen.append(frozenset(checker.search.states))
    return seen


def test_steps_by_parts_and_by_local_give_the_same_states(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, events = bench_trace
    by_parts = _states_after_each_event(config, events, monkeypatch)
    by_local = _states_after_each_event(config, events, monkeypatch, pc_parts=())
    tight = _states_after_each_event(config, events, monkeypatch, cache_limit=2)
    assert by_parts == by_local == tight
    assert any(len(states) > 1 for states in by_parts)  # the closure had choices to agree on


def test_the_parts_pcs_must_be_forgotten_when_a_post_is_announced(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    """The producers' part reads the posts: a post announced behind the search's back leaves
    stale pcs, which the comparison with ``local`` catches (``_announce`` forgets them)."""
    config, events = bench_trace
    checker = GateChecker(config)
    for ev in events[:40]:
        checker.step(ev)
    stale = [
        (s, p, k)
        for s in checker.search.states
        for p, (pc, k, _) in s.producer.items()
        if pc == sg.P_IDLE and k not in checker.c.posts[p]
    ]
    assert stale, "an idle producer with its next post not shown yet"
    s, p, k = stale[0]
    assert checker.search.part_pcs(s) == _plain_key(checker, s)
    checker.c.posts[p][k] = (0, "x")  # as ``_announce`` does, without forgetting
    assert checker.search.part_pcs(s) != _plain_key(checker, s)
    checker._forget_pcs()
    assert checker.search.part_pcs(s) == _plain_key(checker, s)


def test_the_memos_stay_bounded_and_change_nothing(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, events = bench_trace
    roomy = GateChecker(config)
    for ev in events:
        roomy.step(ev)
    assert all(len(m) <= roomy.search.cache_limit for m in roomy.search._part_memo)

    class Tight(TraceSearch):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, "cache_limit": 4})

    monkeypatch.setattr(gate_trace, "TraceSearch", Tight)
    tight = GateChecker(config)
    biggest = 0
    for ev in events:
        tight.step(ev)
        biggest = max(biggest, *(len(m) for m in tight.search._part_memo))
        assert biggest <= 4
    assert biggest == 4  # the bound bites
    assert tight.search.states == roomy.search.states and _idle_since(tight) == _idle_since(roomy)
