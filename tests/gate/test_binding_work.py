"""The Schedule Gate binding's per-event work (issue 24): the search's key (``pcs_key``), the
refined program counter (``announced_pc``) and the Idle actors by gate function (``_track_idle``)
must say exactly what the plain definitions say, and their memos stay bounded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from model_checks.bench.traces import trace_benches
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
    """The binding as it was: every state's gates walked on every event."""

    def _track_idle(self, p: str, actor: int) -> None:
        if p in self.idle_since:
            self.idle_since[p] = {
                a for s in self.search.states for a, g in s.gate.items() if g.phase == sg.IDLE
            }
        if any(s.gate[actor].phase == sg.IDLE for s in self.search.states):
            for seen in self.idle_since.values():
                seen.add(actor)


class _OnlyTheEventsActor(GateChecker):
    """A wrong shortcut: only the event's actor is looked at (an event drops states, so other
    actors can stop being Idle in every state held)."""

    def _track_idle(self, p: str, actor: int) -> None:
        if p in self.idle_since:
            self.idle_since[p] = set()
        if any(s.gate[actor].phase == sg.IDLE for s in self.search.states):
            for seen in self.idle_since.values():
                seen.add(actor)


def _first_divergence(a: GateChecker, b: GateChecker, events: list[dict[str, Any]]) -> int | None:
    for n, ev in enumerate(events):
        a.step(ev)
        b.step(ev)
        if a.idle_since != b.idle_since or a.search.states != b.search.states:
            return n
    return None


def test_idle_actors_by_gate_function_are_the_walk_over_every_gate(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    config, events = bench_trace
    assert _first_divergence(GateChecker(config), _PlainIdle(config), events) is None
    # The comparison sees a wrong shortcut.
    assert _first_divergence(_OnlyTheEventsActor(config), _PlainIdle(config), events) is not None


def test_pcs_key_is_every_process_local_after_every_event(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    config, events = bench_trace
    checker = GateChecker(config)
    unannounced = 0
    for ev in events:
        checker.step(ev)
        for s in checker.search.states:
            key = checker.pcs_key(s)
            assert key == _plain_key(checker, s), ev
            unannounced += P_IDLE_UNANNOUNCED in [pc for _, pc in key[0]]
    assert unannounced > 0  # the refinement is met, not only its absence


def test_pcs_key_must_forget_when_a_post_is_announced(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    """The producers' part reads the posts: a post announced behind the memos' back leaves a
    stale key, which the comparison with ``local`` catches (``_announce`` forgets them)."""
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
    assert checker.pcs_key(s) == _plain_key(checker, s)
    checker.c.posts[p][k] = (0, "x")  # as ``_announce`` does, without forgetting
    assert checker.pcs_key(s) != _plain_key(checker, s)
    checker._forget_pcs()
    assert checker.pcs_key(s) == _plain_key(checker, s)


def test_the_memos_stay_bounded_and_change_nothing(
    bench_trace: tuple[dict[str, Any], list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    config, events = bench_trace
    roomy = GateChecker(config)
    for ev in events:
        roomy.step(ev)
    memos = (roomy._producer_pcs, roomy._worker_pcs, roomy._idle_of)
    assert all(len(m) <= gate_trace.MEMO_LIMIT for m in memos)
    monkeypatch.setattr(gate_trace, "MEMO_LIMIT", 4)
    tight = GateChecker(config)
    biggest = 0
    for ev in events:
        tight.step(ev)
        biggest = max(biggest, len(tight._worker_pcs), len(tight._idle_of))
        assert biggest <= 4
    assert biggest == 4  # the bound bites
    assert tight.search.states == roomy.search.states and tight.idle_since == roomy.idle_since
