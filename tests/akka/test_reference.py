"""The Akka-mailbox reference under real threads: API, conservation, FIFO, one runner, tracing."""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from typing import Any

import pytest

from reference.akka_mailbox import CLOSED, OPEN, ActorRef, Dispatcher, Mailbox, Send, trace_header
from reference.tracing import RecordingTracer


def _check_trace(events: list[dict[str, Any]], budget: int) -> None:
    """The spec's safety rules that a trace shows directly: one runner, budget, FIFO per sender;
    and the queue's order is the appends' order in the trace (each message taken out, processed
    or dead-lettered, after its append and in that order)."""
    running: dict[int, str] = {}
    per_run: dict[str, int] = {}
    last: dict[tuple[int, str], int] = {}
    queued: dict[int, deque[Any]] = defaultdict(deque)
    for e in events:
        kind, thread = e["event"], e["thread"]
        if kind == "append":
            queued[e["mailbox"]].append(e["item"])
        elif kind == "process":
            assert queued[e["mailbox"]] and queued[e["mailbox"]].popleft() == e["item"], f"seq {e['seq']}"
        elif kind == "dead_letter":
            for item in e["items"]:
                assert queued[e["mailbox"]] and queued[e["mailbox"]].popleft() == item, f"seq {e['seq']}"
        if kind == "run_begin":
            assert e["mailbox"] not in running, f"seq {e['seq']}: mailbox {e['mailbox']} run twice at once"
            running[e["mailbox"]] = thread
            per_run[thread] = 0
        elif kind == "process":
            assert running.get(e["mailbox"]) == thread, f"seq {e['seq']}: process outside the run"
            per_run[thread] += 1
            assert per_run[thread] <= budget
            sender, k = str(e["item"]).split(".")
            key = (e["mailbox"], sender)
            assert last.get(key, -1) < int(k), f"seq {e['seq']}: {e['item']} out of order"
            last[key] = int(k)
        elif kind == "run_end":
            assert running.pop(e["mailbox"]) == thread
            assert e["processed"] == per_run[thread]


