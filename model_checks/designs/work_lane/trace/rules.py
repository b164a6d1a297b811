"""The rules of the work-lane trace format (docs/trace-format.md), by number."""

from __future__ import annotations

RULES: dict[int, str] = {
    1: "the ready queue is FIFO and bounded; a submit never fails",
    2: "a lane has at most one reservation; a thread that owes a submission submits it first",
    3: "one drainer per lane, at most max_per_drain invokes per drain, `invoked` is that count",
    4: "FIFO per lane, nothing duplicated, nothing invoked that was not accepted",
    5: "no lost wakeup: drain_end idle only on an empty lane, resubmit only on a non-empty one",
    6: "capacity: ok only below lane_capacity, capacity_exceeded only when full",
    7: "stop: no post accepted after stop_begin; drain waits for every item; discard drops the rest",
    8: "a trace is judged as a prefix of some behaviour of the spec",
}
