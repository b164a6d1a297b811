"""A ``post`` refused ``invalid_state`` before any ``stop_begin`` is allowed by both engines: the
reference logs one when a closed work object is submitted (``ThreadpoolWork.close`` logs nothing, and
``SubmitThreadpoolWork`` on it is refused under the list lock), and admission stays open for every
other post. The second outside review of the validators (session 44, F15) took it for a false
acceptance (docs/event-pool.md's ``post``: "INVALID_STATE once stop began"); the corpus keeps its
trace (``valid_post_refused_by_a_closed_work_before_stop.jsonl``) and this test the run that makes it."""

from __future__ import annotations

import threading

import pytest

from model_checks.conformance import ENGINES
from model_checks.conformance.validator import validate_lines
from reference.event_pool import EventPool, header
from reference.event_pool_api import ThreadpoolWork
from reference.results import Result
from reference.tracing import RecordingTracer


@pytest.mark.timeout(30)
@pytest.mark.parametrize("engine", ENGINES)
def test_a_closed_work_objects_refused_submit_before_stop_is_allowed(engine: str) -> None:
    tracer = RecordingTracer(header)
    pool = EventPool(2, tracer=tracer)
    work = ThreadpoolWork(pool, lambda context, w: None, name="w")
    assert work.close() is Result.SUCCESS
    assert work.submit() is Result.INVALID_STATE
    ran = threading.Event()
    assert pool.post(ran.set) is Result.SUCCESS
    ran.wait(10)
    assert pool.stop() is Result.SUCCESS
    posts = [(e["result"], e["seq"]) for e in tracer.events() if e["event"] == "post"]
    begun = next(e["seq"] for e in tracer.events() if e["event"] == "stop_begin")
    assert [r for r, _ in posts] == ["invalid_state", "ok"] and posts[0][1] < begun
    verdict = validate_lines(tracer.lines(), engine=engine, complete=True)
    assert verdict.code == 0 and not verdict.prefix, verdict.message
