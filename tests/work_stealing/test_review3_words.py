"""Words of the work-stealing refusals the third outside review of the validators found wrong
(session 47): T6, a ``done`` of a task that runs on another worker is not "already ran"; T10, the
spec engine suggests fields as the trace format writes them (``result = 'ok'`` with its task, an
empty take "lost no race"), never the spec's (``success``, ``lost_race``). The traces are the
corpus's (tests/work_stealing/corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.conformance import validate_file

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
