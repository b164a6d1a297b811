"""A trace's unit numbers (actors, lanes, mailboxes) are only names.

The same trace with its units renumbered to any numbers its header allows gets the same verdict
from every engine, in words that say its own numbers: the search names units in the order the
trace does (``search_binding.UnitNames``), so that a state holds the units the trace named and not
every unit below the largest number (a trace naming mailbox 65,535 once took a second an event).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from model_checks.bench.traces import trace_benches
from model_checks.conformance.validator import validate_lines
from model_checks.conformance.verdict import Verdict
from tests.helpers.perturbed import perturbed

# design -> (the event field naming a unit, the header's count of units, the engines, its size)
DESIGNS: dict[str, tuple[str, str, tuple[str, ...], int]] = {
    "akka-mailbox": ("mailbox", "mailboxes", ("spec",), 6),
    "schedule-gate": ("actor", "actors", ("spec",), 8),
    "work-lane": ("lane", "lanes", ("fast", "spec"), 12),
    "work-lane-lockfree": ("lane", "lanes", ("spec",), 8),
}
UNIT_QUEUES = ("executor", "ready")  # the states' queues of units, as the designs show them
UNIT_VALUES = ("owed_submissions", "submissions")  # thread -> the lane whose submission it owes
LAST = 65_535  # the largest unit number a header may allow (reader.MAX_INDEXED units)


def spread(unit: int) -> int:
    """Units 0..15 renumbered far apart, the last to 65,535, in the same order."""
    assert 0 <= unit <= 15, unit
    return LAST - 4_093 * (15 - unit)


def reversed_spread(unit: int) -> int:
    """Units 0..15 renumbered far apart, the first to 65,535, in the reverse order."""
    assert 0 <= unit <= 15, unit
    return LAST - 4_093 * unit


def _first_use_numbers(lines: list[str], field: str) -> list[str]:
    """The trace with its units numbered 0, 1, 2, ... in the order it first names them (then a
    state of either engine holds exactly the units named so far, under either numbering)."""
    names: dict[int, int] = {}
    out = [lines[0]]
    for line in lines[1:]:
        ev = json.loads(line)
        if type(ev.get(field)) is int:
            ev[field] = names.setdefault(ev[field], len(names))
        out.append(json.dumps(ev))
    return out


def _renamed_lines(lines: list[str], field: str, count: str, renamed: Callable[[int], int]) -> list[str]:
    header = json.loads(lines[0])
    header["config"][count] = LAST + 1
    out = [json.dumps(header)]
    for line in lines[1:]:
        ev = json.loads(line)
        if type(ev.get(field)) is int:
            ev[field] = renamed(ev[field])
        out.append(json.dumps(ev))
    return out


def _renamed_words(text: str, field: str, renamed: Callable[[int], int]) -> str:
    """``text`` with each unit number it names (``mailbox 3``, ``'mailbox': 3``, ``mailbox = 3``)
    renumbered."""
    return re.sub(rf"(\b{field}s?(?: =|':)? )(\d+)", lambda m: f"{m[1]}{renamed(int(m[2]))}", text)


def _renamed_shown(value: Any, field: str, renamed: Callable[[int], int], key: str = "") -> Any:
    """A verdict's ``pending`` or ``last_states`` with its unit numbers renumbered: keys that are
    units (numbers, or numbers as text), the executor's queue of them, and the words."""
    if isinstance(value, dict):
        if key in UNIT_VALUES:
            return {k: renamed(v) if type(v) is int else v for k, v in value.items()}
        return {_renamed_key(k, renamed): _renamed_shown(v, field, renamed, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        if key in UNIT_QUEUES:
            return [renamed(u) for u in value]
        return [_renamed_shown(v, field, renamed) for v in value]
    if isinstance(value, str):
        return _renamed_words(value, field, renamed)
    return value


def _renamed_key(key: Any, renamed: Callable[[int], int]) -> Any:
    if type(key) is int:
        return renamed(key)
    return str(renamed(int(key))) if isinstance(key, str) and key.isdigit() else key


def _corpus(design: str, size: int, out: Path) -> list[Path]:
    bench = trace_benches()[design]
    path = out / f"{design}.jsonl"
    bench.write(path, size, 0)
    return [path, *perturbed(design, path.read_text().splitlines(), out)]


def _judged(design: str, tmp_path: Path) -> list[tuple[str, list[str], str, Verdict]]:
    """Each corpus trace in first-use numbers, with each engine's verdict on it."""
    field, _, engines, size = DESIGNS[design]
    complete = trace_benches()[design].complete
    judged = []
    for path in _corpus(design, size, tmp_path):
        lines = _first_use_numbers(path.read_text().splitlines(), field)
        for engine in engines:
            verdict = validate_lines(lines, engine, complete=complete)
            # A unit beyond the header's count is malformed; renumbered below 65,536 it would not be.
            if verdict.code != 2:
                judged.append((path.name, lines, engine, verdict))
    codes = {verdict.code for *_, verdict in judged}
    assert {0, 1} <= codes, codes  # the corpus holds traces both allowed and refused
    assert any(v.pending or v.last_states for *_, v in judged), "no verdict shows pending work or states"
    return judged


def _renumbered(
    design: str, tmp_path: Path, renamed: Callable[[int], int]
) -> Iterator[tuple[str, Verdict, Verdict]]:
    """Per corpus trace and engine: ``(where, verdict renumbered, verdict expected)``, the latter
    the first-use trace's verdict with its words renumbered."""
    field, count, _, _ = DESIGNS[design]
    complete = trace_benches()[design].complete
    for name, lines, engine, first in _judged(design, tmp_path):
        second = validate_lines(_renamed_lines(lines, field, count, renamed), engine, complete=complete)
        expected = dataclasses.replace(
            first,
            message=_renamed_words(first.message, field, renamed),
            pending=_renamed_shown(first.pending, field, renamed),
            last_states=_renamed_shown(first.last_states, field, renamed),
        )
        yield f"{name} ({engine})", second, expected


@pytest.mark.timeout(300)
@pytest.mark.parametrize("design", list(DESIGNS))
def test_renumbered_units_get_the_same_verdict_in_their_own_numbers(design: str, tmp_path: Path) -> None:
    for where, second, expected in _renumbered(design, tmp_path, spread):
        assert second == expected, where


@pytest.mark.timeout(300)
@pytest.mark.parametrize("design", list(DESIGNS))
def test_words_list_units_in_the_order_of_the_traces_numbers(design: str, tmp_path: Path) -> None:
    """Renumbered in the reverse order, the verdict is the same but for the order units are listed in."""
    field = DESIGNS[design][0]
    listed = rf"\b{field} (\d+): [^;]*"  # a unit's entry in a list of what each holds
    entry = listed.replace("(", "(?:")
    for where, second, expected in _renumbered(design, tmp_path, reversed_spread):
        message = expected.message
        assert re.sub(listed, "-", second.message) == re.sub(listed, "-", message), where
        assert sorted(re.findall(entry, second.message)) == sorted(re.findall(entry, message)), where
        numbers = [int(n) for n in re.findall(listed, second.message)]
        assert numbers == sorted(numbers), (where, second.message)
        for shown in second.last_states:
            for value in shown.values():
                if isinstance(value, dict) and all(str(k).isdigit() for k in value):
                    assert list(value) == sorted(value, key=int), (where, value)
        # Dicts compare regardless of order; the states shown are a set, listed in some order.
        unordered = dataclasses.replace(second, message=message, last_states=_unordered(second.last_states))
        assert unordered == dataclasses.replace(expected, last_states=_unordered(expected.last_states)), where


def _unordered(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(states, key=lambda shown: json.dumps(shown, sort_keys=True))
