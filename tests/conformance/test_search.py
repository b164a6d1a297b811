"""The streaming search's shortcuts change no verdict: keyed by ``pc_key``, by ``local`` alone, or
with neither, the live state sets agree after every event of a lock-free reference trace."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from model_checks.conformance.lane_roles import role_pc
from model_checks.conformance.search import TraceSearch
from model_checks.conformance.streamed import NotObservable, validate_events
from model_checks.designs.work_lane_lockfree.trace import checker as lf_checker
from model_checks.designs.work_lane_lockfree.trace.format import FORMAT as LF_FORMAT
from model_checks.designs.work_lane_lockfree.trace.validate import validate_lines
from reference.tracing import JsonlTracer
from reference.work_lane_lockfree import trace_header
from spec import work_lane_lockfree as wlf
from tests.work_lane_lockfree.test_trace_reference import _run_real_threads


def _trace(path: Path) -> list[str]:
    _run_real_threads(JsonlTracer(path, make_header=trace_header))
    return path.read_text().splitlines()


def _states_after_each_event(
    lines: list[str], monkeypatch: pytest.MonkeyPatch, **drop: Any
) -> list[frozenset[Any]]:
    """The live states after every event, with some of the checker's shortcuts taken away."""
    seen: list[frozenset[Any]] = []

    class Recording(TraceSearch):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, **drop})

        def step(self, ev: Any, processes: Any) -> None:
            super().step(ev, processes)
            seen.append(frozenset(self.states))

    monkeypatch.setattr(lf_checker, "TraceSearch", Recording)
    verdict = validate_lines(lines, complete=True)
    assert verdict.allowed and not verdict.prefix, verdict.message
    return seen


@pytest.mark.timeout(120)
def test_pc_key_local_and_plain_closures_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _trace(tmp_path / "run.jsonl")
    keyed = _states_after_each_event(lines, monkeypatch)
    by_local = _states_after_each_event(lines, monkeypatch, pc_key=None)
    plain = _states_after_each_event(lines, monkeypatch, pc_key=None, local=None, enabled_at=None)
    assert len(keyed) == len(lines) - 1 > 50
    assert keyed == by_local == plain
    assert any(len(states) > 1 for states in keyed)  # the closure had choices to agree on


@pytest.mark.timeout(60)
def test_a_pc_key_hiding_a_process_changes_the_states(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key must determine every process's pc: one that leaves the producers out reuses the
    first producer pcs it met, and the search's state sets differ (so the test above can fail).
    Until session 41 this left the stoppers out: a Stop call closing admission, unlogged, let a
    worker give its work item up (``Discarding``), so the stoppers' pcs decided which workers'
    steps an event could need. Since ``Discarding`` holds only after the logged ``stop_begin``
    that no longer shows on these traces (0 of 8, drain and discard, Stop racing the posts or
    not); leaving the producers out shows on each one. Up to eight traces are tried, as the
    interleaving the threads take decides it."""
    for attempt in range(8):
        if _blind_key_differs(tmp_path / f"run{attempt}.jsonl", monkeypatch):
            return
    pytest.fail("a pc key without the producers' pcs gave the same states on eight traces")


def _blind_key_differs(path: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    lines = _trace(path)
    keyed = _states_after_each_event(lines, monkeypatch)

    def blind(s: wlf.Vars) -> Any:
        return lf_checker.pc_key(s)[1:]  # the workers' and stoppers' pcs

    seen: list[frozenset[Any]] = []

    class Blind(TraceSearch):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, "pc_key": blind})

        def step(self, ev: Any, processes: Any) -> None:
            super().step(ev, processes)
            seen.append(frozenset(self.states))

    monkeypatch.setattr(lf_checker, "TraceSearch", Blind)
    validate_lines(lines, complete=True)
    return seen[: len(keyed)] != keyed


def test_the_lockfree_pc_key_lists_every_process_pc() -> None:
    c = lf_checker.LockFreeTraceConstants(
        lanes=1, workers=1, lane_capacity=2, max_per_drain=1, ready_capacity=1, callback_stop=True
    )
    c.producers.append("p:a")
    c.posts["p:a"] = {}
    c.bound_workers.append("w:b")
    (s,) = list(wlf.Init(c))
    producers, workers, stoppers = lf_checker.pc_key(s)
    assert list(producers) == [role_pc(s, "p:a")]
    assert list(workers) == [role_pc(s, "w:b")]
    assert list(stoppers) == [role_pc(s, t) for t in c.stopper_names()]


def _lockfree_verdict(lines: list[str], observe: Any = None) -> Any:
    header = json.loads(lines[0])
    return LF_FORMAT.validate(header, iter(lines[1:]), engine="spec", complete=True, observe=observe)


@pytest.mark.timeout(120)
def test_the_observer_sees_the_states_after_each_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = _trace(tmp_path / "run.jsonl")
    held: list[frozenset[Any]] = []
    constants: list[Any] = []

    def observe(search: TraceSearch) -> None:
        held.append(frozenset(search.states))
        constants.append(search.c)

    verdict = _lockfree_verdict(lines, observe)
    assert verdict.allowed and not verdict.prefix, verdict.message
    # once before the first event, then after every event: the very sets the search held
    assert len(held) == len(lines)
    after_each = _states_after_each_event(lines, monkeypatch)
    assert held[1:] == after_each
    assert all(held) and isinstance(constants[-1], wlf.Constants)


@pytest.mark.timeout(120)
def test_without_an_observer_nothing_changes(tmp_path: Path) -> None:
    lines = _trace(tmp_path / "run.jsonl")
    calls: list[int] = []
    observed = _lockfree_verdict(lines, lambda search: calls.append(len(search.states)))
    plain = _lockfree_verdict(lines)
    assert calls and observed.as_json() == plain.as_json()
    bad = [*lines[:5], *lines[6:]]  # a gap in seq: the same refusal with or without the observer
    assert _lockfree_verdict(bad, lambda search: None).as_json() == _lockfree_verdict(bad).as_json()
    checker = lf_checker.LockFreeChecker(json.loads(lines[0])["config"])
    assert checker.search.observer is None  # off unless asked for


def test_a_checker_without_a_streaming_search_cannot_be_observed() -> None:
    hand_written = dataclasses.replace(LF_FORMAT, make=lambda config: SimpleNamespace(complete=False))
    with pytest.raises(NotObservable, match="no streaming search"):
        validate_events(hand_written, {}, [], complete=False, observe=lambda s: None)
    # not asked to observe, the same format is judged as before (the fake checker then fails to finish)
    with pytest.raises(AttributeError):
        validate_events(hand_written, {}, [], complete=False)
