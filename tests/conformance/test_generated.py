"""Spec-generated traces validate; mutated ones are judged the same by both engines and never crash."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model_checks.conformance import validate_file, validate_lines
from model_checks.conformance.export import export, lines, project, random_walk
from model_checks.designs.work_lane.bench_traces import CONFIG, synthetic_events
from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.explorer.check import check
from model_checks.explorer.counterexample import counterexample_events
from model_checks.explorer.search import Options
from model_checks.registry import design
from spec.work_lane import SPEC
from tests.conformance.corpus_steps import EVENTS

SETS = [
    CONFIGS["small"],
    CONFIGS["standard"],
    replace(CONFIGS["standard"], workers=1, max_per_drain=1, lane_capacity=1),
    replace(CONFIGS["standard"], script=((0, 0, 1, 0), (1, 1, 0), (0,)), stops=("discard", "drain", "drain")),
]


def _walk(seed: int) -> tuple[Any, list[dict[str, Any]]]:
    rng = random.Random(seed)
    constants = rng.choice(SETS)
    return constants, project(random_walk(SPEC, constants, rng))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_random_walks_validate(seed: int) -> None:
    constants, events = _walk(seed)
    for engine in ("fast", "spec"):
        v = validate_lines(list(lines(constants, events)), engine=engine)
        assert v.code == 0, v.message
        assert v.prefix == (not any(e["event"] == "stop_end" for e in events))


def _mutate(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    out = [dict(e) for e in events]
    i = rng.randrange(len(out))
    kind = rng.randrange(3)
    if kind == 0:
        del out[i]
    elif kind == 1 and len(out) > 1:
        j = min(i + 1, len(out) - 1)
        out[i], out[j] = out[j], out[i]
    else:
        e = out[i]
        name = rng.choice([k for k in e if k not in ("seq", "event")])
        v = e[name]
        if isinstance(v, bool):
            e[name] = not v
        elif isinstance(v, int):
            e[name] = (v + 1) % 2 if name == "lane" else v + 1
        elif name == "thread":
            e[name] = rng.choice(["p0", "p1", "w0", "w1", "s0", "s1", "main"])
        elif name == "item":
            e[name] = rng.choice(["p0.0", "p0.1", "p1.0", "p1.1", "zz"])
        elif name in ("outcome", "result", "mode", "reason"):
            e[name] = {
                "idle": "resubmit",
                "resubmit": "idle",
                "ok": "capacity_exceeded",
                "drain": "discard",
            }.get(v, "ok" if name == "result" else v)
        elif name == "items":
            e[name] = [*list(reversed(v)), "x"]
    for n, e in enumerate(out, start=1):
        e["seq"] = n
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_mutations_same_verdict_from_both_engines(seed: int) -> None:
    constants, events = _walk(seed)
    if not events:
        return
    rng = random.Random(seed ^ 0x5EED)
    mutated = _mutate(events, rng)
    text = list(lines(constants, mutated))
    fast = validate_lines(text)
    generic = validate_lines(text, engine="spec")
    assert (fast.code, fast.seq, fast.line) == (generic.code, generic.seq, generic.line), (
        fast.message,
        generic.message,
    )
    if fast.code == 1:
        assert fast.rule in range(1, 9) and fast.message.startswith(f"seq {fast.seq}: ")


def test_drops_and_field_changes_are_mostly_rejected() -> None:
    """On long concurrent traces, a dropped event or a changed field is almost always caught.

    (Swapping two adjacent events is often legal: steps of different threads commute.)
    """
    header = json.dumps({"trace": "lanecheck", "version": 1, "design": "work-lane", "config": CONFIG})
    rejected = total = 0
    for seed in range(60):
        events = list(synthetic_events(200, seed))
        rng = random.Random(seed)
        for _ in range(4):
            state = rng.getstate()
            rng.randrange(len(events))
            kind = rng.randrange(3)
            rng.setstate(state)
            mutated = _mutate(events, rng)
            if kind == 1:
                continue
            total += 1
            rejected += validate_lines([header, *(json.dumps(e) for e in mutated)]).code != 0
    assert rejected / total > 0.8, (rejected, total)


def test_exported_traces_validate(tmp_path: Path) -> None:
    written = export(tmp_path, SPEC, CONFIGS["small"], name="small")
    assert written
    names: set[str] = set()
    for path in written:
        for engine in ("fast", "spec"):
            v = validate_file(path, engine=engine)
            assert v.code == 0 and not v.prefix, (path, v.message)
        names.update(line.split('"event": "')[1].split('"')[0] for line in path.read_text().splitlines()[1:])
    assert names == set(EVENTS)


EXPECTED_SEQ = {
    "split-idle": (7, 5),
    "publish-outside-mutex": (7, 5),
    "double-reserve": (3, 2),
    "small-ready-queue": (4, 1),
    "stop-skips-inflight": (3, 7),
    "ignore-budget": (7, 3),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_SEQ))
def test_mutant_counterexamples_are_rejected_where_the_bug_shows(name: str) -> None:
    d = design("work-lane")
    mutant = d.mutant(name)
    constants = mutant.constants(d.config(mutant.config))
    result = check(mutant.spec, constants, Options(liveness=False))
    assert result.counterexample is not None
    events = counterexample_events(result.counterexample)
    for engine in ("fast", "spec"):
        v = validate_lines(list(lines(constants, events)), engine=engine)
        assert (v.code, v.seq, v.rule) == (1, *EXPECTED_SEQ[name]), v.message
