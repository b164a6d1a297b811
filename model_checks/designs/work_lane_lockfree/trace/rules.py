"""The rules of the work-lane-lockfree trace format (docs/trace-format.md, "Trace format v2"), by number,
and which rule an event breaks when no behaviour takes it."""

from __future__ import annotations

RULES: dict[int, str] = {
    1: "the ready queue is FIFO and bounded: take in submit order; a submit never fails before Stop(discard)",
    2: "one reservation per lane: a CAS Idle -> Scheduled wins only on an Idle lane and loses only on a "
    "busy one; the thread that won submits (or has it refused) before any other event of its own",
    3: "one drainer per lane: drain_begin by the take's thread on a Scheduled lane; pops and invokes only "
    "inside it, within max_per_drain; the release (CAS Draining -> Idle) only when the budget is spent or "
    "a pop found the queue empty, `invoked` its count",
    4: "FIFO per lane and nothing duplicated: a pop takes the lane's oldest item; a worker invokes the item "
    "it popped, once; nothing is invoked that was not pushed",
    5: "no lost wakeup: the re-check follows the release and says `empty` only on an empty queue; "
    "a re-check that saw items is followed by the CAS Idle -> Scheduled",
    6: "capacity: a push is ok only below lane_capacity and capacity_exceeded only when the queue is full",
    7: "stop: no push after Stop took effect; stop_begin only once no post is in flight; a drain's "
    "stop_end owes every accepted item an invoke, a discard's an invoke or a reset; submit_refused only "
    "after stop_begin discard",
    8: "a trace is judged as a prefix of some behaviour of the spec",
}

RULE_OF_EVENT: dict[str, int] = {
    "post": 7,
    "push": 6,
    "cas": 2,
    "submit": 1,
    "take": 1,
    "drain_begin": 3,
    "pop": 4,
    "invoke": 4,
    "recheck": 5,
    "submit_refused": 7,
    "stop_begin": 7,
    "stop_rejected": 7,
    "reset": 7,
    "discard": 7,
    "stop_end": 7,
}

HINT: dict[str, str] = {
    "post": "a post is refused invalid_state only once Stop took effect (before it, it pushes), "
    "invalid_argument only for a bad handle",
    "push": "a push is ok only below lane_capacity, capacity_exceeded only on a full queue, and only "
    "while the scheduler is running (the thread's admission came before Stop)",
    "cas": "a CAS Idle -> Scheduled follows the thread's own push or re-check that saw items and wins "
    "exactly when the lane is Idle; a CAS Draining -> Idle ends the thread's own drain once its budget "
    "is spent "
    "or a pop found the queue empty",
    "submit": "a submit comes from the thread whose CAS Idle -> Scheduled won, into a ready queue with room",
    "take": "a worker takes the oldest work item of the ready queue, when it is idle (it gives a work "
    "item it took up undrained only after stop_begin discard)",
    "drain_begin": "drain_begin follows the same thread's take, on a Scheduled lane, and not after "
    "stop_begin discard",
    "pop": "a pop comes inside the thread's drain, within the budget, after the previous pop's invoke, and "
    "returns the lane's oldest item (null only on an empty queue)",
    "invoke": "a worker invokes the item its last pop returned",
    "recheck": "the re-check follows the thread's CAS Draining -> Idle and says empty exactly when the "
    "queue is",
    "submit_refused": "a resubmission is refused only after stop_begin discard, by the thread whose CAS won",
    "stop_begin": "Stop begins once every post in flight has finished (pushed, CASed, submitted if it won)",
    "stop_rejected": "stop_in_progress only while another Stop is in progress; in_callback only from an "
    "invoke callback",
    "reset": "the reset runs in Stop(discard) once the workers are idle and lists exactly the lane's queue",
    "discard": "the reset runs in Stop(discard) once the workers are idle and lists exactly the lane's queue",
    "stop_end": "stop_end comes once every worker is idle and every accepted item was invoked (drain) or "
    "invoked or reset (discard)",
}
