"""The Akka-mailbox reference under the deterministic interleaving harness.

The correct reference survives every schedule (within a preemption bound) of the
scenarios that expose the mutants and of the spec's ``small`` configuration; each
reference mutant — one overridden method — fails with the expected kind. The
dropped re-check after ``setAsIdle`` shows as a lost wakeup, as in the spec.
"""

from __future__ import annotations

import pytest

from model_checks.designs.akka_mailbox.configs import CONFIGS
from model_checks.designs.akka_mailbox.reference_mutants import REFERENCE_MUTANTS, program
from model_checks.designs.akka_mailbox.spec_mutants import MUTANTS as SPEC_MUTANTS
from model_checks.harness import Options, check
from reference.akka_mailbox import Dispatcher
from spec.akka_mailbox import Constants

pytestmark = pytest.mark.timeout(120)


@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_reference_mutant_fails_under_the_harness(name: str) -> None:
    mutant = REFERENCE_MUTANTS[name]
    result = check(program(mutant.constants, mutant.build), Options(time_limit=60))
    assert result.verdict == "failed", result.summary()
    assert result.failure is not None and result.failure.kind == mutant.expect, result.report()
    assert mutant.spec_variant in SPEC_MUTANTS


@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_correct_reference_survives_the_same_scenario(name: str) -> None:
    mutant = REFERENCE_MUTANTS[name]
    result = check(program(mutant.constants, Dispatcher), Options(preemption_bound=1, time_limit=60))
    assert result.failure is None, result.report()
    assert result.verdict in ("exhaustive", "bounded")
    assert result.executions > 1


def test_no_recheck_loses_a_racing_send_even_with_a_large_budget() -> None:
    """Budget 8: the run empties the queue, so the loss needs a send between its dequeue and setAsIdle."""
    mutant = REFERENCE_MUTANTS["no-recheck"]
    c = Constants(mailboxes=1, workers=1, throughput=8, script=((0, 0),))
    result = check(program(c, mutant.build), Options(time_limit=60))
    assert result.failure is not None and result.failure.kind == "lost_wakeup", result.summary()
    assert result.failure.preemptions >= 1
    assert check(program(c, Dispatcher), Options(preemption_bound=1)).failure is None


def test_correct_reference_survives_the_small_spec_configuration() -> None:
    result = check(program(CONFIGS["small"], Dispatcher), Options(preemption_bound=1, time_limit=60))
    assert result.failure is None, result.report()
    assert result.verdict in ("exhaustive", "bounded")


def test_single_sender_exhaustive_without_bound() -> None:
    c = Constants(mailboxes=1, workers=1, throughput=1, script=((0,),))
    result = check(program(c, Dispatcher), Options(time_limit=60))
    assert result.verdict == "exhaustive", result.summary()
