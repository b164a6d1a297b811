"""A trace of a scheduler that failed (its own code raised) is allowed by no behaviour of the spec:
`stop_end` with `"result": "failed"` is well formed, and rejected under rule 7, by both engines."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from model_checks.conformance import ENGINES, validate_lines
from reference.results import Result
from reference.scheduler import LaneSpec, StopMode, WorkerScheduler
from reference.tracing import RecordingTracer
from reference.work_lane import WorkLane


class _EndDrainRaisesLane(WorkLane[Any]):
    def _end_drain(self, invoked: int) -> bool:
        raise RuntimeError("end of drain broke")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_failed_stop_is_well_formed_and_not_allowed(engine: str) -> None:
    tracer = RecordingTracer()
    invoked = threading.Event()
    scheduler: WorkerScheduler[int] = WorkerScheduler(
        [LaneSpec(lambda _ctx, _item: invoked.set())],
        workers=1,
        lane_capacity=4,
        max_per_drain=2,
        tracer=tracer,
        lane_factory=_EndDrainRaisesLane,
    )
    handle = scheduler.get_lane(0)[1]
    assert scheduler.try_post(handle, 1) is Result.SUCCESS
    assert invoked.wait(10)
    assert scheduler.stop(StopMode.DRAIN) is Result.UNKNOWN
    lines = list(tracer.lines())
    assert json.loads(lines[-1])["result"] == "failed"
    verdict = validate_lines(lines, engine=engine)
    assert verdict.code == 1, verdict.message
    assert verdict.rule == 7 and verdict.seq == len(lines) - 1
    if engine == "fast":
        assert "the scheduler failed" in verdict.message
