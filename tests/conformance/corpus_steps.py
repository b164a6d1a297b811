"""The steps of a Work Lane trace, as the golden corpus and the conformance tests write them: one
builder per event kind, a few runs of them that many cases share, and a trace's lines from its steps.

A step is (thread, event, fields); ``lines_of`` numbers the steps and puts the header first."""

from __future__ import annotations

import json
from typing import Any

from model_checks.designs.work_lane.trace.schema import SCHEMA

CONFIG = {"lanes": 2, "workers": 2, "lane_capacity": 2, "max_per_drain": 2, "ready_capacity": 2}
Step = tuple[str, str, dict[str, Any]]
# Every event kind of the Work Lane trace format, as its written contract (the JSON schema) lists
# them: not from the reader's code (``fast.STEPS``, ``parse``), which the corpus is there to check.
EVENTS: tuple[str, ...] = tuple(SCHEMA.document()["$defs"]["event"]["properties"]["event"]["enum"])


def header(config: dict[str, int] | None = None) -> str:
    """A trace's first line: the format, its version, the design and ``config`` (``CONFIG`` if none)."""
    return json.dumps({"trace": "lanecheck", "version": 1, "design": "work-lane", "config": config or CONFIG})


def lines_of(steps: list[Step], config: dict[str, int] | None = None) -> list[str]:
    out = [header(config)]
    for seq, (thread, event, fields) in enumerate(steps, start=1):
        out.append(json.dumps({"seq": seq, "thread": thread, "event": event, **fields}))
    return out


def post(t: str, lane: int | None, item: Any, result: str = "ok", submit: bool = False) -> Step:
    return (t, "post", {"lane": lane, "item": item, "result": result, "submit": submit})


def ln(t: str, event: str, lane: int) -> Step:
    return (t, event, {"lane": lane})


def inv(t: str, lane: int, item: Any) -> Step:
    return (t, "invoke", {"lane": lane, "item": item})


def end(t: str, lane: int, outcome: str, n: int) -> Step:
    return (t, "drain_end", {"lane": lane, "outcome": outcome, "invoked": n})


def sb(t: str, mode: str) -> Step:
    return (t, "stop_begin", {"mode": mode})


def se(t: str, mode: str) -> Step:
    return (t, "stop_end", {"mode": mode, "result": "ok"})


def rej(t: str, mode: str, reason: str) -> Step:
    return (t, "stop_rejected", {"mode": mode, "reason": reason})


def disc(t: str, lane: int, items: list[Any]) -> Step:
    return (t, "discard", {"lane": lane, "items": items})


def submitted(p: str, lane: int, item: Any) -> list[Step]:
    """A post that reserves the lane's submission, then the submission it owes."""
    return [post(p, lane, item, submit=True), ln(p, "submit", lane)]


def begin(w: str, lane: int) -> list[Step]:
    """A worker takes the lane from the ready queue and starts draining it."""
    return [ln(w, "take", lane), ln(w, "drain_begin", lane)]


def stopped(mode: str) -> list[Step]:
    """Main stops the scheduler and the stop completes."""
    return [sb("main", mode), se("main", mode)]


def handed_over(invoked: int, item: Any) -> list[Step]:
    """w0 ends its drain of lane 0 by resubmitting it; w1 takes it and runs its one remaining item."""
    return [
        end("w0", 0, "resubmit", invoked),
        ln("w0", "submit", 0),
        *begin("w1", 0),
        inv("w1", 0, item),
        end("w1", 0, "idle", 1),
    ]


def one_item(lane: int = 0, item: str = "a", p: str = "p0", w: str = "w0") -> list[Step]:
    """Post one item and run it to the end of its drain."""
    return [*submitted(p, lane, item), *begin(w, lane), inv(w, lane, item), end(w, lane, "idle", 1)]


def retried_and_resubmitted() -> list[Step]:
    """Three posts to a lane of capacity 2, the third refused and retried once the drainer popped
    one; the drain ends owing a resubmission."""
    return [
        *submitted("p0", 0, "a"),
        post("p0", 0, "b"),
        post("p0", 0, "c", "capacity_exceeded"),
        *begin("w0", 0),
        inv("w0", 0, "a"),
        post("p0", 0, "c"),
        inv("w0", 0, "b"),
        end("w0", 0, "resubmit", 2),
    ]
