"""Schedule-gate traces judged against the spec: the reference's pass, every mutant's is rejected."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.bench.workload import run_producers
from model_checks.cli import app
from model_checks.conformance.validator import validate_lines
from model_checks.conformance.verdict import Verdict
from model_checks.designs.schedule_gate import scenarios as gate_scenarios
from model_checks.designs.schedule_gate.configs import CONFIGS
from model_checks.designs.schedule_gate.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.schedule_gate.scenarios import MUTANT_SCENARIOS, failure_lines, gate_program
from model_checks.designs.schedule_gate.trace import ENABLED_AT, GateChecker, local_pc
from model_checks.harness import Options, check
from reference.results import Result
from reference.schedule_gate import GateScheduler, header
from reference.tracing import RecordingTracer
from spec import schedule_gate as sg
from tests.gate.traces import one_post
from tests.spec_helpers import assert_enabled_only_at

CONFIG = {"actors": 1, "workers": 1, "permits": 1, "mailbox_capacity": 1, "max_per_drain": 2}


def lines_of(config: dict[str, int], events: list[dict[str, Any]]) -> list[str]:
    numbered = [{"seq": n, **e} for n, e in enumerate(events, start=1)]
    return [json.dumps(header(config))] + [json.dumps(e) for e in numbered]


# One post of p0 to actor 0, run by w0, then stop: the shortest complete behaviour.
ONE_POST = one_post(0)


def test_the_shortest_complete_behaviour_is_allowed() -> None:
    verdict = validate_lines(lines_of(CONFIG, ONE_POST))
    assert verdict.code == 0 and not verdict.prefix, verdict.message
    assert verdict.design == "schedule-gate"


def test_a_prefix_says_what_is_pending() -> None:
    verdict = validate_lines(lines_of(CONFIG, ONE_POST[:7]))
    assert verdict.code == 0 and verdict.prefix and verdict.rule == 8
    assert "'a'" in verdict.message and "w0" in verdict.message, verdict.message
    assert verdict.pending["events"] == {"0": ["a"]}


def test_stop_end_before_quiescence_is_rejected() -> None:
    early = [*ONE_POST[:8], ONE_POST[-1]]
    verdict = validate_lines(lines_of(CONFIG, early))
    assert verdict.code == 1 and verdict.seq == 9 and verdict.rule == 7, verdict.message


def test_nothing_may_follow_stop_end() -> None:
    verdict = validate_lines(lines_of(CONFIG, [*ONE_POST, ONE_POST[0]]))
    assert verdict.code == 1 and verdict.seq == 12 and verdict.rule == 7, verdict.message


def test_a_wrong_directive_is_rejected_naming_the_spec_value() -> None:
    wrong = [dict(e) for e in ONE_POST]
    wrong[8]["directive"] = "finalization_deferred"
    verdict = validate_lines(lines_of(CONFIG, wrong))
    assert verdict.code == 1 and verdict.seq == 9 and verdict.rule == 5
    assert "directive = 'release_permit'" in verdict.message, verdict.message
    assert verdict.last_states, "the states before the event are shown"


def test_a_thread_that_owes_a_token_does_that_first() -> None:
    early_take = [
        *ONE_POST[:4],
        {"thread": "p0", "event": "permit_acquire", "actor": 0, "item": "b", "granted": True},
    ]
    verdict = validate_lines(lines_of(CONFIG, early_take))
    assert verdict.code == 1 and verdict.seq == 5 and verdict.rule == 6, verdict.message


def test_the_same_post_must_keep_its_item() -> None:
    changed = [dict(e) for e in ONE_POST]
    changed[1]["item"] = "b"  # admit_begin of a post whose permit_acquire said "a"
    verdict = validate_lines(lines_of(CONFIG, changed))
    assert verdict.code == 1 and verdict.seq == 2, verdict.message


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ({"seq": 1, "thread": "p0", "event": "take", "actor": 1}, "maximum"),
        ({"seq": 1, "thread": "p0", "event": "finalize", "actor": 0}, "unknown event"),
        ({"seq": 2, "thread": "p0", "event": "take", "actor": 0}, "seq 2 where 1"),
        (
            {"seq": 1, "thread": "p0", "event": "publish", "actor": 0, "item": "a", "result": "maybe"},
            "result",
        ),
    ],
)
def test_malformed_lines_are_named(line: dict[str, Any], words: str) -> None:
    verdict = validate_lines([json.dumps(header(CONFIG)), json.dumps(line)])
    assert verdict.code == 2 and verdict.line == 2 and words in verdict.message, verdict.message


def test_a_bad_gate_header_is_malformed() -> None:
    verdict = validate_lines([json.dumps(header({**CONFIG, "permits": 0}))])
    assert verdict.code == 2 and verdict.line == 1 and "permits" in verdict.message, verdict.message


def _real_run(posts: int, permits: int) -> tuple[dict[str, int], list[dict[str, Any]]]:
    tracer = RecordingTracer()
    sched: GateScheduler[str] = GateScheduler(
        [lambda e: None] * 4, permits=permits, workers=2, mailbox_capacity=2, max_per_drain=2, tracer=tracer
    )

    def produce(p: int) -> None:
        for k in range(posts):
            # REJECTED and CAPACITY_EXCEEDED leave the event with us: post it again.
            while sched.post((k + p) % 4, f"p{p}.{k}") is not Result.SUCCESS:
                time.sleep(0.0005)

    run_producers(produce, 3)
    assert sched.stop() is Result.SUCCESS
    assert tracer.config is not None
    return tracer.config, tracer.events()


@pytest.mark.timeout(120)
def test_real_threads_trace_is_a_complete_behaviour() -> None:
    config, events = _real_run(60, permits=2)
    lines = [json.dumps(header(config))] + [json.dumps(e) for e in events]
    verdict = validate_lines(lines)
    assert verdict.code == 0 and not verdict.prefix, verdict.message


@pytest.mark.timeout(120)
def test_the_search_keeps_no_more_of_the_trace_than_its_live_states_need() -> None:
    config, events = _real_run(150, permits=3)
    checker = GateChecker(config)
    for ev in events:
        checker.step(ev)
    assert checker.complete
    for script in checker.c.posts.values():
        assert len(script) <= 2, script  # not 150: finished posts are forgotten
    assert checker.search.peak < 100, checker.search.peak


@pytest.mark.timeout(120)
def test_every_execution_of_the_one_producer_scenario_validates() -> None:
    result = check(gate_program(GateScheduler, script=((0,),), validate=True), Options(time_limit=60))
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive", result.summary()


@pytest.mark.timeout(120)
def test_each_distinct_trace_of_a_search_is_judged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    judged: list[tuple[str, ...]] = []

    def counting(lines: list[str]) -> Verdict:
        judged.append(tuple(lines))
        return validate_lines(lines)

    monkeypatch.setattr(gate_scenarios, "validate_lines", counting)
    result = check(gate_program(GateScheduler, script=((0,),), validate=True), Options(time_limit=60))
    assert result.failure is None and result.verdict == "exhaustive", result.summary()
    # Every execution's trace was checked, each distinct one by the validator, once.
    assert 0 < len(judged) < result.executions
    assert len(set(judged)) == len(judged)

    # A rejection still fails the search (the memo keeps allowed verdicts only).
    monkeypatch.setattr(gate_scenarios, "validate_lines", lambda lines: validate_lines(lines[:-1]))
    failed = check(gate_program(GateScheduler, script=((0,),), validate=True), Options(time_limit=60))
    assert failed.failure is not None and "trace not allowed" in failed.failure.message


@pytest.mark.timeout(120)
def test_two_producer_executions_validate_under_pct() -> None:
    program = gate_program(GateScheduler, actors=2, permits=1, script=((0, 1), (1, 0)), validate=True)
    result = check(program, Options(strategy="pct", max_executions=150))
    assert result.failure is None, result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("name", "event"),
    [
        ("check-then-act", "publish"),
        ("release-before-decision", "permit_release"),
        ("idle-ignoring-producers", "drain_end"),
        ("second-token", "admit_end"),
        ("last-outcome-only", "admit_end"),
    ],
)
def test_every_reference_mutant_trace_is_rejected_at_its_bug(name: str, event: str) -> None:
    assert set(REFERENCE_MUTANTS) == set(MUTANT_SCENARIOS)
    kwargs, options = MUTANT_SCENARIOS[name]
    result = check(gate_program(REFERENCE_MUTANTS[name].build, traced=True, **kwargs), options)
    assert result.failure is not None, result.summary()
    lines = failure_lines(result.failure, **kwargs)
    verdict = validate_lines(lines, complete=result.failure.kind == "lost_wakeup")
    assert verdict.code == 1 and verdict.seq is not None, verdict.message
    assert json.loads(lines[verdict.seq])["event"] == event, verdict.message


def test_enabled_at_is_the_first_guard_of_each_internal_action() -> None:
    """Every internal action, in every reachable state of `small`, is enabled only at its listed pcs."""
    assert_enabled_only_at(sg.SPEC, CONFIGS["small"], ENABLED_AT, local_pc)


def test_cli_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(lines_of(CONFIG, ONE_POST)) + "\n", encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    wrong = [dict(e) for e in ONE_POST]
    wrong[3]["directive"] = "release_permit"
    bad.write_text("\n".join(lines_of(CONFIG, wrong)) + "\n", encoding="utf-8")
    r = runner.invoke(app, ["validate", str(good)])
    assert r.exit_code == 0 and "complete behaviour" in r.output, r.output
    r = runner.invoke(app, ["validate", str(bad)])
    assert r.exit_code == 1 and "seq 4" in r.output and "rule 2" in r.output, r.output
    r = runner.invoke(app, ["validate", "--json", str(bad)])
    assert json.loads(r.output)["design"] == "schedule-gate"
