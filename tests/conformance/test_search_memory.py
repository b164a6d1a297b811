"""The streaming search's memos keyed by pcs stay bounded (``TraceSearch(cache_limit=...)``).

A long trace keeps meeting new combinations of the processes' pcs: unbounded, the memos grew
with the trace (a 1M-event Schedule Gate trace: +190 KB of traced memory pure, +345 KB compiled,
with one live state throughout). Emptying a memo at its limit changes no state the search holds.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from model_checks.bench.traces import trace_benches
from model_checks.conformance.event_plan import PLAN_CACHE_FACTOR
from model_checks.conformance.search import TraceSearch
from model_checks.conformance.validator import validate_lines
from model_checks.designs.schedule_gate import trace as gate_trace
from model_checks.designs.work_lane.trace import spec_engine as wl_engine


def _run(
    lines: list[str],
    monkeypatch: pytest.MonkeyPatch,
    limit: int | None,
    module: ModuleType = gate_trace,
    engine: str = "fast",
) -> tuple[list[Any], int, int]:
    """The states after each event, the most entries a pcs memo held and the most the plan memo
    held, with the search ``module`` builds given ``cache_limit=limit`` (None: the default)."""
    seen: list[Any] = []
    most = [0, 0]

    class Recording(TraceSearch):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, **({} if limit is None else {"cache_limit": limit})})

        def step(self, ev: Any, processes: Any) -> None:
            super().step(ev, processes)
            seen.append(frozenset(self.states))
            most[0] = max(most[0], len(self._by_key), *(len(m) for m in self._part_memo))
            most[1] = max(most[1], len(self._relevant))

    monkeypatch.setattr(module, "TraceSearch", Recording)
    verdict = validate_lines(lines, engine=engine)
    assert verdict.code == 0, verdict.message
    return seen, most[0], most[1]


@pytest.mark.timeout(120)
def test_a_bounded_memo_holds_the_same_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "gate.jsonl"
    trace_benches()["schedule-gate"].write(path, 50, 0)
    lines = path.read_text().splitlines()
    free, most_free, _ = _run(lines, monkeypatch, None)
    bounded, most_bounded, _ = _run(lines, monkeypatch, 4)
    assert most_free > 4  # the trace meets more pcs combinations than the bound: it bites
    assert most_bounded <= 4
    # every event but the last (stop_end ends the run without a step of the search)
    assert len(free) == len(lines) - 2
    assert bounded == free


@pytest.mark.timeout(300)
def test_the_plan_memo_is_bounded_at_its_own_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_plan``'s memo (``_relevant``) holds ``PLAN_CACHE_FACTOR`` times the pcs memos' limit: on a
    Work Lane trace it reaches that bound and no more, and the states after each event are those
    of an unbounded search."""
    path = tmp_path / "work-lane.jsonl"
    trace_benches()["work-lane"].write(path, 600, 0)
    lines = path.read_text().splitlines()
    free, _, most_free = _run(lines, monkeypatch, None, wl_engine, "spec")
    bounded, _, most_bounded = _run(lines, monkeypatch, 1, wl_engine, "spec")
    assert most_free > PLAN_CACHE_FACTOR  # the trace meets more plans than the tight bound: it bites
    assert most_bounded == PLAN_CACHE_FACTOR  # 16 times ``cache_limit=1``
    assert bounded == free
