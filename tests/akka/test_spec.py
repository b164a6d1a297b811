"""The Akka/Pekko mailbox spec: the design holds, every action fires, every mutant is caught shortest."""

from __future__ import annotations

import pytest

from model_checks.designs.akka_mailbox.configs import CONFIGS
from model_checks.designs.akka_mailbox.spec_mutants import MUTANTS
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from spec.akka_mailbox import (
    CLOSED,
    SCHEDULED,
    SPEC,
    SUSPEND_UNIT,
    Constants,
    Init,
    ShowWord,
)
from spec.language import Instance, SpecError
from tests.spec_helpers import assert_holds

pytestmark = pytest.mark.timeout(300)


def test_small_holds_with_every_action_fired() -> None:
    result = assert_holds(SPEC, CONFIGS["small"], "small", states=3355, unfired=[])
    assert "EveryMessageSettles" in result.properties_checked


@pytest.mark.slow
def test_standard_holds() -> None:
    assert_holds(SPEC, CONFIGS["standard"], "standard", states=298_193, unfired=[])


def test_symmetry_reduces_small_safety() -> None:
    full = check(SPEC, CONFIGS["small"], Options(liveness=False))
    reduced = check(SPEC, CONFIGS["small"], Options(symmetry=True, liveness=False))
    assert reduced.verdict == full.verdict == "holds"
    assert reduced.stats.states <= full.stats.states


def test_no_recheck_counterexample_ends_with_the_run_end_that_strands_a_message() -> None:
    mutant = MUTANTS["no-recheck"]
    result = check(mutant.spec, CONFIGS["small"], Options())
    assert result.counterexample is not None
    last = result.counterexample.steps[-1]
    assert last.action == "SetAsIdleNoRecheck"
    assert result.violation is not None and "nobody will register it" in result.violation.reason


def test_no_recheck_also_loses_the_racing_send_with_a_large_budget() -> None:
    """With a budget of 8 the run empties the queue; the loss needs a send racing the run's end."""
    mutant = MUTANTS["no-recheck"]
    c = Constants(mailboxes=1, workers=1, throughput=8, script=((0, 0),))
    assert check(SPEC, c, Options()).verdict == "holds"
    result = check(mutant.spec, c, Options())
    assert result.violation is not None and result.violation.name == "NoLostWakeup"


def test_throughput_zero_processes_one_message_per_run() -> None:
    """Pekko's processMailbox starts with left = max(throughput, 1): 0 and -3 mean one message."""
    for throughput in (0, -3):
        c = Constants(mailboxes=1, workers=1, throughput=throughput, script=((0, 0),))
        assert c.budget() == 1
        result = check(SPEC, c, Options())
        assert result.verdict == "holds"
        result = check(MUTANTS["past-throughput"].spec, c, Options())
        assert result.violation is not None and result.violation.name == "ThroughputRespected"


def test_status_word_encoding_matches_pekko() -> None:
    assert (CLOSED, SCHEDULED, SUSPEND_UNIT) == (1, 2, 4)
    assert ShowWord(0) == "Open"
    assert ShowWord(SCHEDULED | 2 * SUSPEND_UNIT) == "Scheduled+Suspended(2)"
    assert ShowWord(CLOSED) == "Closed"
    state = next(iter(Init(CONFIGS["small"])))
    assert set(state.status.values()) == {0}


def test_bad_script_is_a_configuration_error() -> None:
    with pytest.raises(SpecError):
        Instance(SPEC, Constants(mailboxes=1, workers=1, throughput=1, script=((3,),)))
    with pytest.raises(SpecError):
        Instance(SPEC, Constants(mailboxes=1, workers=1, throughput=1, supervise=((("stop", 0),),)))


def test_header_names_the_parameters() -> None:
    assert CONFIGS["small"].header() == {"mailboxes": 2, "workers": 1, "throughput": 1, "logs_append": True}
