"""The Work Lane's spec engine judges a prefix by the states it holds, not by their closure under
the deferred steps: that closure doubles with each producer (any idle one may have been admitted for
a next post it has not logged), so 16 producers posting one after another took over a minute, 12
ten seconds, where the fast engine took 0.4 s (the second outside review of the validators, session
44, F3; also its "owed at once" traces, docs/conformance.md). Counted here: the states put in the
trace's words for the verdict."""

from __future__ import annotations

from typing import Any

import pytest

from model_checks.conformance import validate_lines
from model_checks.designs.work_lane.trace.spec_engine import SpecEngine
from tests.conformance.corpus_steps import CONFIG, lines_of, submitted

PRODUCERS = 14
MANY_LANES = {**CONFIG, "lanes": PRODUCERS, "ready_capacity": PRODUCERS}


@pytest.mark.timeout(60)
def test_a_prefix_of_sequential_producers_is_judged_without_the_closure(monkeypatch: Any) -> None:
    shown = 0
    plain = SpecEngine._shown

    def counted(self: SpecEngine, s: Any) -> Any:
        nonlocal shown
        shown += 1
        return plain(self, s)

    monkeypatch.setattr(SpecEngine, "_shown", counted)
    steps = [step for p in range(PRODUCERS) for step in submitted(f"p{p}", p, f"i{p}")]
    verdict = validate_lines(lines_of(steps, MANY_LANES), engine="spec")
    assert verdict.code == 0 and verdict.prefix, verdict.message
    assert verdict.pending["items"] == {str(p): [f"i{p}"] for p in range(PRODUCERS)}
    assert shown < 100  # the closure: 6 x 2^14 states, each shown several times
