"""The job-wakeup spec: the design (LISTEN, claim, wait with a poll) holds; the naive order loses
the wakeup as a deadlock in three steps; the poll alone, and LISTEN-first alone for announced
jobs, each repair it; every invariant fails on its bad case."""

from __future__ import annotations

import pytest

from model_checks.designs.job_wakeup import DESIGN
from model_checks.designs.job_wakeup.configs import CONFIGS
from model_checks.designs.job_wakeup.spec_mutants import (
    CLAIM_THEN_LISTEN_POLLING,
    MUTANTS,
    NOTIFY_ONLY,
)
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from spec import job_wakeup as jw
from spec.job_wakeup import SPEC, Constants, Worker
from spec.language import Function, Instance, SpecError
from tests.spec_helpers import assert_holds, assert_reads_cover, reachable

pytestmark = pytest.mark.timeout(120)


def test_the_configurations_hold_with_their_actions_fired() -> None:
    assert_holds(SPEC, CONFIGS["small"], "small", states=13, unfired=["Due", "Drop", "ConnectionLost"])
    assert_holds(SPEC, CONFIGS["delayed"], "delayed", states=19, unfired=["Drop", "ConnectionLost"])
    assert_holds(SPEC, CONFIGS["drop"], "drop", states=31, unfired=["Due"])
    result = assert_holds(SPEC, CONFIGS["standard"], "standard", states=1358, unfired=[])
    assert "EveryJobRuns" in result.properties_checked


def test_the_design_is_registered_with_its_configurations_and_mutants() -> None:
    from model_checks.registry import BUILT_IN, design

    assert "job_wakeup" in BUILT_IN
    assert design("job-wakeup") is DESIGN
    assert set(DESIGN.configs) == {"small", "delayed", "drop", "standard"}
    assert set(MUTANTS) == {"claim-then-listen", "notify-only", "relisten-then-wait"}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_is_caught_as_a_deadlock_with_a_shortest_counterexample(name: str) -> None:
    m = MUTANTS[name]
    result = check(m.spec, m.constants(CONFIGS[m.config]), Options())
    assert result.verdict == "violated"
    assert result.violation is not None and result.violation.name == m.expect == "Deadlock"
    assert result.counterexample is not None and result.counterexample.length == m.length
    shorter = check(m.spec, m.constants(CONFIGS[m.config]), Options(max_depth=m.length - 1))
    assert shorter.verdict == "incomplete"


def test_the_naive_order_loses_the_enqueue_between_the_empty_claim_and_the_listen() -> None:
    m = MUTANTS["claim-then-listen"]
    result = check(m.spec, CONFIGS["small"], Options())
    assert result.counterexample is not None
    steps = [(t.action, t.process) for t in result.counterexample.steps]
    assert steps == [("FindNothingThenListen", "w0"), ("Enqueue", "client"), ("ListenThenWait", "w0")]
    last = result.counterexample.steps[-1].state
    assert last.job["j0"] == jw.PENDING
    assert last.worker["w0"] == Worker(jw.W_WAIT, listening=True, notified=False)


def test_the_poll_alone_repairs_the_naive_order() -> None:
    for name, constants in CONFIGS.items():
        result = check(CLAIM_THEN_LISTEN_POLLING, constants, Options(), config=name)
        assert result.verdict == "holds", (name, result.violation)


def test_listen_first_alone_suffices_for_announced_jobs_but_not_for_delayed_ones() -> None:
    for name in ("small", "drop"):
        assert check(NOTIFY_ONLY, CONFIGS[name], Options()).verdict == "holds"
    for name in ("delayed", "standard"):
        result = check(NOTIFY_ONLY, CONFIGS[name], Options())
        assert result.violation is not None and result.violation.name == "Deadlock"


def test_the_mutants_break_no_invariant_only_progress() -> None:
    for m in MUTANTS.values():
        safety = check(m.spec, m.constants(CONFIGS[m.config]), Options(deadlock=False, liveness=False))
        assert safety.verdict == "holds", m.name


def test_reads_hints_cover_the_invariants() -> None:
    constants = CONFIGS["standard"]
    assert_reads_cover(SPEC, constants, reachable(SPEC, constants))


def test_bad_constants_are_refused_by_the_assumptions() -> None:
    for bad in (Constants(0, (False,)), Constants(1, ()), Constants(1, (False,), drops=-1)):
        with pytest.raises(SpecError, match="SomethingToDo"):
            Instance(SPEC, bad)


def test_no_job_lost_fails_on_an_orphan_a_double_hold_and_a_vanished_job() -> None:
    c = CONFIGS["standard"]
    (s,) = Instance(SPEC, c).initial_states()
    assert jw.NoJobLost(c, s) is None
    running = s._replace(job=s.job.except_("j0", jw.RUNNING), enqueued=1)
    assert "held by no worker" in (jw.NoJobLost(c, running) or "")
    both = running._replace(
        worker=Function.const(c.worker_names(), Worker(jw.W_RUN, listening=True, job="j0"))
    )
    assert "held by ['w0', 'w1']" in (jw.NoJobLost(c, both) or "")
    vanished = s._replace(enqueued=1)
    assert "unborn but the producer enqueued 1" in (jw.NoJobLost(c, vanished) or "")
    done_but_held = s._replace(
        job=s.job.except_("j0", jw.DONE),
        enqueued=1,
        worker=s.worker.except_("w0", Worker(jw.W_RUN, job="j0")),
    )
    assert "is done but ['w0'] hold it" in (jw.NoJobLost(c, done_but_held) or "")
