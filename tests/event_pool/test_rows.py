"""`lanecheck verify` rows of the event pool's traces (``model_checks/designs/event_pool/rows.py``)."""

from __future__ import annotations

import pytest

from model_checks.designs.event_pool.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.event_pool.rows import mutant_rows, rows

# Where each reference mutant's failing trace is rejected: (seq, rule, words of the message).
LOCATED = {
    "pulse-instead-of-set": (4, 9, "lost wakeup"),  # judged complete: the run deadlocked
    "unlocked-check-then-wait": (9, 4, "picks no thread while t0 is idle"),
    "unlocked-next-index": (7, 7, "repeats work 0, which was cancelled"),
    "manual-reset-never-reset": (11, 6, "2nd time"),
    "if-instead-of-while": (7, 7, "takes work 1, which was never posted"),
    "signal-busy-thread": (3, 4, "picks t0, which is busy"),
}


@pytest.mark.timeout(240)
def test_each_reference_mutants_failing_trace_is_rejected_at_a_located_seq() -> None:
    found = {row.subject.rsplit(" ", 1)[1]: row for row in mutant_rows()}
    assert set(found) == set(REFERENCE_MUTANTS) == set(LOCATED)
    for name, row in found.items():
        seq, rule, words = LOCATED[name]
        assert row.ok and row.actual == "rejected", row
        assert row.figures.startswith(f"seq {seq} of ") and f"rule {rule}:" in row.figures, row.figures
        assert words in row.figures, row.figures


@pytest.mark.timeout(240)
def test_the_quick_rows_validate_every_trace_of_the_clean_scenarios_and_pass() -> None:
    got = list(rows(quick=True))
    clean = [r for r in got if "every trace validated" in r.subject]
    assert len(clean) >= 4 and all(r.area == "conformance" for r in got)
    assert all(r.ok for r in got), [r for r in got if not r.ok]
    assert {r.expected for r in clean} == {"exhaustive (synchronisation points only)", "bounded"}
