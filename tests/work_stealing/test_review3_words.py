"""Words of the work-stealing refusals the third outside review of the validators found wrong
(session 47): T6, a ``done`` of a task that runs on another worker is not "already ran"; T10, the
spec engine suggests fields as the trace format writes them (``result = 'ok'`` with its task, an
empty take "lost no race"), never the spec's (``success``, ``lost_race``). The traces are the
corpus's (tests/work_stealing/corpus)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_checks.conformance import validate_file
from reference.results import Result
from reference.runtime import ThreadingRuntime
from reference.tracing import RecordingTracer
from reference.work_stealing import WorkStealingPool
from reference.work_stealing import header as pool_header
from tests.work_stealing.both_engines import assert_allowed

pytestmark = pytest.mark.timeout(60)

CORPUS = Path(__file__).parent / "corpus"


def test_done_of_a_task_running_elsewhere_names_where_it_runs() -> None:
    v = validate_file(CORPUS / "invalid_r4_done_of_a_task_running_on_another_worker.jsonl")
    assert (v.code, v.seq, v.rule) == (1, 4, 4), v.message
    assert '"a" runs on w0 (its done is not logged yet)' in v.message, v.message
    assert "already ran" not in v.message


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("invalid_r3_take_empty_two_tasks.jsonl", "logs result = 'ok' with task = 'c'"),
        ("invalid_r3_steal_empty_nonempty_injector.jsonl", "logs result = 'ok' with task = 'a'"),
        ("invalid_r3_take_lost_on_empty_deque_no_thief_complete.jsonl", "logs result = 'empty'"),
    ],
)
def test_the_spec_engine_suggests_the_formats_fields(name: str, words: str) -> None:
    v = validate_file(CORPUS / name, engine="spec")
    assert v.code == 1 and words in v.message, v.message
    assert "success" not in v.message and "lost_race" not in v.message, v.message


def test_the_references_refused_submit_with_a_bad_name_is_well_formed() -> None:
    """The reference logs ``task: null`` for a submit refused for its arguments (a name that is not a
    str/int has no id to log); both engines called that line malformed until session 47 (the third
    outside review, T8). A submit ok or invalid_state with a null task is still malformed."""
    tracer = RecordingTracer(make_header=pool_header)
    pool = WorkStealingPool(workers=1, capacity=2, runtime=ThreadingRuntime(), tracer=tracer)
    assert pool.submit(lambda: None, name=2.5)[0] is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
    _, handle = pool.submit(lambda: None, name="a")
    assert handle is not None
    pool.join(handle)
    assert pool.stop().name == "SUCCESS"
    lines = list(tracer.lines())
    refused = [json.loads(x) for x in lines[1:] if '"invalid_argument"' in x]
    assert [(e["event"], e["task"]) for e in refused] == [("submit", None)]
    assert_allowed(lines)
