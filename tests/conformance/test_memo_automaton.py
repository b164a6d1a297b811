"""The memoised streaming search (``conformance/automaton.py``) against the search itself.

Schedule-gate traces of the real reference, valid and mutated after the automaton has warmed up
(so the mutated event meets learned transitions): both engines must give the same verdict, word
for word, and the memo must have answered from its cache on the way.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance.automaton import Automaton, Clock, Item, MemoChecker, canon, decanon
from model_checks.conformance.lines import validate_with
from model_checks.conformance.reader import parse_line
from model_checks.conformance.verdict import Verdict
from model_checks.designs.schedule_gate.bench import write_trace
from model_checks.designs.schedule_gate.trace import FORMAT, GateChecker, GateMemo
from spec.language import Function


@pytest.fixture(scope="module")
def gate_trace(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    path = Path(tmp_path_factory.mktemp("gate")) / "trace.jsonl"
    write_trace(path, 30)  # 4 producers x 30 posts: about 1,000 events
    return path.read_text(encoding="utf-8").splitlines()


GATE_HEADER = {
    "trace": "lanecheck",
    "version": 1,
    "design": "schedule-gate",
    "config": {"actors": 16, "workers": 4, "permits": 8, "mailbox_capacity": 8, "max_per_drain": 4},
}


def _cycle(k: int) -> list[dict[str, Any]]:
    """One post of p0 to actor k % 3, drained at once by w0: the cycles differ in item and counts."""
    actor, item = k % 3, f"p0.{k}"
    return [
        {"thread": "p0", "event": "permit_acquire", "actor": actor, "item": item, "granted": True},
        {"thread": "p0", "event": "admit_begin", "actor": actor, "item": item, "permit": True},
        {"thread": "p0", "event": "publish", "actor": actor, "item": item, "result": "ok"},
        {
            "thread": "p0",
            "event": "admit_end",
            "actor": actor,
            "item": item,
            "directive": "enqueue_ready_token",
            "deferred": False,
        },
        {"thread": "p0", "event": "token_enqueue", "actor": actor},
        {"thread": "w0", "event": "take", "actor": actor},
        {"thread": "w0", "event": "drain_begin", "actor": actor},
        {"thread": "w0", "event": "process", "actor": actor, "item": item},
        {"thread": "w0", "event": "drain_end", "actor": actor, "directive": "release_permit", "processed": 1},
        {"thread": "w0", "event": "permit_release", "actor": actor, "reason": "idle"},
    ]


def _cycles(n: int) -> list[str]:
    events = [ev for k in range(n) for ev in _cycle(k)]
    events.append({"thread": "main", "event": "stop_end"})
    return _renumbered(json.dumps(GATE_HEADER), events)


@pytest.fixture(scope="module")
def cyclic_trace() -> list[str]:
    """A deterministic trace whose shapes recur (the same post cycle, 40 times)."""
    return _cycles(40)


class _Counting:
    """A memoised checker factory that keeps its checkers, to read their hit counts."""

    def __init__(self) -> None:
        self.made: list[MemoChecker] = []

    def __call__(self, config: dict[str, Any]) -> Any:  # a ``streamed.Checker``
        m = MemoChecker(FORMAT.make(config), GateMemo(), Automaton())
        self.made.append(m)
        return m


def _both(lines: list[str], complete: bool = False) -> tuple[Verdict, Verdict, MemoChecker]:
    counting = _Counting()
    memo_fmt = dataclasses.replace(FORMAT, make=counting)
    spec = validate_with(FORMAT, lines, engine="spec", complete=complete)
    memo = validate_with(memo_fmt, lines, engine="spec", complete=complete)
    return spec, memo, counting.made[0]


def _same(spec: Verdict, memo: Verdict) -> None:
    assert (memo.allowed, memo.code, memo.line, memo.message) == (
        spec.allowed,
        spec.code,
        spec.line,
        spec.message,
    )


def _renumbered(header: str, events: list[dict[str, Any]]) -> list[str]:
    return [header] + [json.dumps({**ev, "seq": n}) for n, ev in enumerate(events, start=1)]


def test_valid_traces_agree(gate_trace: list[str], cyclic_trace: list[str]) -> None:
    for lines in (gate_trace, cyclic_trace):
        spec, memo, _ = _both(lines)
        assert spec.allowed and spec.code == 0
        _same(spec, memo)


def test_recurring_shapes_are_answered_from_the_cache() -> None:
    """Twice the cycles, the same automaton: what is learned in the first cycles is all there is."""
    _, _, short = _both(_cycles(40))
    spec, memo, long = _both(_cycles(80))
    _same(spec, memo)
    assert len(long.auto.forms) == len(short.auto.forms)
    assert long.auto.misses == short.auto.misses
    assert long.auto.hits == short.auto.hits + 40 * 10


def test_valid_prefixes_agree(gate_trace: list[str]) -> None:
    for cut in (len(gate_trace) // 3, len(gate_trace) * 2 // 3):
        spec, memo, _ = _both(gate_trace[:cut])
        assert spec.allowed
        _same(spec, memo)  # the pending words come from the real checker brought up to date


def _mutants(lines: list[str]) -> list[tuple[str, list[str]]]:
    header, events = lines[0], [parse_line(line, n) for n, line in enumerate(lines[1:], start=2)]
    rng = random.Random(24)
    late = range(len(events) * 2 // 3, len(events) - 1)
    out: list[tuple[str, list[str]]] = []
    for i in rng.sample(late, 3):
        swapped = [*events]
        swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
        out.append((f"swap {i}", _renumbered(header, swapped)))
        out.append((f"drop {i}", _renumbered(header, events[:i] + events[i + 1 :])))
        out.append((f"repeat {i}", _renumbered(header, events[: i + 1] + events[i:])))
    items = [i for i in late if "item" in events[i]]
    for i in rng.sample(items, 2):
        other = events[rng.choice(items)]["item"]
        out.append(
            (f"item {i}", _renumbered(header, [*events[:i], {**events[i], "item": other}, *events[i + 1 :]]))
        )
        fresh = {**events[i], "item": "never-posted"}
        out.append((f"fresh item {i}", _renumbered(header, [*events[:i], fresh, *events[i + 1 :]])))
    return out


def test_mutated_traces_agree(gate_trace: list[str], cyclic_trace: list[str]) -> None:
    refused = 0
    # The real run's mutants as prefixes (a mutant's live states can be many: judging one is
    # slow), the cyclic trace's also as finished runs.
    judged = [(m, False) for m in _mutants(gate_trace)]
    judged += [(m, complete) for m in _mutants(cyclic_trace) for complete in (False, True)]
    for (name, lines), complete in judged:
        spec, memo, _ = _both(lines, complete=complete)
        try:
            _same(spec, memo)
        except AssertionError as problem:
            raise AssertionError(f"{name} (complete={complete}): {problem}") from None
        refused += not spec.allowed
    assert refused > 0  # the corpus holds traces the memoised engine must refuse


def test_a_refusal_after_learned_transitions(cyclic_trace: list[str]) -> None:
    """The last process event repeated: refused, after the memo answered earlier events."""
    header, events = cyclic_trace[0], [json.loads(line) for line in cyclic_trace[1:]]
    last = max(i for i, ev in enumerate(events) if ev["event"] == "process")
    lines = _renumbered(header, events[: last + 1] + events[last:])
    spec, memo, m = _both(lines)
    assert not spec.allowed and spec.code == 1
    _same(spec, memo)
    assert m.auto.hits > 0


def test_canonical_form_reads_back_exactly(gate_trace: list[str]) -> None:
    """``decanon(canon(c)) == c`` and thawing a frozen configuration restores it, along a trace."""
    checker = GateChecker(dict(json.loads(gate_trace[0])["config"]))
    memo = GateMemo()
    for n, line in enumerate(gate_trace[1:400], start=2):
        checker.step(parse_line(line, n))
        frozen = memo.freeze(checker)
        form, items, _, bases = canon(frozen)
        assert decanon(form, items, bases) == frozen
        memo.thaw(checker, frozen)
        assert memo.freeze(checker) == frozen


def test_equal_shapes_meet() -> None:
    """Items and clocks renamed: two configurations that differ only in them share a form."""
    a = (Function(["p"], [(Clock("k", 7), Item("x1"))]), frozenset({(Clock("k", 9), Item("x2"))}))
    b = (Function(["p"], [(Clock("k", 107), Item("y1"))]), frozenset({(Clock("k", 109), Item("y2"))}))
    c = (Function(["p"], [(Clock("k", 7), Item("x1"))]), frozenset({(Clock("k", 10), Item("x2"))}))
    assert canon(a)[0] == canon(b)[0]
    assert canon(a)[0] != canon(c)[0]  # a different distance within the clock group
    assert canon(b)[1] == ("y1", "y2") and canon(b)[3] == (107,)
