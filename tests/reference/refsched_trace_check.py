"""A small checker of the trace-format rules, for the reference's own tests.

Not the project's validator (that one replays the spec); it checks the rules
that can be read straight off a complete trace of the reference.
"""

from __future__ import annotations

from collections import defaultdict, deque
from typing import Any

Event = dict[str, Any]


def check_trace(header: Event, events: list[Event]) -> list[str]:
    """Every rule broken by ``events``, as messages naming the ``seq``; [] if none."""
    problems: list[str] = []
    config = header["config"]
    assert header["trace"] == "lanecheck" and header["version"] == 1 and header["design"] == "work-lane"
    capacity, budget, ready_cap = config["lane_capacity"], config["max_per_drain"], config["ready_capacity"]

    ready: deque[int] = deque()
    held: dict[int, deque[object]] = defaultdict(deque)  # accepted, not yet invoked or discarded
    state: dict[int, str] = defaultdict(lambda: "idle")
    drainer: dict[int, tuple[str, int]] = {}  # lane -> (thread, invokes so far)
    owes: dict[str, int] = {}  # thread -> lane it must submit next
    accepted: set[object] = set()
    gone: set[object] = set()
    stop_begun = stop_ended = False
    mode = None

    def bad(e: Event, why: str) -> None:
        problems.append(f"seq {e['seq']}: {e['event']} {why}")

    for n, e in enumerate(events, start=1):
        if e["seq"] != n:
            bad(e, f"seq gap: expected {n}")
        kind, thread = e["event"], e["thread"]
        lane: Any = e.get("lane")
        if thread in owes and not (kind == "submit" and lane == owes[thread]):
            bad(e, f"thread {thread} owed a submit of lane {owes[thread]} first")
        if kind == "post":
            result = e["result"]
            if stop_begun and result != "invalid_state":
                bad(e, "after stop_begin must be invalid_state")
            if result == "ok":
                # The drainer may have popped one item whose invoke is not logged
                # yet; it no longer counts against the capacity.
                in_hand = 1 if state[lane] == "draining" else 0
                if len(held[lane]) - in_hand >= capacity:
                    bad(e, "ok on a full lane")
                if e["item"] in accepted:
                    bad(e, "item accepted twice")
                accepted.add(e["item"])
                held[lane].append(e["item"])
                if e["submit"] != (state[lane] == "idle"):
                    bad(e, f"submit={e['submit']} with lane {state[lane]}")
                if e["submit"]:
                    state[lane] = "scheduled"
                    owes[thread] = lane
            else:
                if e["submit"]:
                    bad(e, "submit on a refused post")
                if result == "capacity_exceeded" and len(held[lane]) < capacity:
                    bad(e, "capacity_exceeded on a lane with room")
        elif kind == "submit":
            owes.pop(thread, None)
            ready.append(lane)
            if len(ready) > ready_cap:
                bad(e, "ready queue over capacity")
        elif kind == "take":
            if not ready or ready[0] != lane:
                bad(e, f"not FIFO: head is {ready[0] if ready else None}")
            else:
                ready.popleft()
        elif kind == "drain_begin":
            if stop_begun and mode == "discard":
                bad(e, "drain_begin after stop_begin(discard)")
            if state[lane] != "scheduled":
                bad(e, f"lane was {state[lane]}")
            state[lane] = "draining"
            drainer[lane] = (thread, 0)
        elif kind == "invoke":
            who = drainer.get(lane)
            if who is None or who[0] != thread:
                bad(e, "outside a drain of this thread")
                continue
            drainer[lane] = (thread, who[1] + 1)
            if who[1] + 1 > budget:
                bad(e, "over the drain budget")
            if not held[lane] or held[lane][0] != e["item"]:
                bad(e, f"not FIFO: expected {held[lane][0] if held[lane] else None}")
                if e["item"] in held[lane]:
                    held[lane].remove(e["item"])
            else:
                held[lane].popleft()
            if e["item"] in gone:
                bad(e, "item invoked twice")
            gone.add(e["item"])
        elif kind == "drain_end":
            who = drainer.pop(lane, None)
            if who is None or who[0] != thread:
                bad(e, "without a drain_begin on this thread")
            elif who[1] != e["invoked"]:
                bad(e, f"invoked={e['invoked']} but {who[1]} invokes")
            if e["outcome"] == "idle":
                if held[lane]:
                    bad(e, f"idle while lane holds {list(held[lane])} (lost wakeup)")
                state[lane] = "idle"
            else:
                if not held[lane]:
                    bad(e, "resubmit of an empty lane")
                state[lane] = "scheduled"
                owes[thread] = lane
        elif kind == "stop_begin":
            stop_begun, mode = True, e["mode"]
        elif kind == "discard":
            items = list(e["items"])
            if items != list(held[lane]):
                bad(e, f"items {items} but lane holds {list(held[lane])}")
            held[lane].clear()
            gone.update(items)
            state[lane] = "idle"
        elif kind == "stop_end":
            stop_ended = True
            if any(held.values()):
                bad(e, f"items never run: { {k: list(v) for k, v in held.items() if v} }")
            if mode == "drain" and any(s != "idle" for s in state.values()):
                bad(e, "a lane is not idle")
            if drainer:
                bad(e, "a drain is still running")
        elif kind != "stop_rejected":
            bad(e, "unknown event")
    if stop_ended and accepted != gone:
        problems.append(
            f"accepted but neither invoked nor discarded: {sorted(map(str, accepted - gone))[:10]}"
        )
    return problems
