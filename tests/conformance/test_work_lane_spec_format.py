"""The Work Lane's traces judged by its spec engine as a ``DesignFormat`` (``spec_format.FORMAT``, the
design's ``spec_trace_format``): the same verdicts as ``lanecheck validate --engine spec`` on the
golden corpus, and the engine's states reported to an observer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance.reader import parse_line
from model_checks.conformance.streamed import validate_events
from model_checks.conformance.verdict import MALFORMED, Malformed, Rejected, Verdict
from model_checks.designs.work_lane.trace.parse import Config
from model_checks.designs.work_lane.trace.spec_engine import SpecEngine
from model_checks.designs.work_lane.trace.spec_format import FORMAT, SpecChecker
from model_checks.registry import design
from tests.conformance.test_corpus import CORPUS, MANIFEST, _observed

pytestmark = pytest.mark.timeout(120)
CONFIG = {"lanes": 2, "workers": 1, "lane_capacity": 2, "max_per_drain": 2, "ready_capacity": 2}


def _ev(seq: int, thread: str, event: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "thread": thread, "event": event, **fields}


# p0 posts one item to lane 1, w0 takes the lane, runs the item and leaves the lane idle; Stop drains.
ALLOWED = [
    _ev(1, "p0", "post", lane=1, item="a", result="ok", submit=True),
    _ev(2, "p0", "submit", lane=1),
    _ev(3, "w0", "take", lane=1),
    _ev(4, "w0", "drain_begin", lane=1),
    _ev(5, "w0", "invoke", lane=1, item="a"),
    _ev(6, "w0", "drain_end", lane=1, outcome="idle", invoked=1),
    _ev(7, "main", "stop_begin", mode="drain"),
    _ev(8, "main", "stop_end", mode="drain", result="ok"),
]


def _judged(path: Path) -> Verdict:
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        header = parse_line(lines[0], 1) if lines else None
    except Malformed as problem:
        return Verdict(False, MALFORMED, problem.message, line=problem.line)
    return FORMAT.validate(header, iter(lines[1:]), engine="spec", complete=False)


def _as_manifest(v: Verdict) -> dict[str, Any]:
    got: dict[str, Any] = {"code": v.code}
    if v.code == 0:
        got["prefix"] = v.prefix
    elif v.code == 1:
        got.update(seq=v.seq, rule=v.rule)
        assert v.message.startswith(f"seq {v.seq}: ") and v.last_states
    else:
        got["line"] = v.line
        assert f"line {v.line}" in v.message
    return got


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_the_corpus_gets_the_spec_engines_verdicts(name: str) -> None:
    """Allowed, refused (the same seq and rule) or malformed (the same line) as validate --engine spec."""
    expected = _observed(CORPUS / name, "spec")
    assert expected == MANIFEST[name]
    assert _as_manifest(_judged(CORPUS / name)) == expected


def test_an_allowed_trace_shows_the_engines_states_to_an_observer() -> None:
    seen: list[int] = []
    states: set[int] = set()

    def observer(checker: SpecChecker) -> None:
        seen.append(len(checker.states))
        states.update(map(hash, checker.states))

    checker = SpecChecker(CONFIG)
    checker.observe(observer)
    assert len(seen) == 1  # the initial states, before any event
    for ev in ALLOWED:
        checker.step(ev)
    checker.finish(False)
    assert checker.complete and len(seen) == 1 + len(ALLOWED) and all(seen)
    # the very states the engine alone holds after the same events
    engine = SpecEngine(Config(**CONFIG))
    alone: set[int] = set(map(hash, engine.states))
    for ev in ALLOWED:
        engine.step(ev)
        alone.update(map(hash, engine.states))
    assert states == alone and len(states) > len(ALLOWED)
    # lanes join as the trace names them: lane 1 alone is one lane (search_binding.UnitNames)
    assert checker.c.lanes == 1
    # and through the streamed driver, a complete behaviour
    verdict = validate_events(FORMAT, CONFIG, ALLOWED, complete=False)
    assert verdict.allowed and not verdict.prefix and "complete behaviour" in verdict.message


def test_refused_where_the_spec_engine_refuses() -> None:
    # w0 invokes an item nobody posted (rule 4), and a thread that owes a submission logs something else
    bad = [*ALLOWED[:4], _ev(5, "w0", "invoke", lane=1, item="zz")]
    v = validate_events(FORMAT, CONFIG, bad, complete=False)
    assert not v.allowed and v.seq == 5 and v.rule == 4
    owing = [ALLOWED[0], _ev(2, "p0", "post", lane=0, item="b", result="ok", submit=True)]
    v = validate_events(FORMAT, CONFIG, owing, complete=False)
    assert not v.allowed and v.seq == 2 and v.rule == 2 and "owes a submission of lane 1" in v.message
    # the checker refuses as the engine does, and reports no states for the refused event
    checker = SpecChecker(CONFIG)
    calls: list[int] = []
    checker.observe(lambda c: calls.append(len(c.states)))
    for ev in bad[:4]:
        checker.step(ev)
    with pytest.raises(Rejected) as refused:
        checker.step(bad[4])
    engine = SpecEngine(Config(**CONFIG))
    for ev in bad[:4]:
        engine.step(ev)
    with pytest.raises(Rejected) as alone:
        engine.step(bad[4])
    assert (refused.value.rule, refused.value.message) == (alone.value.rule, alone.value.message)
    assert len(calls) == 1 + 4


def test_a_prefix_is_allowed_with_what_is_pending_and_refused_as_complete() -> None:
    v = validate_events(FORMAT, CONFIG, ALLOWED[:2], complete=False)
    assert v.allowed and v.prefix and v.rule == 8 and "lane 1: 'a'" in v.message
    v = validate_events(FORMAT, CONFIG, ALLOWED[:2], complete=True)
    assert not v.allowed and v.rule == 8 and "stop_end" in v.message


def test_a_malformed_event_names_its_line() -> None:
    # a post to a lane the header does not have: the driver lets a post's lane through to the checker
    bad = [_ev(1, "p0", "post", lane=2, item="a", result="ok", submit=True)]
    v = validate_events(FORMAT, CONFIG, bad, complete=False)
    assert v.code == 2 and v.line == 2 and "line 2" in v.message
    # a post refused with a lane but result invalid_argument: the pair the hand check requires
    bad = [_ev(1, "p0", "post", lane=0, item="a", result="invalid_argument", submit=False)]
    v = validate_events(FORMAT, CONFIG, bad, complete=False)
    assert v.code == 2 and v.line == 2


def test_it_is_the_work_lane_designs_spec_trace_format() -> None:
    d = design("work-lane")
    assert d.spec_trace_format == "model_checks.designs.work_lane.trace.spec_format:FORMAT"
    header = {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG}
    lines = [json.dumps(e) for e in ALLOWED]
    assert FORMAT.validate(header, iter(lines), engine="spec", complete=False).allowed
