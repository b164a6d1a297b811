"""The event-pool trace validator on bad traces: each rule rejects its minimal bad trace (``CASES``)
at its seq, naming what broke it; every rule has one."""

from __future__ import annotations

import pytest

from model_checks.designs.event_pool.trace import RULES
from model_checks.designs.event_pool.trace.rules import PREFIX_RULE
from tests.event_pool.trace_cases import CASES, rejected


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_bad_trace_is_rejected_at_its_seq_with_its_rule(name: str) -> None:
    events, threads, complete, seq, rule, words = CASES[name]
    rejected(events, seq, rule, *words, threads=threads, complete=complete)


def test_every_rule_has_a_bad_trace() -> None:
    assert {case[4] for case in CASES.values()} == set(RULES) - {PREFIX_RULE}
