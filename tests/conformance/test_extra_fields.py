"""Unknown extra fields are ignored by every engine of every design (docs/trace-format.md).

Regression for a review's findings: an extra field that another event of the format defines (a
``lane`` on a Stop event) was read by the engines. As a list it crashed the spec engines (``TypeError:
unhashable type``: the search took it for the event's unit); as a large integer it made the lock-free
lane's engine and the Work Lane's spec engine grow state for a hundred million lanes. Each design's
short bench run is judged as written and with extra fields on every event, by each engine it
has, and the verdicts must agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_checks.bench.traces import trace_benches
from model_checks.conformance import validate_lines
from model_checks.conformance.designs import cross_check_format

# Field names the designs' events use, with values no event of any design takes: unhashable
# lists, and indices far beyond any header's bound.
NAMES = ("lane", "mailbox", "actor", "worker", "victim", "to", "items", "task", "job", "item")
EXTRAS: dict[str, dict[str, object]] = {
    "lists": {name: [0] for name in NAMES},
    "indices": {name: 100_000_000 for name in NAMES},
}


def with_extras(line: str, extras: dict[str, object]) -> str:
    obj = json.loads(line)
    for name, value in extras.items():
        obj.setdefault(name, value)  # only where the event does not define the field
    return json.dumps(obj)


def cases() -> list[tuple[str, str]]:
    found = []
    for name in trace_benches():
        found.append((name, "fast"))
        if cross_check_format(name) is not None:
            found.append((name, "spec"))
    return found


@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", sorted(EXTRAS))
@pytest.mark.parametrize(("design", "engine"), cases())
def test_extra_fields_change_no_verdict(design: str, engine: str, kind: str, tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace_benches()[design].write(path, 20, 0)  # a short run, Stop included: 38 to 692 lines
    lines = path.read_text().splitlines()
    plain = validate_lines(lines, engine)
    extra = validate_lines([lines[0], *(with_extras(line, EXTRAS[kind]) for line in lines[1:])], engine)
    assert plain.allowed, plain.message
    assert (extra.allowed, extra.code, extra.rule, extra.seq, extra.events) == (
        plain.allowed,
        plain.code,
        plain.rule,
        plain.seq,
        plain.events,
    ), extra.message
