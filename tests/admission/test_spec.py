"""The admission spec holds at its configurations, every invariant fails on its bad case, every
mutant is caught as expected, and the mutual-deferral livelock is shown and fixed."""

from __future__ import annotations

import dataclasses

import pytest

from model_checks.designs.admission import DESIGN
from model_checks.designs.admission.configs import CONFIGS
from model_checks.designs.admission.spec_mutants import MUTANTS
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from spec import admission as ad
from spec.admission import SPEC, Job, JobSpec, Worker
from spec.language import Instance, SpecError
from tests.spec_helpers import assert_holds, assert_reads_cover, reachable

pytestmark = pytest.mark.timeout(120)

PROPERTIES = ("EveryAdmissibleJobRuns", "NoJobDeferredForever")
LIVENESS_MUTANTS = ("budget-counts-queued", "oversized-deferred", "claim-then-admit")


# The configurations without ``releases`` never stop a worker with a job in hand.
RELEASES = ["Release", "ReleaseFenced"]

# Each configuration: its state count and the actions it leaves unfired (every other one fires).
HOLDS = {
    "small": (324, RELEASES),
    # a released job runs again on the attempt it had
    "release": (13, ["Refuse", "ClaimAndDeny", "ResourceDeny", "ReleaseFenced", "RetryDue", "LeaseExpire"]),
    # a release after the lease expired is fenced off
    "release-expiry": (57, ["Refuse", "ClaimAndDeny", "ResourceDeny", "RetryDue"]),
    "standard": (17_347, ["Refuse", *RELEASES]),
    # with admission disabled the budgets hold and no resource check denies
    "disabled": (5_254, ["Refuse", "ResourceDeny", *RELEASES]),
}


@pytest.mark.parametrize("config", list(HOLDS))
def test_the_configuration_holds_with_every_other_action_fired(config: str) -> None:
    states, unfired = HOLDS[config]
    result = assert_holds(SPEC, CONFIGS[config], config, states=states, unfired=unfired)
    assert set(PROPERTIES) <= set(result.properties_checked)


def test_the_design_is_registered_with_its_configurations_and_mutants() -> None:
    from model_checks.registry import design

    assert design("admission") is DESIGN
    assert {"small", "livelock", "standard", "disabled", "large", "release", "release-expiry"} <= set(
        DESIGN.configs
    )
    assert set(MUTANTS) == {
        "check-then-claim",
        "denial-spends-attempt",
        "denial-drops-job",
        "budget-counts-queued",
        "oversized-deferred",
        "release-spends-attempt",
        "release-unfenced",
        "claim-then-admit",
    }


# ------------------------------------------------------------------ what the configurations reach


@pytest.fixture(scope="module")
def small_states() -> list[ad.Vars]:
    return reachable(SPEC, CONFIGS["small"])


def test_every_denial_reason_is_reached_in_standard() -> None:
    states = reachable(SPEC, CONFIGS["standard"])
    reasons = {job.reason for s in states for job in s.job.values() if job.status == ad.DEFERRED}
    assert reasons == {ad.GROUP_LIMIT, ad.QUEUE_BUDGET, ad.GROUP_BUDGET, ad.RESOURCE}


def test_an_oversized_job_is_refused_at_enqueue_and_never_queued(small_states: list[ad.Vars]) -> None:
    statuses = {s.job["j2"].status for s in small_states}
    assert statuses == {ad.UNBORN, ad.REFUSED}
    assert {s.job["j2"].reason for s in small_states if s.job["j2"].status == ad.REFUSED} == {
        ad.COST_OVER_QUEUE_BUDGET
    }


def _stale(s: ad.Vars) -> list[str]:
    """Workers running a job whose lease is no longer theirs (it expired under them)."""
    return [
        w
        for w, me in s.worker.items()
        if me.pc == ad.W_RUNNING and me.job is not None and s.job[me.job] != Job(ad.PROCESSING, me.attempt, w)
    ]


