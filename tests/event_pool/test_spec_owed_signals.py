"""The event pool's spec engine judges a prefix with 7 and 8 SetEvents owed at once (its limit is 8)
in well under a second: its pending words and states read the states the search holds, not their
closure under the deferred steps, which grows with each owed signal (6 owed took 10 s, 7 over a
minute, 8 over two; the second outside review of the validators, session 44, F4)."""

from __future__ import annotations

import json
import time

import pytest

from model_checks.conformance.validator import validate_lines


def owed_signals(n: int) -> list[str]:
    """``n`` pool threads wait; ``n`` clients each post a work to one of them and log its signal."""
    events: list[dict[str, object]] = [{"thread": f"t{i}", "event": "wait"} for i in range(n)]
    events += [
        {"thread": f"c{i}", "event": "post", "item": i, "to": f"t{i}", "result": "ok"} for i in range(n)
    ]
    events += [{"thread": f"c{i}", "event": "signal", "to": f"t{i}"} for i in range(n)]
    header = {"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": n}}
    return [json.dumps(header)] + [json.dumps({"seq": k, **e}) for k, e in enumerate(events, start=1)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [7, 8])
def test_a_prefix_with_signals_owed_up_to_the_limit_is_judged_at_once(n: int) -> None:
    start = time.perf_counter()
    verdict = validate_lines(owed_signals(n), engine="spec")
    took = time.perf_counter() - start
    assert verdict.code == 0 and verdict.prefix, verdict.message
    assert verdict.pending == {"listed": list(range(n))}
    assert took < 15, f"{took:.1f} s"  # 0.3 s here; over 60 s before
