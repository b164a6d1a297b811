"""The Akka mailbox's deferred internal steps, per mailbox (``trace_search.DEFERRED``, ``unit``).

The declaration (``DECLARED``) is checked on every reachable state of small configurations, with
a wrong declaration and a unit naming no mailbox, as every per-unit design's is
(``tests/conformance/test_deferred_per_unit.py``); here: a unit that other processes change is
caught, and the deferred search gives the eager one's verdict word for word on scheduled runs of
the bench workload, their prefixes and mutants (each judged as a prefix and as a complete trace).
"""

from __future__ import annotations

import dataclasses

import pytest

from model_checks.conformance.movers import MOVES_UNIT
from model_checks.designs.akka_mailbox.bench import akka_scheduled
from model_checks.designs.akka_mailbox.configs import CONFIGS
from model_checks.designs.akka_mailbox.trace import FORMAT, AkkaChecker
from model_checks.designs.akka_mailbox.trace_search import DEFERRED, UNIT_FIELD, local_pc, mailbox_of
from spec import akka_mailbox as am
from tests.conformance.deferral_checks import Declaration, agree_on_run_and_mutants, live_set_sum

EAGER = dataclasses.replace(FORMAT, make=lambda config: AkkaChecker(config, deferred={}))


DECLARED = Declaration(am.SPEC, CONFIGS, DEFERRED, local=local_pc, unit=mailbox_of, unit_field=UNIT_FIELD)


def test_every_internal_action_is_deferred() -> None:
    # The search refuses a process with deferred and eager internal steps; the table covers all.
    assert set(DEFERRED) == {a.name for a in am.SPEC.actions if a.event is None}


@pytest.mark.timeout(300)
def test_a_unit_that_other_processes_change_is_caught() -> None:
    # A unit that counts the executor queue: another process's execute changes it, so the units
    # the search holds would not say what a deferred step is about when it is taken.
    found = DECLARED.violations("small", unit=lambda s, process: (am.Local(s, process)[1], len(s.executor)))
    assert any(other.endswith(MOVES_UNIT) for _, other in found)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 3])
def test_deferred_and_eager_agree_on_scheduled_runs_and_their_mutants(seed: int) -> None:
    config, events = akka_scheduled(6, seed)
    header = {"trace": "lanecheck", "version": 1, "design": "akka-mailbox", "config": config}
    agree_on_run_and_mutants(FORMAT, EAGER, header, events, UNIT_FIELD)


@pytest.mark.timeout(600)
def test_deferred_steps_keep_the_live_set_small() -> None:
    """What the deferral is for: the unlogged tails of independent threads no longer multiply
    the states held."""
    config, events = akka_scheduled(60, 0)
    held = []
    for deferred in (DEFERRED, {}):
        checker = AkkaChecker(config, deferred=deferred)
        held.append(live_set_sum(checker, events))
        checker.finish(complete=True)
    assert held[0] * 4 <= held[1], held
