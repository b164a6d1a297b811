"""A sender's last append, in a trace without ``append`` events: its message may sit anywhere
behind what was appended before its ``send`` was logged, and the validator holds every such place
until the message is processed (docs/conformance.md §6: the cost of the slow real-thread
interleavings). With ``append`` logged (``config.logs_append``) the place is known at once and the
search holds one queue, whatever N."""

from __future__ import annotations

from typing import Any

import pytest

from model_checks.designs.akka_mailbox.trace import AkkaChecker, TraceRejected, validate

N = 12  # sends of p1 after p0's last send


def _sends() -> list[dict[str, Any]]:
    """p1's first send is appended (its schedule follows its re-check) before p0's only send is
    logged; then p1 sends N more, each append pinned by p1's next event but p0's by nothing."""

    def send(thread: str, item: str) -> dict[str, Any]:
        return {"thread": thread, "event": "send", "mailbox": 0, "item": item, "result": "ok"}

    return [
        send("p1", "a0"),
        {"thread": "p1", "event": "schedule", "mailbox": 0},
        {"thread": "p1", "event": "execute", "mailbox": 0},
        send("p0", "x"),
        *(send("p1", f"a{k}") for k in range(1, N + 1)),
    ]


def _run(order: list[str]) -> list[dict[str, Any]]:
    return [
        {"thread": "w0", "event": "run_begin", "mailbox": 0},
        *({"thread": "w0", "event": "process", "mailbox": 0, "item": item} for item in order),
        {"thread": "w0", "event": "run_end", "mailbox": 0, "processed": len(order), "status": 0},
    ]


def _p1_items() -> list[str]:
    return [f"a{k}" for k in range(N + 1)]


@pytest.mark.parametrize("place", [1, 2, N // 2, N + 1])
def test_the_last_append_may_land_behind_any_later_append(place: int) -> None:
    order = _p1_items()
    order.insert(place, "x")
    validate({"workers": 1, "throughput": 100}, _sends() + _run(order), complete=True)


def test_the_last_append_cannot_pass_an_append_made_before_its_send() -> None:
    events = _sends() + _run(["x", *_p1_items()])
    with pytest.raises(TraceRejected) as caught:
        validate({"workers": 1, "throughput": 100}, events, complete=True)
    assert "x" in caught.value.message


def test_the_search_holds_one_state_per_place_until_the_message_is_processed() -> None:
    checker = AkkaChecker({"workers": 1, "throughput": 100})
    for ev in _sends():
        checker.step(dict(ev))
    queues = {s.queue[0] for s in checker.search.states}
    # p1's last append (aN) is not pinned either. aN not yet appended: x absent or behind one of
    # a0..a(N-1) (N + 1 queues); aN appended: x absent, behind one of a0..a(N-1), or behind aN
    # (N + 2). Linear in N, and each state holds the whole queue.
    assert len(queues) == 2 * N + 3
    for ev in _run(["a0", "a1", "x"])[:4]:  # run_begin, a0, a1, x: x's place is now known
        checker.step(dict(ev))
    assert {s.queue[0][-1][1] for s in checker.search.states} == {f"a{N - 1}", f"a{N}"}
    assert len({s.queue[0] for s in checker.search.states}) == 2  # aN appended or not


# --- the same run with its appends logged ------------------------------------------------------

LOGGED = {"workers": 1, "throughput": 100, "logs_append": True}


def _logged_sends(n: int, place: int) -> list[dict[str, Any]]:
    """``_sends`` with every append logged after its send; x's append after p1's append of
    a(place - 1), that is behind ``place`` of p1's messages."""

    def append(thread: str, item: str) -> dict[str, Any]:
        return {"thread": thread, "event": "append", "mailbox": 0, "item": item}

    def send(thread: str, item: str) -> dict[str, Any]:
        return {"thread": thread, "event": "send", "mailbox": 0, "item": item, "result": "ok"}

    events = [
        send("p1", "a0"),
        append("p1", "a0"),
        {"thread": "p1", "event": "schedule", "mailbox": 0},
        {"thread": "p1", "event": "execute", "mailbox": 0},
        send("p0", "x"),
    ]
    for k in range(1, n + 1):
        if k == place:
            events.append(append("p0", "x"))
        events += [send("p1", f"a{k}"), append("p1", f"a{k}")]
    if place == n + 1:
        events.append(append("p0", "x"))
    return events


def _queues_per_event(n: int, place: int) -> list[int]:
    checker = AkkaChecker(LOGGED)
    counts = []
    for ev in _logged_sends(n, place):
        checker.step(dict(ev))
        counts.append(len({s.queue[0] for s in checker.search.states}))
    return counts


@pytest.mark.parametrize("place", [1, 2, N // 2, N + 1])
def test_with_appends_logged_the_place_is_the_trace_order(place: int) -> None:
    order = [f"a{k}" for k in range(N + 1)]
    order.insert(place, "x")
    validate(LOGGED, _logged_sends(N, place) + _run(order), complete=True)
    # Any other place is refused: the queue's order is what the appends show.
    for other in {1, N + 1} - {place}:
        wrong = [f"a{k}" for k in range(N + 1)]
        wrong.insert(other, "x")
        with pytest.raises(TraceRejected) as caught:
            validate(LOGGED, _logged_sends(N, place) + _run(wrong), complete=True)
        assert caught.value.rule == 4, caught.value.message


def test_with_appends_logged_the_search_holds_one_queue_whatever_n() -> None:
    """The slow case above (2N + 3 queues held) with its appends logged: one queue after every
    event, and the live set's peak the same for N and 2N sends (it does not grow with them)."""
    for place in (1, N // 2, N + 1):
        assert set(_queues_per_event(N, place)) == {1}
    peaks = []
    for n in (N, 2 * N):
        checker = AkkaChecker(LOGGED)
        for ev in _logged_sends(n, n // 2):
            checker.step(dict(ev))
        peaks.append(checker.search.peak)
    assert peaks[0] == peaks[1] <= 8, peaks
    without = AkkaChecker({"workers": 1, "throughput": 100})
    for ev in _sends():
        without.step(dict(ev))
    # Without the events every place stays possible (the closure's 2N + 3 queues, the test above);
    # the append deferred (session 34), the search holds them as pending appends, not as states.
    assert len({s.queue[0] for s in without.search.states}) == 2 * N + 3
    assert without.search.peak < 2 * N + 3
