"""`lanecheck verify` rows of the work-stealing traces (``model_checks/designs/work_stealing/rows.py``)."""

from __future__ import annotations

import json

import pytest

from model_checks.designs.work_stealing.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_stealing.rows import OBSERVED, deque_lines, mutant_rows, rows, traced_deque
from model_checks.designs.work_stealing.trace import judge
from model_checks.harness.api import check
from model_checks.harness.options import Options
from reference.work_stealing_deque import ChaseLevDeque

# Where each observable mutant's failing trace is rejected: (where, rule, words of the message).
LOCATED = {
    # The last-element races stay open when traced: the element's second ok is refused (rule 3).
    "take-without-cas": ("seq 3 of 4 events", 3, 'take by w0 returns "x0" from an empty deque'),
    "steal-without-cas": ("seq 3 of 4 events", 3, 'returns "x0" from w0\'s empty deque'),
    "steal-reads-after-cas": ("seq 3 of 6 events", 6, 'push of "x2" on w0 reports size 2'),
    "resize-drops-newest": ("line 8 of 8 lines", None, "task: null is not"),
    "resize-unpublished": ("seq 3 of 6 events", 6, "with no resize"),
    "stale-mask": ("seq 6 of 7 events", 3, 'the top (oldest) task of that deque ["x0", "x1"] is "x0"'),
    "park-without-recheck": ("line 5 of 5 lines", 7, "lost wakeup"),
    "steal-from-self": ("seq 8 of 8 events", 5, "steals from its own deque"),
    "join-never-helps": ("line 7 of 7 lines", 8, '"r0.c0" waits in w0\'s deque'),
}


@pytest.mark.timeout(240)
def test_each_reference_mutants_failing_trace_is_judged_as_documented() -> None:
    found = {row.subject.rsplit(" ", 1)[1]: row for row in mutant_rows()}
    assert set(found) == set(REFERENCE_MUTANTS) == set(OBSERVED)
    for name, row in found.items():
        assert row.ok and row.actual == OBSERVED[name], row
        if name in LOCATED:
            where, rule, words = LOCATED[name]
            assert row.figures.startswith(f"{where}, rule {rule}:"), row.figures
            assert words in row.figures, row.figures
    assert "not observable" not in OBSERVED.values()  # tracing hides no mutant


@pytest.mark.timeout(240)
def test_the_quick_rows_validate_every_trace_of_the_clean_scenarios_and_pass() -> None:
    got = list(rows(quick=True))
    clean = [r for r in got if "every trace validated" in r.subject]
    assert len(clean) >= 3 and all(r.area == "conformance" for r in got)
    assert any("deque/" in r.subject for r in clean) and any("pool/" in r.subject for r in clean)
    assert all(r.ok for r in got), [r for r in got if not r.ok]
    assert not any(r.expected == "included" for r in got)  # the link runs in the full rows (and test_link.py)


class DoubleTakeDeque(ChaseLevDeque[str]):
    """Behaves correctly but logs a successful take twice: only the trace is wrong."""

    def _trace_take(self, result: str, item: object) -> None:
        super()._trace_take(result, item)
        if result == "ok":
            super()._trace_take(result, item)


@pytest.mark.timeout(60)
def test_a_traced_deque_run_fails_when_its_trace_is_not_allowed() -> None:
    result = check(traced_deque("deque/one-element", DoubleTakeDeque), Options(strategy="dpor"))
    assert result.failure is not None and "trace not allowed" in result.failure.message


def test_deque_lines_name_the_threads_as_workers() -> None:
    events = [{"seq": 1, "thread": "owner", "event": "push", "worker": 0, "task": "x0", "size": 1}]
    lines = deque_lines(3, events)
    assert json.loads(lines[1])["thread"] == "w0"
    assert judge(json.loads(lines[0]), iter(lines[1:])).code == 0
