"""``_plan``'s two memos (``conformance/event_plan.py``): keyed by the chains ``needed`` can read
(``deferral.relevant_chains``) they give the answer ``needed`` gives on every chain of every
state, and what the search holds stops growing with the trace (docs/conformance.md, "Session 42").

Before, the Schedule Gate's plan memo was keyed by every state's chains: it met new keys all
along its bench trace (about 500 at 80k events, each about 1.3 KB), and the memory the search
held doubled from 9k to 90k events.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Hashable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from model_checks.bench.traces import trace_benches
from model_checks.conformance.deferral import Labelled, event_steps, needed, relevant_chains
from model_checks.conformance.event_plan import HELD_PLAN_LIMIT
from model_checks.conformance.search import TraceSearch
from model_checks.conformance.step_index import PART_CACHE_LIMIT
from model_checks.conformance.validator import validate_lines
from model_checks.designs.akka_mailbox import trace as akka_trace
from model_checks.designs.schedule_gate import trace as gate_trace

pytestmark = pytest.mark.timeout(300)


def _lines(tmp_path: Path, design: str, size: int) -> list[str]:
    path = tmp_path / f"{design}.jsonl"
    trace_benches()[design].write(path, size, 0)
    return path.read_text().splitlines()


def _states(
    lines: list[str], monkeypatch: pytest.MonkeyPatch, module: ModuleType, *, memo: bool, complete: bool
) -> list[Any]:
    """The states after each event; ``memo=False``: every plan worked out by ``needed`` afresh, on
    every chain of every state held."""
    seen: list[Any] = []

    class Recording(TraceSearch):
        def _plan(self, *args: Any) -> Any:
            if not memo:
                self._held.clear()
                self._relevant.clear()
            return super()._plan(*args)

        def step(self, ev: Any, processes: Any) -> None:
            super().step(ev, processes)
            seen.append(frozenset(self.states))

    monkeypatch.setattr(module, "TraceSearch", Recording)
    verdict = validate_lines(lines, complete=complete)
    assert verdict.code == 0, verdict.message
    return seen


@pytest.mark.parametrize(
    ("design", "size", "module", "complete"),
    [("schedule-gate", 60, gate_trace, False), ("akka-mailbox", 60, akka_trace, True)],
)
def test_the_memos_give_what_needed_gives_on_every_chain(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    design: str,
    size: int,
    module: ModuleType,
    complete: bool,
) -> None:
    lines = _lines(tmp_path, design, size)
    fresh = _states(lines, monkeypatch, module, memo=False, complete=complete)
    remembered = _states(lines, monkeypatch, module, memo=True, complete=complete)
    assert len(fresh) > 200
    assert remembered == fresh


def _step(*_args: Any) -> None:
    """An action's function: ``relevant_chains`` reads only the names."""


def test_a_chain_no_step_may_block_is_left_out() -> None:
    """A worker's ``FoundEmpty`` does not move past a ``Publish`` to its actor: another actor's
    worker cannot matter to a publish, the same actor's can, and the event's own chains stay."""
    empty = frozenset({"FoundEmpty", "BudgetSpent"})
    deferred = {"FoundEmpty": frozenset({"Publish"}), "BudgetSpent": frozenset()}
    names: dict[Hashable, frozenset[str]] = {"w:a": empty, "w:b": empty, "w:c": empty}
    per: dict[Hashable, list[Labelled]] = {
        "p:x": [("Publish", _step, ("p:x",))],
        "w:c": [("Take", _step, ("w:c",))],
    }
    held = [(("w:a", empty, 1), ("w:b", empty, 2)), (("w:b", empty, 2), ("w:c", empty, 3))]
    blocked_of: dict[frozenset[str], frozenset[str]] = {}
    tables = (deferred, names, blocked_of)

    def kept(procs: tuple[str, ...], at: int, ruled_out: frozenset[str]) -> list[Any]:
        first = event_steps(procs, at, ruled_out, per, True, {})
        return relevant_chains(held, procs, first, tables)

    assert kept(("p:x",), 2, frozenset()) == [("w:b", empty, 2)]  # once, though two states hold it
    assert kept(("w:c",), 3, frozenset()) == [("w:c", empty, 3)]
    # ruled out by its fields, the publish blocks nothing
    assert kept(("p:x",), 2, frozenset({"Publish"})) == []


def test_an_own_process_s_actions_count_about_each_of_its_units() -> None:
    """``needed`` counts the event's own process's actions over all its chains about each unit it
    holds: its ``Y`` about unit 1 blocks another process's ``X`` about unit 2, where it also
    holds a chain. That other chain is pulled in, so it stays in the key."""
    deferred = {"X": frozenset({"Y"}), "Y": frozenset(), "Z": frozenset()}
    names: dict[Hashable, frozenset[str]] = {"p": frozenset({"Y", "Z"}), "q": frozenset({"X"})}
    per: dict[Hashable, list[Labelled]] = {"p": [("Log", _step, ("p",))]}
    held = [(("p", frozenset({"Y"}), 1),), (("p", frozenset({"Z"}), 2), ("q", frozenset({"X"}), 2))]
    answer = needed(
        held,
        ("p",),
        event_steps(("p",), 1, frozenset(), per, True, {}),
        deferred=deferred,
        deferred_names=names,
        blocked_of={},
        leading={},
        enabled_at={},
        moves_to={},
        prefixes={},
    )
    assert "q" in answer
    first = event_steps(("p",), 1, frozenset(), per, True, {})
    assert ("q", frozenset({"X"}), 2) in relevant_chains(held, ("p",), first, (deferred, names, {}))


def _gate_memory(lines: list[str], monkeypatch: pytest.MonkeyPatch, at: tuple[int, ...]) -> list[int]:
    """Traced memory after the events numbered ``at`` (each after a collection of the memos'
    sizes: the plan memos and the parts' memos are checked against their bounds on the way)."""
    found: list[int] = []
    count = [0]

    class Measuring(TraceSearch):
        def step(self, ev: Any, processes: Any) -> None:
            super().step(ev, processes)
            count[0] += 1
            assert len(self._held) <= HELD_PLAN_LIMIT
            assert all(len(m) <= PART_CACHE_LIMIT for m in self._part_memo)
            if count[0] in at:
                found.append(tracemalloc.get_traced_memory()[0])

    monkeypatch.setattr(gate_trace, "TraceSearch", Measuring)
    tracemalloc.start()
    try:
        verdict = validate_lines(lines)
    finally:
        tracemalloc.stop()
    assert verdict.code == 0, verdict.message
    return found


def test_the_gate_holds_no_more_at_40k_events_than_at_8k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the gate's search holds (traced memory between events, its memos included) is flat
    along its bench trace: before, it grew from 0.49 MB at 9k events to 0.79 MB at 45k."""
    lines = _lines(tmp_path, "schedule-gate", 1_200)
    assert len(lines) > 42_000
    early, late = _gate_memory(lines, monkeypatch, (8_000, 40_000))
    assert late < 1.3 * early, (early, late)
