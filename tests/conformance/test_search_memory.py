"""The streaming search's memos keyed by pcs stay bounded (``TraceSearch(cache_limit=...)``).

A long trace keeps meeting new combinations of the processes' pcs: unbounded, the memos grew
with the trace (a 1M-event Schedule Gate trace: +190 KB of traced memory pure, +345 KB compiled,
with one live state throughout). Emptying a memo at its limit changes no state the search holds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from model_checks.bench.traces import trace_benches
from model_checks.conformance.search import TraceSearch
from model_checks.conformance.validator import validate_lines
from model_checks.designs.schedule_gate import trace as gate_trace


def _run(lines: list[str], monkeypatch: pytest.MonkeyPatch, limit: int | None) -> tuple[list[Any], int]:
    """The states after each event, and the most entries a pcs memo held."""
    seen: list[Any] = []
    most = [0]

    class Recording(TraceSearch):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **{**kwargs, **({} if limit is None else {"cache_limit": limit})})

        def step(self, ev: Any, processes: Any) -> None:
            super().step(ev, processes)
            seen.append(frozenset(self.states))
            most[0] = max(most[0], len(self._by_key), *(len(m) for m in self._part_memo))

    monkeypatch.setattr(gate_trace, "TraceSearch", Recording)
    verdict = validate_lines(lines)
    assert verdict.code == 0, verdict.message
    return seen, most[0]


@pytest.mark.timeout(120)
def test_a_bounded_memo_holds_the_same_states(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "gate.jsonl"
    trace_benches()["schedule-gate"].write(path, 50, 0)
    lines = path.read_text().splitlines()
    free, most_free = _run(lines, monkeypatch, None)
    bounded, most_bounded = _run(lines, monkeypatch, 4)
    assert most_free > 4  # the trace meets more pcs combinations than the bound: it bites
    assert most_bounded <= 4
    # every event but the last (stop_end ends the run without a step of the search)
    assert len(free) == len(lines) - 2
    assert bounded == free
