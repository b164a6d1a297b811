"""The lock-free reference's v2 traces under the harness: every trace of the exhaustive 1-producer
scenario allowed, the 2-producer ones sampled (each reference mutant's trace is rejected by its
harness row: test_reference_harness.py)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from model_checks.conformance import validate_file
from model_checks.designs.work_lane_lockfree.scenarios import (
    SCENARIO_SPECS,
    LockFreeScenario,
    lockfree_program,
)
from model_checks.harness import Options, check
from reference.results import Result
from reference.tracing import JsonlTracer
from reference.work_lane_lockfree import LaneSpec, LockFreeScheduler, StopMode, trace_header

pytestmark = pytest.mark.usefixtures("quiet_reference")


def test_the_header_names_the_design_and_version_2() -> None:
    h = trace_header({"lanes": 1})
    assert (h["trace"], h["design"], h["version"], h["config"]) == (
        "lanecheck",
        "work-lane-lockfree",
        2,
        {"lanes": 1},
    )


@pytest.mark.timeout(120)
def test_every_trace_of_the_one_producer_scenario_is_allowed() -> None:
    result = check(lockfree_program(LockFreeScenario(producers=1), validate=True), Options(strategy="dpor"))
    assert result.verdict == "exhaustive" and result.failure is None, result.report()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(SCENARIO_SPECS))
def test_sampled_traces_of_every_scenario_are_allowed(name: str) -> None:
    result = check(
        lockfree_program(SCENARIO_SPECS[name], validate=True),
        Options(strategy="pct", seed=3, max_executions=40),
    )
    assert result.failure is None, result.report()


@pytest.mark.timeout(240)
def test_a_worker_gives_its_work_item_up_only_after_stop_begin() -> None:
    """Stop(discard) takes effect at its stop_begin: one worker, two lanes, Stop racing the posts.
    Until session 41 the flag that makes a worker give its work item up was set when admission
    closed, so the worker could take the other lane before stop_begin (seq 8: w0 take of lane 1
    while it held lane 0's work item, found at execution 1,082 of this search)."""
    sc = LockFreeScenario(lanes=2, workers=1, stop=StopMode.DISCARD, stop_races_posts=True)
    result = check(lockfree_program(sc, validate=True), Options(strategy="pct", seed=3, max_executions=1_500))
    assert result.failure is None, result.report()
    assert result.executions == 1_500


def _run_real_threads(tracer: JsonlTracer) -> None:
    with tracer:
        sched: LockFreeScheduler[str] = LockFreeScheduler(
            [LaneSpec(lambda _c, _i: None) for _ in range(2)],
            workers=2,
            lane_capacity=4,
            max_per_drain=2,
            tracer=tracer,
        )
        handles = [sched.get_lane(i)[1] for i in range(2)]

        def post(p: int) -> None:
            for k in range(50):
                sched.try_post(handles[(p + k) % 2], f"p{p}.{k}")

        posters = [threading.Thread(target=post, args=(p,), name=f"p{p}") for p in range(2)]
        for t in posters:
            t.start()
        for t in posters:
            t.join()
        assert sched.stop(StopMode.DRAIN) is Result.SUCCESS


@pytest.mark.timeout(120)
def test_a_jsonl_trace_with_the_designs_header_validates(tmp_path: Path) -> None:
    """The tracer's header function gives the v2 header; without it the header is work-lane v1's,
    under which these per-step events are refused."""
    path = tmp_path / "run.jsonl"
    _run_real_threads(JsonlTracer(path, make_header=trace_header))
    verdict = validate_file(path, complete=True)
    assert verdict.allowed and not verdict.prefix and verdict.design == "work-lane-lockfree", verdict.message

    v1 = tmp_path / "v1.jsonl"
    _run_real_threads(JsonlTracer(v1))
    assert json.loads(v1.read_text().splitlines()[0])["version"] == 1
    assert not validate_file(v1).allowed