def test_a_lease_expiry_reclaims_the_job_and_fences_the_stale_finish(small_states: list[ad.Vars]) -> None:
    inst = Instance(SPEC, CONFIGS["small"])
    stale = [s for s in small_states if _stale(s)]
    assert stale
    for s in stale:
        for t in inst.successors(s):
            if t.action.name == "Finish" and t.process in _stale(s):
                assert t.fields is not None and t.fields["stale"] is True
                assert t.state.job == s.job and t.state.finishes == s.finishes  # the row is untouched
    # with one attempt, an expiry fails the job with its reason
    failed = [s for s in small_states if any(j.reason == ad.ATTEMPTS_EXHAUSTED for j in s.job.values())]
    assert failed and all(
        j.status == ad.FAILED for s in failed for j in s.job.values() if j.reason == ad.ATTEMPTS_EXHAUSTED
    )


def test_reads_hints_cover_the_invariants(small_states: list[ad.Vars]) -> None:
    assert_reads_cover(SPEC, CONFIGS["small"], small_states)


def test_bad_constants_are_refused_by_the_assumptions() -> None:
    zero_cost = dataclasses.replace(CONFIGS["small"], jobs=(JobSpec("providers", None, 0),))
    with pytest.raises(SpecError, match="cost at least 1"):
        Instance(SPEC, zero_cost)
    with pytest.raises(SpecError, match="queue_budgets"):
        Instance(SPEC, dataclasses.replace(CONFIGS["small"], queue_budgets=(("providers", 0),)))
    with pytest.raises(SpecError, match="expiries"):
        Instance(SPEC, dataclasses.replace(CONFIGS["small"], expiries=-1))


# ------------------------------------------------------------------ each invariant fails on its bad case


def _state(**jobs: Job) -> ad.Vars:
    """A state of ``standard`` with the given rows (the others unborn) and idle workers."""
    c = CONFIGS["standard"]
    s: ad.Vars = Instance(SPEC, c).initial_states()[0]
    for j, job in jobs.items():
        s = s._replace(job=s.job.except_(j, job))
    return s


def _running(s: ad.Vars, w: str, j: str) -> ad.Vars:
    job = s.job[j]
    s = s._replace(worker=s.worker.except_(w, Worker(ad.W_RUNNING, j, job.attempts)))
    return s._replace(admits=s.admits.except_(j, job.attempts))


def test_group_limit_and_group_budget_fail_when_a_group_runs_over() -> None:
    c = CONFIGS["standard"]  # tenant:acme: limit 1, budget 6; openai: budget 2
    s = _state(j2=Job(ad.PROCESSING, 1, "w0"), j3=Job(ad.PROCESSING, 1, "w1"))
    assert "over its concurrency limit 1" in (ad.GroupWithinLimit(c, s) or "")
    s = _state(j0=Job(ad.PROCESSING, 1, "w0"), j1=Job(ad.PROCESSING, 1, "w1"))
    assert "group openai" in (ad.GroupWithinBudget(c, s) or "")
    assert ad.QueueWithinBudget(c, s) is None  # 3 <= 4
    s = _state(j0=Job(ad.PROCESSING, 1, "w0"), j2=Job(ad.PROCESSING, 1, "w1"), j1=Job(ad.PROCESSING, 1, "w1"))
    assert "queue providers" in (ad.QueueWithinBudget(c, s) or "")


def test_no_job_lost_fails_on_an_orphan_a_missing_reason_and_a_broken_claim_order() -> None:
    c = CONFIGS["standard"]
    held = _running(_state(j0=Job(ad.PROCESSING, 1, "w0")), "w0", "j0")
    assert ad.NoJobLost(c, held._replace(enqueued=1)) is None
    orphan = _state(j0=Job(ad.PROCESSING, 1, "w0"))._replace(enqueued=1)
    assert "no worker holds its lease" in (ad.NoJobLost(c, orphan) or "")
    no_reason = _state(j0=Job(ad.FAILED, 1))._replace(enqueued=1)
    assert "without a reason" in (ad.NoJobLost(c, no_reason) or "")
    unlisted = _state(j0=Job(ad.PENDING))._replace(enqueued=1)
    assert "claim order" in (ad.NoJobLost(c, unlisted) or "")
    vanished = _state()._replace(enqueued=1)
    assert "no row" in (ad.NoJobLost(c, vanished) or "")


# ------------------------------------------------------------------ the mutants