@pytest.mark.timeout(60)
def test_stress_conservation_fifo_one_runner() -> None:
    mailboxes, producers, per_producer, workers, throughput = 8, 4, 2_000, 4, 3
    tracer = RecordingTracer()
    d = Dispatcher(throughput=throughput, workers=workers, tracer=tracer)
    got: dict[int, list[str]] = defaultdict(list)
    inside = [0] * mailboxes
    overlaps: list[int] = []

    def receiver(mb: int) -> Any:
        def receive(msg: str) -> None:
            inside[mb] += 1
            if inside[mb] > 1:
                overlaps.append(mb)
            got[mb].append(msg)
            inside[mb] -= 1

        return receive

    refs = [d.spawn(receiver(mb)) for mb in range(mailboxes)]

    def produce(p: int) -> None:
        for k in range(per_producer):
            assert refs[(k * 7 + p) % mailboxes].tell(f"p{p}.{k}") is Send.OK

    threads = [threading.Thread(target=produce, args=(p,)) for p in range(producers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = d.shutdown()
    assert not overlaps
    assert report.dead_letter_count == 0
    assert report.processed == producers * per_producer
    assert sum(len(v) for v in got.values()) == producers * per_producer
    for mb, msgs in got.items():
        for p in range(producers):
            mine = [int(m.split(".")[1]) for m in msgs if m.startswith(f"p{p}.")]
            assert mine == sorted(mine), f"mailbox {mb} not FIFO for p{p}"
            assert mine == [k for k in range(per_producer) if (k * 7 + p) % mailboxes == mb]
    _check_trace(tracer.events(), throughput)
    assert tracer.config == {"workers": workers, "throughput": throughput, "logs_append": True}
    assert trace_header(tracer.config)["design"] == "akka-mailbox"


@pytest.mark.timeout(60)
def test_suspend_resume_and_close_under_load() -> None:
    d = Dispatcher(throughput=2, workers=3)
    counts = [0, 0]
    a: ActorRef[int] = d.spawn(lambda m: counts.__setitem__(0, counts[0] + 1), name="a")
    b: ActorRef[int] = d.spawn(lambda m: counts.__setitem__(1, counts[1] + 1), name="b")
    stop = threading.Event()

    def flap() -> None:
        while not stop.is_set():
            a.suspend()
            a.resume()

    flapper = threading.Thread(target=flap)
    flapper.start()
    results = {Send.OK: 0, Send.DEAD_LETTER: 0}
    for k in range(3_000):
        a.tell(k)
        results[b.tell(k)] += 1
        if k == 1_500:
            b.close()
    stop.set()
    flapper.join()
    report = d.shutdown()
    assert counts[0] == 3_000  # every suspension was undone: nothing of a is lost
    dead_b = len(report.dead_letters.get("b", []))
    assert counts[1] + dead_b == 3_000  # b's messages processed or dead-lettered, none lost
    assert results[Send.DEAD_LETTER] == 3_000 - 1_501
    assert b.mailbox.status.load() == CLOSED
    assert a.mailbox.status.load() == CLOSED  # shutdown closes every mailbox


@pytest.mark.timeout(30)
def test_throughput_one_means_one_message_per_run() -> None:
    tracer = RecordingTracer()
    d = Dispatcher(throughput=1, workers=1, tracer=tracer)
    gate = threading.Event()
    ref: ActorRef[str] = d.spawn(lambda m: gate.wait(5))
    for k in range(3):
        ref.tell(f"p0.{k}")
    gate.set()
    d.shutdown()
    ends = [e["processed"] for e in tracer.events() if e["event"] == "run_end"]
    assert sum(ends) == 3 and max(ends) == 1


@pytest.mark.parametrize("throughput", [0, -5])
def test_throughput_below_one_is_refused(throughput: int) -> None:
    # Pekko reads 0 or less as 1; the reference refuses it as the mistake it almost always is.
    with pytest.raises(ValueError, match=r"^throughput must be at least 1"):
        Dispatcher(throughput=throughput, workers=1)


@pytest.mark.timeout(30)
def test_a_failing_actor_is_reported_and_the_mailbox_goes_on() -> None:
    errors: list[tuple[str, Any]] = []
    d = Dispatcher(throughput=4, workers=2, on_error=lambda name, msg, exc: errors.append((name, msg)))
    seen: list[int] = []

    def receive(m: int) -> None:
        if m == 2:
            raise ValueError("boom")
        seen.append(m)

    ref = d.spawn(receive, name="flaky")
    for m in range(5):
        ref.tell(m)
    d.shutdown()
    assert seen == [0, 1, 3, 4]
    assert errors == [("flaky", 2)]


@pytest.mark.timeout(30)
def test_suspended_mailbox_at_shutdown_reports_dead_letters_and_late_sends_too() -> None:
    dead: list[tuple[str, Any]] = []
    d = Dispatcher(throughput=1, workers=1, on_dead_letter=lambda name, msg: dead.append((name, msg)))
    ref: ActorRef[str] = d.spawn(lambda m: None, name="held")
    ref.suspend()
    ref.tell("x")
    ref.tell("y")
    report = d.shutdown()
    assert report.dead_letters == {"held": ["x", "y"]}
    assert ref.tell("z") is Send.DEAD_LETTER
    assert dead == [("held", "x"), ("held", "y"), ("held", "z")]
    assert ref.mailbox.status.load() == CLOSED
    with pytest.raises(RuntimeError):
        d.shutdown()
    with pytest.raises(RuntimeError):
        d.spawn(lambda m: None)


@pytest.mark.timeout(30)
def test_close_returns_what_was_queued() -> None:
    d = Dispatcher(throughput=1, workers=1)
    ref: ActorRef[int] = d.spawn(lambda m: None)
    ref.suspend()
    ref.tell(1)
    assert ref.close() == [1]
    assert ref.close() == []
    ref.resume()  # on a closed mailbox: nothing happens
    assert ref.mailbox.status.load() == CLOSED
    d.shutdown()


@pytest.mark.timeout(30)
def test_idle_dispatcher_status_words_are_open() -> None:
    d = Dispatcher(throughput=5, workers=2)
    refs: list[ActorRef[str]] = [d.spawn(lambda m: None) for _ in range(3)]
    for r in refs:
        r.tell("m")
    # eventually every mailbox is back to Open (not Scheduled) once its message ran
    import time

    deadline = time.monotonic() + 5
    while any(r.mailbox.status.load() != OPEN for r in refs) and time.monotonic() < deadline:
        time.sleep(0.001)
    assert all(r.mailbox.status.load() == OPEN for r in refs)
    d.shutdown()


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError):
        Dispatcher(throughput=1, workers=0)


class _CloseBetweenReadAndAppend(Mailbox[Any]):
    """The race the lock-free enqueue must survive, made deterministic: the word reads Open, then
    the whole close (becomeClosed and its cleanUp, which finds nothing) runs before the append."""

    def enqueue(self, msg: Any) -> bool:
        assert self.status.load() != CLOSED
        assert self.dispatcher.close(self) == []
        self.queue.append(msg)
        return True


@pytest.mark.timeout(30)
def test_a_message_appended_after_the_close_is_cleaned_up_by_its_sender() -> None:
    dead: list[tuple[str, Any]] = []
    d = Dispatcher(
        throughput=1,
        workers=1,
        on_dead_letter=lambda name, msg: dead.append((name, msg)),
        mailbox_factory=_CloseBetweenReadAndAppend,
    )
    ref: ActorRef[str] = d.spawn(lambda m: None, name="raced")
    assert ref.tell("late") is Send.OK  # accepted by its read: dead-lettered, not lost
    assert dead == [("raced", "late")] and not ref.mailbox.has_messages()
    report = d.shutdown()
    assert report.dead_letters == {"raced": ["late"]} and report.processed == 0


def test_an_actor_ref_of_another_dispatchers_mailbox_is_refused() -> None:
    d, other = Dispatcher(throughput=1, workers=1), Dispatcher(throughput=1, workers=1)
    ref: ActorRef[int] = other.spawn(lambda m: None)
    with pytest.raises(ValueError, match="another dispatcher"):
        ActorRef(d, ref.mailbox)
    d.shutdown()
    other.shutdown()
