"""The hand-made event-pool traces: event builders, the good traces, and one minimal bad trace per
rule with the seq, rule and words it must be rejected with (``CASES``). Used by the trace tests and
by the spec search's agreement tests (through ``test_trace``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from model_checks.conformance.verdict import NOT_ALLOWED, Verdict
from model_checks.designs.event_pool.trace import validate_lines

Ev = tuple[str, str, dict[str, Any]]


def trace(*events: Ev, threads: int = 2) -> list[str]:
    head = {"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": threads}}
    return [json.dumps(head)] + [
        json.dumps({"seq": n, "thread": th, "event": kind, **fields})
        for n, (th, kind, fields) in enumerate(events, start=1)
    ]


def post(item: int | None, to: str | None, thread: str = "main", result: str = "ok") -> Ev:
    return (thread, "post", {"item": item, "to": to, "result": result})


def signal(to: str, thread: str = "main") -> Ev:
    return (thread, "signal", {"to": to})


def wait(t: str) -> Ev:
    return (t, "wait", {})


def wake(t: str, result: str = "event") -> Ev:
    return (t, "wake", {"result": result})


def take(t: str, item: int | None) -> Ev:
    return (t, "take", {"item": item})


def run(t: str, item: int) -> Ev:
    return (t, "run", {"item": item})


def done(t: str, item: int, raised: bool = False) -> Ev:
    return (t, "done", {"item": item, "raised": raised})


def cancel(*items: int) -> Ev:
    return ("main", "cancel", {"items": list(items), "work": "w"})


def stop_begin(mode: str = "drain") -> Ev:
    return ("main", "stop_begin", {"mode": mode})


def discard(*items: int) -> Ev:
    return ("main", "discard", {"items": list(items)})


def stop_end(mode: str = "drain", result: str = "ok") -> Ev:
    return ("main", "stop_end", {"mode": mode, "result": result})


def cycle(t: str, item: int) -> list[Ev]:
    return [take(t, item), run(t, item), done(t, item)]


def shutdown(*threads: str, mode: str = "drain") -> list[Ev]:
    out: list[Ev] = [stop_begin(mode)]
    for t in threads:
        out += [wait(t), wake(t, "stop")]
    return [*out, stop_end(mode)]


# One thread takes both works; the second post finds it busy and picks nobody (the all-busy rule).
GOOD_ONE: list[Ev] = [
    wait("t0"),
    post(0, "t0"),
    signal("t0"),
    wake("t0"),
    take("t0", 0),
    post(1, None),
    run("t0", 0),
    done("t0", 0),
    *cycle("t0", 1),
    take("t0", None),
    *shutdown("t0"),
]


# Both threads wait; work 0 is posted to t0, which is signalled.
T0_PICKED: list[Ev] = [wait("t0"), wait("t1"), post(0, "t0"), signal("t0")]


def rejected(
    events: list[Ev],
    seq: int | None,
    rule: int,
    *words: str,
    threads: int = 2,
    complete: bool = False,
    validate: Callable[..., Verdict] = validate_lines,
) -> None:
    verdict = validate(trace(*events, threads=threads), complete=complete)
    assert verdict.code == NOT_ALLOWED, verdict.message
    assert (verdict.seq, verdict.rule) == (seq, rule), verdict.message
    for w in words:
        assert w in verdict.message, verdict.message
    assert verdict.last_states and verdict.design == "event-pool"


W0: list[Ev] = [wait("t0"), post(0, "t0"), signal("t0"), wake("t0")]  # t0 woken for work 0

# name -> (events, threads, complete, seq, rule, words in the message)
CASES: dict[str, tuple[list[Ev], int, bool, int | None, int, tuple[str, ...]]] = {
    "a client logs wait": ([("main", "wait", {})], 2, False, 1, 1, ("not a pool thread",)),
    "a thread beyond config": ([wait("t2")], 2, False, 1, 1, ("t0 .. t1",)),
    "post picks no pool thread": ([post(0, "t7")], 2, False, 1, 1, ("'t7'",)),
    "a pool thread posts outside a callback": ([post(0, "t1", thread="t0")], 2, False, 1, 1, ("outside",)),
    "a callback cancels": (
        [*W0, take("t0", 0), run("t0", 0), ("t0", "cancel", {"items": [], "work": "w"})],
        1,
        False,
        7,
        1,
        ("cancel inside a callback",),
    ),
    "wake before wait": ([wake("t0")], 1, False, 1, 2, ("wait (its first event)",)),
    "if instead of while": ([*W0, wait("t0")], 1, False, 5, 2, ("must look at the list",)),
    "wait after done": ([*W0, *cycle("t0", 0), wait("t0")], 1, False, 8, 2, ("after a wake or a done",)),
    "run of another work": ([*W0, take("t0", 0), run("t0", 1)], 1, False, 6, 2, ("it took work 0",)),
    "done without run": ([*W0, take("t0", 0), done("t0", 0)], 1, False, 6, 2, ("run of the work",)),
    "post numbered out of order": ([post(1, "t0")], 1, False, 1, 3, ("this one is work 0",)),
    "post ok after stop_begin": ([stop_begin(), post(0, "t0")], 1, False, 2, 3, ("after stop_begin",)),
    "signal busy thread": ([post(0, "t0"), signal("t0"), post(1, "t0")], 2, False, 3, 4, ("t1 sleeps idle",)),
    "busy thread picked when none is idle": (
        [post(0, "t0"), signal("t0"), post(1, "t0")],
        1,
        False,
        3,
        4,
        ("busy",),
    ),
    "no thread picked while one is idle": ([post(0, None)], 2, False, 1, 4, ("t0, t1 are idle",)),
    "no thread picked while many are idle": (  # the words count the threads they do not name
        [post(0, None)],
        12,
        False,
        1,
        4,
        ("t0, t1, t2, t3, t4, t5, t6, t7 and 4 more are idle",),
    ),
    "unlocked check then wait": (
        [*W0, *cycle("t0", 0), take("t0", None), post(1, None)],
        1,
        False,
        9,
        4,
        ("t0 is idle",),
    ),
    "signal nobody picked": ([signal("t0")], 1, False, 1, 5, ("no post of it picked",)),
    "signal the wrong thread": ([post(0, "t0"), signal("t1")], 2, False, 2, 5, ("picked t0",)),
    "another event before the signal": (
        [post(0, "t0"), post(1, "t1")],
        2,
        False,
        2,
        5,
        ("signals t0 before",),
    ),
    "a callback owes its signal": (
        [*W0, take("t0", 0), run("t0", 0), post(1, "t1", thread="t0"), done("t0", 0)],
        2,
        False,
        8,
        5,
        ("picked t1",),
    ),
    "wake nobody caused": ([wait("t0"), wake("t0")], 1, False, 2, 6, ("signalled never",)),
    "manual reset never reset": (
        [*W0, *cycle("t0", 0), take("t0", None), wait("t0"), wake("t0")],
        1,
        False,
        10,
        6,
        ("2nd time", "signalled once"),
    ),
    "take of a work never posted": (
        [post(0, "t0"), signal("t0"), cancel(0), wait("t0"), wake("t0"), take("t0", 1)],
        1,
        False,
        6,
        7,
        ("never posted",),
    ),
    "take of a cancelled work": ([*W0, cancel(0), take("t0", 0)], 1, False, 6, 7, ("repeats", "cancelled")),
    "take skips a work": (
        [post(0, "t0"), signal("t0"), post(1, None), wait("t0"), wake("t0"), take("t0", 1)],
        1,
        False,
        6,
        7,
        ("skips", "oldest listed work is 0"),
    ),
    "empty while work is listed": ([*W0, take("t0", None)], 1, False, 5, 7, ("works [0]",)),
    "cancel of a work not posted": ([cancel(0)], 1, False, 1, 7, ("never posted",)),
    "cancel twice": (
        [post(0, "t0"), signal("t0"), cancel(0), cancel(0)],
        1,
        False,
        4,
        7,
        ("cancelled at seq 3",),
    ),
    "discard of a taken work": (
        [*W0, take("t0", 0), ("main", "stop_begin", {"mode": "discard"}), discard(0)],
        1,
        False,
        7,
        7,
        ("taken at seq 5",),
    ),
    "second stop_begin": ([stop_begin(), stop_begin()], 1, False, 2, 8, ("stop began at seq 1",)),
    "wake stop before stop": ([wait("t0"), wake("t0", "stop")], 1, False, 2, 8, ("no stop began",)),
    "an exited thread logs": (
        [stop_begin(), wait("t0"), wake("t0", "stop"), wait("t0")],
        1,
        False,
        4,
        8,
        ("exited",),
    ),
    "discard in drain mode": (
        [post(0, "t0"), signal("t0"), stop_begin(), discard(0)],
        1,
        False,
        4,
        8,
        ("only stop(discard)",),
    ),
    "take between stop_begin(discard) and its discard": (
        [*W0, stop_begin("discard"), take("t0", 0)],
        1,
        False,
        6,
        8,
        ("t0 logs take after stop_begin(discard)", "whole list [0]"),
    ),
    "a refused post between stop_begin(discard) and its discard": (
        [post(0, "t0"), signal("t0"), stop_begin("discard"), post(None, None, "other", "invalid_state")],
        1,
        False,
        4,
        8,
        ("other logs post after stop_begin(discard)",),
    ),
    "a cancel between stop_begin(discard) and its discard": (
        [post(0, "t0"), signal("t0"), stop_begin("discard"), ("other", "cancel", {"items": [], "work": "w"})],
        1,
        False,
        4,
        8,
        ("other logs cancel",),
    ),
    "the stopper logs another event before its discard": (
        [post(0, "t0"), signal("t0"), stop_begin("discard"), stop_end("discard")],
        1,
        False,
        4,
        8,
        ("main logs stop_end",),
    ),
    "discard of part of the list": (
        [post(0, "t0"), signal("t0"), post(1, None), stop_begin("discard"), discard(1)],
        1,
        False,
        5,
        8,
        ("whole list", "works [0, 1]"),
    ),
    "discard of the list out of order": (
        [post(0, "t0"), signal("t0"), post(1, None), stop_begin("discard"), discard(1, 0)],
        1,
        False,
        5,
        8,
        ("in list order",),
    ),
    "discard by another thread": (
        [post(0, "t0"), signal("t0"), stop_begin("discard"), ("other", "discard", {"items": [0]})],
        1,
        False,
        4,
        8,
        ("by 'other'", "by 'main'"),
    ),
    "discard of an empty list": (
        [stop_begin("discard"), discard()],
        1,
        False,
        2,
        8,
        ("found the list empty",),
    ),
    "a second discard": (
        [post(0, "t0"), signal("t0"), stop_begin("discard"), discard(0), discard()],
        1,
        False,
        5,
        8,
        ("logged its discard already",),
    ),
    "wake stop while a work runs": (
        [*W0, take("t0", 0), run("t0", 0), stop_begin(), wait("t1"), wake("t1", "stop")],
        2,
        False,
        9,
        8,
        ("1 accepted works", "t0 runs 0", "after the last of them settled"),
    ),
    "stop_end without stop_begin": ([stop_end()], 1, False, 1, 8, ("no stop_begin",)),
    "stop_end of another mode": (
        [stop_begin(), wait("t0"), wake("t0", "stop"), stop_end("discard")],
        1,
        False,
        4,
        8,
        ("was drain",),
    ),
    "stop_end before the threads exited": (
        [stop_begin(), stop_end()],
        1,
        False,
        2,
        8,
        ("t0 has not exited",),
    ),
    "stop_end before many threads exited": (  # the words count the threads they do not name
        [stop_begin(), wait("t0"), wake("t0", "stop"), stop_end()],
        20,
        False,
        4,
        8,
        ("t1, t2, t3, t4, t5, t6, t7, t8 and 11 more have not exited",),
    ),
    "stop_end failed": (
        [stop_begin(), wait("t0"), wake("t0", "stop"), stop_end(result="failed")],
        1,
        False,
        4,
        8,
        ("failed",),
    ),
    "wake stop with work never run": (
        [post(0, "t0"), signal("t0"), *shutdown("t0")],
        1,
        False,
        5,
        8,
        ("neither ran", "listed [0]"),
    ),
    "lost wakeup (pulse)": (
        [post(0, "t0"), signal("t0"), stop_begin(), wait("t0")],
        1,
        True,
        4,
        9,
        ("waits since seq 4", "lost wakeup"),
    ),
    "the run ends with a work taken": ([*W0, take("t0", 0)], 1, True, None, 9, ("t0 took 0",)),
}
