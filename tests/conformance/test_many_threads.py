"""The fast engine's cost per event does not grow with the threads holding work items at once.

Session 37's review measured 32,000 concurrent takers at 16 s and 65,536 lanes x workers at 66 s
(1,000,000 ordinary events: 2.2 s): a post that needed a drainer's early pop, and the pending items
of a prefix, looked at every worker (for each lane). Here the looks at every worker are counted.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from model_checks.conformance import ENGINES, validate_lines
from model_checks.designs.work_lane.trace.fast import FastEngine
from model_checks.designs.work_lane.trace.parse import Config, Event
from tests.conformance.corpus_steps import begin, end, inv, lines_of, post, stopped, submitted

LANES = 50


class Scans(dict[str, list[Any]]):
    """The workers of a state, counting the looks at all of them."""

    scans = 0

    def values(self) -> Any:
        self.scans += 1
        return super().values()

    def items(self) -> Any:
        self.scans += 1
        return super().items()

    def __iter__(self) -> Iterator[str]:
        self.scans += 1
        return super().__iter__()


def _drainers() -> list[tuple[str, str, dict[str, Any]]]:
    """LANES lanes of capacity 1, each with its first item queued and a drainer begun."""
    steps = []
    for lane in range(LANES):
        steps += [*submitted(f"p{lane}", lane, f"a{lane}"), *begin(f"w{lane}", lane)]
    return steps


def _events(steps: list[tuple[str, str, dict[str, Any]]]) -> list[Event]:
    return [{"seq": n, "thread": t, "event": e, **f} for n, (t, e, f) in enumerate(steps, start=1)]


CONFIG = {"lanes": LANES, "workers": LANES, "lane_capacity": 1, "max_per_drain": 2, "ready_capacity": LANES}


def test_a_post_that_needs_the_drainers_pop_and_the_pending_items_look_at_one_worker() -> None:
    engine = FastEngine(Config(**CONFIG))
    setup = _drainers()
    for ev in _events(setup):
        engine.step(ev)
    (sim,) = engine.sims
    sim.workers = workers = Scans(sim.workers)
    # lane 0 is full: the post is ok only if its drainer popped "a0" first (the lazy Pop)
    engine.step({"seq": len(setup) + 1, "thread": "p0", "event": "post", "lane": 0, "item": "b0",
                 "result": "ok", "submit": False})  # fmt: skip
    assert workers.scans == 0
    pending = engine.pending()
    assert pending["items"]["0"] == ["a0", "b0"] and len(pending["items"]) == LANES
    assert workers.scans <= 1  # the owed submissions, once: not once per lane holding items


@pytest.mark.parametrize("engine", ENGINES)
def test_many_drainers_each_popping_early_for_a_post(engine: str) -> None:
    """The trace the fix is about, judged alike by both engines (small: the spec engine's search)."""
    lanes = 3
    steps = []
    for lane in range(lanes):
        steps += [*submitted(f"p{lane}", lane, f"a{lane}"), *begin(f"w{lane}", lane)]
    steps += [post(f"p{lane}", lane, f"b{lane}") for lane in range(lanes)]
    for lane in range(lanes):
        w = f"w{lane}"
        steps += [inv(w, lane, f"a{lane}"), inv(w, lane, f"b{lane}"), end(w, lane, "idle", 2)]
    config = dict(CONFIG, lanes=lanes, workers=lanes, ready_capacity=lanes)
    v = validate_lines(lines_of([*steps, *stopped("drain")], config), engine=engine)
    assert v.code == 0 and not v.prefix, v.message
    v = validate_lines(lines_of(steps[: 4 * lanes + lanes], config), engine=engine)
    assert v.prefix and v.pending["items"] == {str(lane): [f"a{lane}", f"b{lane}"] for lane in range(lanes)}
