"""The admission trace format: `lanecheck validate` judges a job store's merged trace.

Hand-made traces show each rule rejecting its bad case at the first bad seq; a real store's trace
(both stores) is allowed; malformed input is refused naming the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance.streamed import event_ok, schema_event_problem
from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission.trace import FORMAT, STATES, header, merged_lines, trace_lines
from model_checks.registry import designs
from reference.jobs import JobSpec
from reference.jobs.admission import Conditions
from reference.jobs.inmemory import InMemoryStore
from reference.jobs.sqlite_store import SqliteStore
from reference.jobs.tracing import JsonlTraceFile, RecordingTracer
from tests.jobs.helpers import small_traced_run

OPEN = Conditions(retry_after=0.0)


def test_the_design_registers_this_format() -> None:
    assert designs()["admission"].trace_format == "model_checks.designs.admission.trace:FORMAT"


class T:
    """A hand-made trace: events numbered as they are added."""

    def __init__(self, queues: dict[str, int] | None = None, groups: dict[str, int] | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.add("main", "budgets", queues=queues or {}, groups=groups or {})

    def add(self, thread: str, event: str, **fields: Any) -> T:
        self.events.append({"seq": len(self.events) + 1, "thread": thread, "event": event, **fields})
        return self

    def enqueue(self, job: int, cost: int = 1, group: str | None = None, limit: int | None = None) -> T:
        return self.add(
            "main", "enqueue", job=job, queue="q", group=group, limit=limit, cost=cost, max_attempts=2
        )

    def run(
        self,
        w: str,
        job: int,
        cost: int = 1,
        group: str | None = None,
        limit: int | None = None,
        attempt: int = 1,
    ) -> T:
        self.add(w, "claim", job=job, queue="q", group=group, cost=cost)
        self.add(w, "admit", job=job, queue="q", group=group, limit=limit, cost=cost)
        return self.add(w, "start", job=job, attempt=attempt)

    def deny(self, w: str, job: int, reason: str, cost: int = 1, group: str | None = None) -> T:
        self.add(w, "claim", job=job, queue="q", group=group, cost=cost)
        return self.add(w, "deny", job=job, reason=reason)

    def verdict(self, *, end: dict[str, int] | None = None, complete: bool = False) -> Any:
        return validate_lines(trace_lines(self.events, end=end), complete=complete)


def counts(**given: int) -> dict[str, int]:
    return {s: given.get(s, 0) for s in STATES}


def test_a_good_trace_is_allowed_complete_with_end() -> None:
    t = T({"q": 3}).enqueue(1, 2).enqueue(2, 2).run("w0", 1, 2).deny("w1", 2, "queue_budget", 2)
    t.add("w0", "finish", job=1).run("w1", 2, 2).add("w1", "finish", job=2)
    v = t.verdict(end=counts(done=2))
    assert v.code == 0 and not v.prefix and v.design == "admission", v.message
    prefix = t.verdict()
    assert prefix.code == 0 and prefix.prefix and prefix.rule == max(FORMAT.rules)


@pytest.mark.parametrize(
    ("build", "rule", "seq", "words"),
    [
        (lambda: T().run("w0", 1), 1, 2, "never enqueued"),
        (lambda: T().enqueue(1).enqueue(1), 1, 3, "enqueued before"),
        (lambda: T({"q": 1}).enqueue(1, 2), 1, 2, "must be refused"),
        (lambda: T().enqueue(1).run("w0", 1).run("w1", 1), 2, 6, "double claim"),
        (
            lambda: (
                T()
                .enqueue(1)
                .enqueue(2)
                .add("w0", "claim", job=1, queue="q", group=None, cost=1)
                .run("w1", 2)
            ),
            2,
            5,
            "one transaction",
        ),
        # The same worker's own steps wait too: an admit is followed at once by its start, a claim
        # by its admit or deny (a review's finding: a finish before the start was allowed).
        (
            lambda: (
                T()
                .enqueue(1)
                .add("w0", "claim", job=1, queue="q", group=None, cost=1)
                .add("w0", "admit", job=1, queue="q", group=None, limit=None, cost=1)
                .add("w0", "finish", job=1)
            ),
            2,
            5,
            "its next step is the start of that job",
        ),
        (
            lambda: (
                T()
                .enqueue(1)
                .add("w0", "claim", job=1, queue="q", group=None, cost=1)
                .add("w0", "enqueue", job=2, queue="q", group=None, limit=None, cost=1, max_attempts=2)
            ),
            2,
            4,
            "w0 claimed job 1 at seq 3: its next step is the admit or deny",
        ),
        (
            lambda: (
                T()
                .enqueue(1)
                .enqueue(2)
                .run("w0", 1)
                .add("w0", "claim", job=2, queue="q", group=None, cost=1)
                .add("w0", "finish", job=1)
            ),
            2,
            8,
            "its next step is the admit or deny",
        ),
        (
            lambda: (
                T({}, {})
                .enqueue(1, 1, "g", 1)
                .enqueue(2, 1, "g", 1)
                .run("w0", 1, 1, "g", 1)
                .run("w1", 2, 1, "g", 1)
            ),
            3,
            8,
            "group concurrency",
        ),
        (
            lambda: T({"q": 3}).enqueue(1, 2).enqueue(2, 2).run("w0", 1, 2).run("w1", 2, 2),
            4,
            8,
            "queue budget",
        ),
        (
            lambda: (
                T({}, {"g": 2})
                .enqueue(1, 2, "g")
                .enqueue(2, 1, "g")
                .run("w0", 1, 2, "g")
                .run("w1", 2, 1, "g")
            ),
            5,
            8,
            "group budget",
        ),
        (lambda: T({"q": 3}).enqueue(1).deny("w0", 1, "queue_budget"), 6, 4, "leave room"),
        (
            lambda: (
                T({"q": 3}, {"g": 1})
                .enqueue(1, 1, "g", 1)
                .enqueue(2, 1, "g", 1)
                .run("w0", 1, 1, "g", 1)
                .deny("w1", 2, "queue_budget", 1, "g")
            ),
            6,
            8,
            "first failing check is group_concurrency_limit",
        ),
        (
            lambda: T().enqueue(1).deny("w0", 1, "time_left").run("w0", 1, attempt=2),
            7,
            7,
            "without an admission",
        ),
        (lambda: T().enqueue(1).run("w0", 1).add("w1", "finish", job=1), 8, 6, "lease is w0's"),
        (
            lambda: T().enqueue(1).run("w0", 1).add("main", "lease_expire", job=1, outcome="failed"),
            8,
            6,
            "goes back pending",
        ),
        (lambda: T().enqueue(1).add("w0", "finish", job=1), 8, 3, "not processing"),
        (
            lambda: T().enqueue(1).run("w0", 1).add("w0", "fail", job=1, reason="boom"),
            7,
            6,
            "retried, not failed",
        ),
        (lambda: T().enqueue(1).add("w0", "fail", job=1, reason="x"), 6, 3, "it fits"),
        (
            lambda: T().enqueue(1).run("w0", 1).add("w1", "release", job=1, attempts=0, reason="stop"),
            8,
            6,
            "lease is w0's",
        ),
        (
            lambda: T().enqueue(1).run("w0", 1).add("w0", "release", job=1, attempts=1, reason="stop"),
            7,
            6,
            "leaving 0",
        ),
        (
            lambda: T().enqueue(1).add("w0", "release", job=1, attempts=0, reason="stop"),
            8,
            3,
            "not processing",
        ),
    ],
)
def test_each_rule_rejects_its_bad_case_at_the_first_bad_seq(
    build: Any, rule: int, seq: int, words: str
) -> None:
    v = build().verdict()
    assert v.code == 1 and v.rule == rule and v.seq == seq, v.message
    assert words in v.message


def test_a_release_gives_the_attempt_back_and_the_next_start_is_that_attempt_again() -> None:
    t = T({"q": 1}).enqueue(1).run("w0", 1).add("w0", "release", job=1, attempts=0, reason="stop")
    good = t.run("w1", 1, attempt=1).add("w1", "finish", job=1).verdict(end=counts(done=1))
    assert good.code == 0 and not good.prefix, good.message
    spent = T().enqueue(1).run("w0", 1).add("w0", "release", job=1, attempts=0, reason="stop")
    v = spent.run("w1", 1, attempt=2).verdict()  # as if the release had spent the attempt
    assert v.code == 1 and v.rule == 7 and v.seq == 9, v.message


def test_a_lost_job_is_caught_against_the_store_counts() -> None:
    t = (
        T({"q": 1})
        .enqueue(1)
        .enqueue(2)
        .run("w0", 1)
        .deny("w1", 2, "queue_budget")
        .add("w0", "finish", job=1)
    )
    v = t.verdict(end=counts(done=1, discarded=1))
    assert v.code == 1 and v.rule == 9 and "job 2" in v.message and "lost" in v.message
    assert t.verdict(end=counts(done=1, pending=1)).code == 0


def test_a_complete_run_with_a_job_still_processing_is_rejected() -> None:
    t = T().enqueue(1).run("w0", 1)
    assert t.verdict().code == 0
    v = t.verdict(complete=True)
    assert v.code == 1 and v.rule == 9 and "still processing" in v.message
    after = T().enqueue(1).run("w0", 1).add("w0", "finish", job=1)
    lines = [
        *trace_lines(after.events, end=counts(done=1)),
        json.dumps({"seq": 8, "thread": "w0", "event": "finish", "job": 1}),
    ]
    assert validate_lines(lines).rule == 9


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('{"seq": 1, "thread": "w", "event": "admit", "job": 1}', "queue"),
        ('{"seq": 1, "thread": "w", "event": "teleport", "job": 1}', "unknown event"),
        ('{"seq": 1, "thread": "w", "event": "deny", "job": 1, "reason": "moon_phase"}', "reason"),
        ('{"seq": 1, "thread": "w", "event": "start", "job": 0, "attempt": 1}', "job"),
        ('{"seq": 2, "thread": "w", "event": "finish", "job": 1}', "seq 2 where 1"),
        ("not json", "bad JSON"),
    ],
)
def test_malformed_events_are_refused_naming_the_line(line: str, words: str) -> None:
    v = validate_lines([json.dumps(header()), line])
    assert v.code == 2 and v.line == 2 and words in v.message, v.message


def test_a_bad_header_is_refused() -> None:
    v = validate_lines([json.dumps({"trace": "lanecheck", "version": 1, "design": "admission"})])
    assert v.code == 2 and v.line == 1 and "config" in v.message


def test_the_hand_written_checks_agree_with_the_schema(tmp_path: Path) -> None:
    t = T({"q": 4}).enqueue(1).run("w0", 1).add("w0", "retry", job=1, attempts=1, retry_at=2.0)
    t.enqueue(2).add("w0", "claim", job=2, queue="q", group=None, cost=1).add(
        "w0", "deny", job=2, reason="time_left"
    )
    t.add("main", "discard", job=2, reason="workflow 1 failed").add(
        "main", "workflow_start", workflow=1, name="f", parent=None
    )
    good = [*t.events, {"seq": 99, "thread": "c", "event": "end", "counts": counts(done=1)}]
    good.append(
        {"seq": 98, "thread": "main", "event": "lease_expire", "job": 1, "outcome": "pending", "worker": None}
    )
    bad = [
        {"seq": 1, "thread": "w", "event": "claim", "job": 1, "queue": "q", "group": None, "cost": 0},
        {
            "seq": 1,
            "thread": "w",
            "event": "enqueue",
            "job": 1,
            "queue": "",
            "group": None,
            "limit": None,
            "cost": 1,
            "max_attempts": 1,
        },
        {"seq": 1, "thread": "w", "event": "lease_expire", "job": 1, "outcome": "gone"},
        {"seq": 1, "thread": "w", "event": "end", "counts": {"lost": 1}},
        {"seq": 1, "thread": "w", "event": "budgets", "queues": {"q": -1}, "groups": {}},
    ]
    for ev in good:
        assert event_ok(FORMAT, ev, 0) and schema_event_problem(FORMAT, ev, 0) is None, ev
    for ev in bad:
        assert not event_ok(FORMAT, ev, 0) and schema_event_problem(FORMAT, ev, 0) is not None, ev


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_a_real_store_trace_is_allowed(kind: str, tmp_path: Path) -> None:
    tracer = RecordingTracer()
    store = (
        InMemoryStore(tracer=tracer) if kind == "memory" else SqliteStore(tmp_path / "j.db", tracer=tracer)
    )
    small_traced_run(store, OPEN)
    v = validate_lines(trace_lines(tracer.events, end=store.status(0).counts), complete=True)
    assert v.code == 0 and not v.prefix, v.message
    assert {"claim", "admit", "deny", "start", "finish"} <= {e["event"] for e in tracer.events}


def test_merged_files_validate(tmp_path: Path) -> None:
    db = tmp_path / "j.db"
    with (
        JsonlTraceFile(tmp_path / "a.jsonl", "a", {}) as fa,
        JsonlTraceFile(tmp_path / "b.jsonl", "b", {}) as fb,
    ):
        a, b = SqliteStore(db, tracer=fa, process="a"), SqliteStore(db, tracer=fb, process="b")
        a.enqueue(JobSpec("q"))
        b.enqueue(JobSpec("q"))
        for store, name in ((a, "wa"), (b, "wb")):
            c = store.claim(name, OPEN).claim
            assert c is not None
            store.finish(c.job.id, c.token, None, 0.0, 0)
        lines = merged_lines([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], end=a.status(0).counts)
        a.close()
        b.close()
    assert json.loads(lines[0])["config"]["processes"] == ["a", "b"]
    v = validate_lines(lines, complete=True)
    assert v.code == 0 and not v.prefix, v.message
    (tmp_path / "b.jsonl").write_text((tmp_path / "b.jsonl").read_text().splitlines()[0] + "\n")
    with pytest.raises(ValueError, match="seq"):
        merged_lines([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])
