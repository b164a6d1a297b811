"""Store semantics, shared by SqliteStore, InMemoryStore and PgStore: claims, leases, retries, admission."""

from __future__ import annotations

import pytest

from reference.jobs import BudgetRefusal, Budgets, Conditions, JobSpec, JobState, Reason, StaleLease
from reference.jobs.core import StoreCore
from reference.jobs.tracing import RecordingTracer
from tests.jobs.conftest import STORE_KINDS, StoreMaker
from tests.jobs.helpers import Clock, check_trace, small_traced_run


@pytest.fixture(params=STORE_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tracer() -> RecordingTracer:
    return RecordingTracer()


@pytest.fixture
def store(kind: str, store_maker: StoreMaker, clock: Clock, tracer: RecordingTracer) -> StoreCore:
    return store_maker(kind, clock, tracer)


SEED_BUDGETS = Budgets({"providers": 20, "exports": 8}, {"openai": 12, "tenant:acme": 6})
OPEN = Conditions(retry_after=5.0)


def test_claims_by_priority_then_age_and_respects_delay(store: StoreCore, clock: Clock) -> None:
    low = store.enqueue(JobSpec("q", {"n": 1}))
    high = store.enqueue(JobSpec("q", {"n": 2}, priority=5))
    later = store.enqueue(JobSpec("q", {"n": 3}, priority=9, delay=10))
    order = []
    for _ in range(2):
        outcome = store.claim("w", OPEN)
        assert outcome.claim is not None
        order.append(outcome.claim.job.id)
    assert order == [high.id, low.id]
    assert store.claim("w", OPEN).claim is None  # the delayed job is not available yet
    clock.advance(10)
    outcome = store.claim("w", OPEN)
    assert outcome.claim is not None and outcome.claim.job.id == later.id
    assert outcome.claim.job.payload == {"n": 3} and outcome.claim.job.attempts == 1


def test_queue_filter(store: StoreCore) -> None:
    store.enqueue(JobSpec("a"))
    b = store.enqueue(JobSpec("b"))
    outcome = store.claim("w", OPEN, ["b"])
    assert outcome.claim is not None and outcome.claim.job.id == b.id
    assert store.claim("w", OPEN, ["b"]).claim is None


def test_failure_retries_with_backoff_then_fails_with_reason(store: StoreCore, clock: Clock) -> None:
    job = store.enqueue(JobSpec("q", max_attempts=2, backoff=4.0))
    first = store.claim("w", OPEN).claim
    assert first is not None
    after = store.fail(job.id, first.token, "RuntimeError: x", 0.1, 0)
    assert after.state is JobState.PENDING and after.available_at == clock.now + 4.0
    assert store.claim("w", OPEN).claim is None
    clock.advance(4)
    second = store.claim("w", OPEN).claim
    assert second is not None and second.job.attempts == 2
    final = store.fail(job.id, second.token, "RuntimeError: x", 0.1, 0)
    assert final.state is JobState.FAILED and "attempt 2 of 2 failed" in (final.reason or "")


def test_finish_records_result_and_profile(store: StoreCore) -> None:
    job = store.enqueue(JobSpec("q", handler="h"))
    claim = store.claim("w", OPEN).claim
    assert claim is not None and claim.profile is None
    done = store.finish(job.id, claim.token, {"ok": True}, 2.5, 1 << 20)
    assert done.state is JobState.DONE and done.result == {"ok": True}
    store.enqueue(JobSpec("q", handler="h"))
    again = store.claim("w", OPEN).claim
    assert again is not None and again.profile is not None
    assert again.profile.duration == 2.5 and again.profile.peak_memory == 1 << 20


def test_a_result_that_is_not_json_is_refused_and_the_job_stays_leased(store: StoreCore) -> None:
    job = store.enqueue(JobSpec("q"))
    claim = store.claim("w", OPEN).claim
    assert claim is not None
    with pytest.raises(ValueError, match="result"):
        store.finish(job.id, claim.token, {1, 2}, 0.0, 0)
    current = store.get(job.id)
    assert current is not None and current.state is JobState.PROCESSING


def test_an_expired_lease_makes_the_job_claimable_again(store: StoreCore, clock: Clock) -> None:
    job = store.enqueue(JobSpec("q", backoff=0))
    first = store.claim("w1", Conditions(lease=10)).claim
    assert first is not None
    clock.advance(5)
    assert store.claim("w2", Conditions(lease=10)).claim is None  # still leased
    clock.advance(6)
    outcome = store.claim("w2", Conditions(lease=10))
    assert outcome.expired == [job.id]
    assert outcome.claim is not None and outcome.claim.job.id == job.id and outcome.claim.job.attempts == 2
    with pytest.raises(StaleLease):
        store.finish(job.id, first.token, None, 1.0, 0)
    with pytest.raises(StaleLease):
        store.heartbeat(job.id, first.token, 10)
    until = store.heartbeat(job.id, outcome.claim.token, 100)
    assert until == clock.now + 100


def test_a_lease_expiring_on_the_last_attempt_fails_the_job(store: StoreCore, clock: Clock) -> None:
    job = store.enqueue(JobSpec("q", max_attempts=1))
    assert store.claim("w1", Conditions(lease=1)).claim is not None
    clock.advance(2)
    assert store.claim("w2", Conditions(lease=1)).expired == [job.id]
    failed = store.get(job.id)
    assert failed is not None and failed.state is JobState.FAILED
    assert "lease expired on attempt 1 of 1" in (failed.reason or "")


# ----------------------------------------------------------------------------- budgets and admission


def test_group_concurrency_limit_denies_without_spending_an_attempt(store: StoreCore, clock: Clock) -> None:
    for _ in range(3):
        store.enqueue(JobSpec("q", concurrency_group="g", concurrency_limit=2))
    assert store.claim("w1", OPEN).claim is not None
    assert store.claim("w2", OPEN).claim is not None
    outcome = store.claim("w3", OPEN)
    assert outcome.claim is None
    [(job_id, decision)] = outcome.denied
    assert decision.reason is Reason.GROUP_CONCURRENCY and decision.retry_after == 5.0
    denied = store.get(job_id)
    assert denied is not None and denied.state is JobState.PENDING and denied.attempts == 0
    assert denied.denials == 1 and denied.available_at == clock.now + 5.0
    status = store.status()
    assert status.deferred[0]["id"] == job_id
    assert str(status.deferred[0]["reason"]).startswith("group_concurrency_limit")
    assert status.running == {"g": 2}


def test_seed_budgets_queue_then_group(store: StoreCore) -> None:
    store.set_budgets(SEED_BUDGETS)
    # queue providers 20: four jobs of 5 fill it; group openai 12 is hit first by openai jobs
    a = store.enqueue(JobSpec("providers", concurrency_group="openai", cost_units=5))
    b = store.enqueue(JobSpec("providers", concurrency_group="openai", cost_units=5))
    c = store.enqueue(JobSpec("providers", concurrency_group="openai", cost_units=5))
    assert store.claim("w", OPEN).claim is not None
    assert store.claim("w", OPEN).claim is not None
    outcome = store.claim("w", OPEN)
    assert outcome.claim is None and outcome.denied[0][0] == c.id
    assert outcome.denied[0][1].reason is Reason.GROUP_BUDGET
    d = store.enqueue(JobSpec("providers", cost_units=11))
    outcome = store.claim("w", OPEN)  # c is deferred; d needs 10 active + 11 > 20
    assert outcome.claim is None and outcome.denied == [(d.id, outcome.denied[0][1])]
    assert outcome.denied[0][1].reason is Reason.QUEUE_BUDGET
    status = store.status()
    assert status.active_cost == {"queues": {"providers": 10}, "groups": {"openai": 10}}
    assert {a.id, b.id}.isdisjoint({x["id"] for x in status.deferred})


def test_finishing_frees_the_budget(store: StoreCore, clock: Clock) -> None:
    store.set_budgets(Budgets({"exports": 8}))
    first = store.enqueue(JobSpec("exports", cost_units=5))
    store.enqueue(JobSpec("exports", cost_units=5))
    claim = store.claim("w", OPEN).claim
    assert claim is not None and store.claim("w", OPEN).claim is None
    store.finish(first.id, claim.token, None, 0.0, 0)
    clock.advance(5)
    assert store.claim("w", OPEN).claim is not None


def test_budget_counts_processing_jobs_not_queued_ones(store: StoreCore) -> None:
    store.set_budgets(Budgets({"exports": 8}))
    for _ in range(5):
        store.enqueue(JobSpec("exports", cost_units=4))  # 20 units queued, far above the budget
    assert store.claim("w", OPEN).claim is not None
    assert store.claim("w", OPEN).claim is not None  # 4 + 4 <= 8: queued cost does not count


def test_cost_above_a_budget_is_refused_at_enqueue(store: StoreCore, tracer: RecordingTracer) -> None:
    store.set_budgets(SEED_BUDGETS)
    with pytest.raises(BudgetRefusal, match="exceeds queue 'exports' budget 8"):
        store.enqueue(JobSpec("exports", cost_units=9))
    with pytest.raises(BudgetRefusal, match="exceeds group 'tenant:acme' budget 6"):
        store.enqueue(JobSpec("other", concurrency_group="tenant:acme", cost_units=7))
    assert store.status().counts["pending"] == 0
    assert [e["event"] for e in tracer.events].count("refuse") == 2


def test_a_budget_shrunk_below_a_queued_cost_fails_the_job_instead_of_deferring_it(store: StoreCore) -> None:
    job = store.enqueue(JobSpec("exports", cost_units=9))
    store.set_budgets(Budgets({"exports": 8}))
    outcome = store.claim("w", OPEN)
    assert outcome.claim is None and outcome.denied == []
    assert outcome.failed and outcome.failed[0][0] == job.id
    failed = store.get(job.id)
    assert failed is not None and failed.state is JobState.FAILED
    assert (failed.reason or "").startswith("cost_exceeds_budget")


def test_process_checks_run_inside_the_claim_and_admission_disabled_skips_only_them(store: StoreCore) -> None:
    store.set_budgets(Budgets({"q": 1}))
    first = store.enqueue(JobSpec("q", handler="h"))
    claim = store.claim("w", OPEN).claim
    assert claim is not None
    store.finish(first.id, claim.token, None, 50.0, 0)  # the profile: 50 s per run
    store.enqueue(JobSpec("q", handler="h"))
    outcome = store.claim("w", Conditions(time_left=10.0))
    assert outcome.denied[0][1].reason is Reason.TIME_LEFT
    store.enqueue(JobSpec("q", handler="h", priority=1))
    off = Conditions(enabled=False, time_left=10.0)
    admitted = store.claim("w", off).claim
    assert admitted is not None and "admission disabled" in admitted.decision.detail
    # the shared budget still holds with admission disabled
    store.enqueue(JobSpec("q", handler="other", priority=2))
    outcome = store.claim("w", off)
    assert outcome.claim is None and outcome.denied[0][1].reason is Reason.QUEUE_BUDGET


def test_store_traces_satisfy_the_admission_invariants(store: StoreCore, tracer: RecordingTracer) -> None:
    small_traced_run(store, OPEN)
    events = tracer.events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert {"claim", "admit", "deny", "start", "finish", "enqueue", "budgets"} <= {e["event"] for e in events}
    assert check_trace(events) == []


def test_the_trace_check_catches_an_over_budget_admission() -> None:
    def admit(seq: int, job: int, cost: int) -> dict[str, object]:
        return {
            "seq": seq,
            "event": "admit",
            "job": job,
            "queue": "q",
            "group": None,
            "limit": None,
            "cost": cost,
        }

    events = [
        {"seq": 1, "event": "budgets", "queues": {"q": 2}, "groups": {}},
        admit(2, 1, 2),
        admit(3, 2, 1),
        admit(4, 2, 1),
    ]
    problems = check_trace(events)
    assert any("over budget" in p for p in problems)
    assert any("double claim" in p for p in problems)


def test_bad_arguments_are_refused_naming_the_field(store: StoreCore) -> None:
    with pytest.raises(TypeError, match="spec must be a JobSpec"):
        store.enqueue("q")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="conditions"):
        store.claim("w", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="budgets"):
        store.set_budgets({"q": 1})  # type: ignore[arg-type]