@pytest.mark.parametrize("name", list(MUTANTS))
def test_each_mutant_is_caught_with_its_kind_property_and_length(name: str) -> None:
    m = MUTANTS[name]
    result = check(m.spec, m.constants(CONFIGS[m.config]), Options(), config=m.config)
    assert result.verdict == "violated"
    assert result.violation is not None and result.counterexample is not None
    assert result.violation.name == m.expect, result.violation.reason
    assert result.violation.kind == ("liveness" if name in LIVENESS_MUTANTS else "invariant")
    assert result.counterexample.length == m.length


@pytest.mark.parametrize("name", [n for n in MUTANTS if n not in LIVENESS_MUTANTS])
def test_a_safety_mutant_has_no_shorter_counterexample(name: str) -> None:
    m = MUTANTS[name]
    shorter = check(m.spec, m.constants(CONFIGS[m.config]), Options(max_depth=m.length - 1))
    assert shorter.verdict == "incomplete"


@pytest.mark.parametrize("name", LIVENESS_MUTANTS)
def test_a_liveness_mutant_breaks_no_invariant(name: str) -> None:
    """Its bug is only visible as a behaviour that never ends: every reachable state is safe."""
    m = MUTANTS[name]
    safety = check(m.spec, m.constants(CONFIGS[m.config]), Options(liveness=False))
    assert safety.verdict == "holds"
    # ... and without fairness the lasso is no counterexample at all: the checker needs it
    unfair = check(dataclasses.replace(m.spec, fair=()), m.constants(CONFIGS[m.config]), Options())
    assert unfair.counterexample is not None and unfair.counterexample.stutter


def test_check_then_claim_admits_two_jobs_on_one_stale_reading() -> None:
    m = MUTANTS["check-then-claim"]
    result = check(m.spec, CONFIGS["small"], Options())
    assert result.counterexample is not None
    steps = [(s.action, s.process) for s in result.counterexample.steps]
    assert [a for a, _ in steps].count("CheckBudgets") == 2
    assert [a for a, _ in steps][-2:] == ["ClaimChecked", "ClaimChecked"]


def test_an_oversized_job_loops_deny_retry_for_ever_when_accepted() -> None:
    m = MUTANTS["oversized-deferred"]
    result = check(m.spec, CONFIGS["small"], Options())
    cx = result.counterexample
    assert cx is not None and cx.loop_start is not None
    loop = cx.steps[cx.loop_start :]
    assert {s.action for s in loop} == {"ClaimAndDeny", "RetryDue"}
    assert {s.fields["job"] for s in loop if s.fields} == {"j2"}


# ------------------------------------------------------------------ the mutual-deferral livelock


def test_claim_then_admit_livelocks_two_workers_deferring_each_other() -> None:
    m = MUTANTS["claim-then-admit"]
    result = check(m.spec, CONFIGS["livelock"], Options())
    cx = result.counterexample
    assert cx is not None and cx.loop_start is not None and not cx.stutter
    loop = cx.steps[cx.loop_start :]
    # the loop admits nothing: every claim is given back, and both workers give back
    assert {s.action for s in loop} == {"Claim", "DenyClaimed", "RetryDue"}
    denials = [s for s in loop if s.action == "DenyClaimed"]
    assert {s.process for s in denials} == {"w0", "w1"}
    assert all(s.fields and s.fields["reason"] == ad.QUEUE_BUDGET for s in denials)
    # each denial is the other worker's *claimed* (not running) cost pushing the job over budget
    for i, step in enumerate(cx.steps):
        if step.action == "DenyClaimed" and i >= cx.loop_start and step.fields is not None:
            before = cx.steps[i - 1].state
            other = next(j for j in before.job.domain() if j != step.fields["job"])
            assert before.job[other].status == ad.CLAIMED and before.job[other].owner != step.process
            assert not any(job.status == ad.PROCESSING for job in before.job.values())


def test_the_fix_admission_inside_the_claim_transaction_holds_on_the_livelock_setting() -> None:
    result = check(SPEC, CONFIGS["livelock"], Options(), config="livelock")
    assert result.verdict == "holds", result.violation
    assert set(PROPERTIES) <= set(result.properties_checked)


def test_the_naive_order_is_safe_everywhere_the_design_is() -> None:
    """Claim-first never runs a group or queue over budget: its bug is liveness only."""
    m = MUTANTS["claim-then-admit"]
    result = check(m.spec, CONFIGS["small"], Options(liveness=False))
    assert result.verdict == "holds", result.violation
