"""The Akka mailbox's deferred internal steps, per mailbox (``trace_search.DEFERRED``, ``unit``).

The declaration (``DECLARED``) is checked on every reachable state of small configurations, with
a wrong declaration and a unit naming no mailbox, as every per-unit design's is
(``tests/conformance/test_deferred_per_unit.py``); here: a unit that other processes change is
caught, and the deferred search gives the eager one's verdict word for word on scheduled runs of
the bench workload, their prefixes and mutants (each judged as a prefix and as a complete trace).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Mapping

import pytest

from model_checks.conformance.movers import LEAVES_PC, MOVES_UNIT
from model_checks.conformance.verdict import Rejected
from model_checks.designs.akka_mailbox import trace_search as ts
from model_checks.designs.akka_mailbox.bench import akka_scheduled
from model_checks.designs.akka_mailbox.configs import CONFIGS
from model_checks.designs.akka_mailbox.trace import FORMAT, AkkaChecker, without_append_events
from spec import akka_mailbox as am
from spec.language import Spec
from tests.conformance.deferral_checks import Declaration, agree_on_run_and_mutants, live_set_sum

EAGER = dataclasses.replace(FORMAT, make=lambda config: AkkaChecker(config, deferred={}))


# Beside the design's configurations, one where two senders race a close of their mailbox (one of
# them twice): ``small`` and ``compare`` have no close of a mailbox that two senders use, and the
# declaration held there while four of its claims were false here (a re-check that read Scheduled
# does not move past a close of its mailbox, nor a read of a non-empty queue past its cleanUp, nor
# a sender's empty cleanUp past another's append: docs/conformance.md, "Session 34").
CHECKED = {
    **CONFIGS,
    "close-races-sends": dataclasses.replace(
        CONFIGS["small"], script=((0, 0), (0,)), supervise=((("close", 0),),)
    ),
}


def _declared(
    spec: Spec, deferred: Mapping[str, frozenset[str]], moves_to: Mapping[str, frozenset[Hashable]]
) -> Declaration:
    return Declaration(
        spec,
        CHECKED,
        deferred,
        local=ts.local_pc,
        unit=ts.mailbox_of,
        unit_field=ts.UNIT_FIELD,
        moves_to=moves_to,
    )


DECLARED = _declared(am.SPEC, ts.DEFERRED, ts.MOVES_TO)
# The format without ``append`` events: the append is an internal step, deferred too.
DECLARED_WITHOUT_APPEND_EVENTS = _declared(
    ts.SPEC_WITHOUT_APPEND_EVENTS, ts.DEFERRED_WITHOUT_APPEND_EVENTS, ts.MOVES_TO_WITHOUT_APPEND_EVENTS
)


def test_every_internal_action_is_deferred() -> None:
    # The search refuses a process with deferred and eager internal steps; the table covers all.
    assert set(ts.DEFERRED) == {a.name for a in am.SPEC.actions if a.event is None}
    internal = {a.name for a in ts.SPEC_WITHOUT_APPEND_EVENTS.actions if a.event is None}
    assert set(ts.DEFERRED_WITHOUT_APPEND_EVENTS) == internal == set(ts.DEFERRED) | {"Enqueue"}


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("free", "blocked_by"),
    [("SendSeesScheduled", "Close"), ("RegisterSeesMessages", "CleanUp"), ("SenderCleanUpEmpty", "Enqueue")],
)
def test_with_senders_racing_a_close_each_claim_made_before_is_caught(free: str, blocked_by: str) -> None:
    """Each claim the declaration made before it was checked with senders racing a close."""
    wrong = {**ts.DEFERRED, free: ts.DEFERRED[free] - {blocked_by}}
    assert (free, blocked_by) in DECLARED.violations("close-races-sends", wrong)


@pytest.mark.timeout(300)
def test_without_append_events_the_declaration_holds_and_wrong_ones_are_caught() -> None:
    """The append deferred in the format without ``append`` events: checked on every reachable
    state of ``small`` and ``close-races-sends`` (``compare``, 39,894 states, and two larger ones were
    checked too: docs/conformance.md, "Session 34"); an append free to move past another append to
    its mailbox, or past the read of what it wrote, is caught, and so is a wrong ``moves_to``."""
    declared = DECLARED_WITHOUT_APPEND_EVENTS
    assert not declared.violations("small")
    assert not declared.violations("close-races-sends")
    blocked = ts.DEFERRED_WITHOUT_APPEND_EVENTS["Enqueue"]
    for free in ("Enqueue", "Process", "CleanUp"):
        wrong = {**declared.deferred, "Enqueue": blocked - {free}}
        assert ("Enqueue", free) in declared.violations("close-races-sends", wrong), free
    leaves = declared.violations(
        "small", moves_to={**ts.MOVES_TO_WITHOUT_APPEND_EVENTS, "Enqueue": frozenset()}
    )
    assert ("Enqueue", LEAVES_PC) in leaves


@pytest.mark.timeout(300)
def test_a_unit_that_other_processes_change_is_caught() -> None:
    # A unit that counts the executor queue: another process's execute changes it, so the units
    # the search holds would not say what a deferred step is about when it is taken.
    found = DECLARED.violations("small", unit=lambda s, process: (am.Local(s, process)[1], len(s.executor)))
    assert any(other.endswith(MOVES_UNIT) for _, other in found)


@pytest.mark.timeout(300)
def test_a_wrong_moves_to_is_caught() -> None:
    # Claimed: a sender that finds the word Scheduled goes on to the CAS (the search would then
    # pull such senders into every event that a CAS does not move past).
    found = DECLARED.violations("small", moves_to={**ts.MOVES_TO, "SendSeesScheduled": frozenset({am.R_CAS})})
    assert ("SendSeesScheduled", LEAVES_PC) in found


def _senders_then_one_run(n: int) -> list[dict[str, object]]:
    """``n`` senders append to mailbox 0 while its first sender's schedule holds it Scheduled; one
    run processes them all. Each sender's re-check after its append is unlogged."""
    events: list[dict[str, object]] = []
    for k in range(n):
        t = f"p{k}"
        events += [
            {"thread": t, "event": "send", "mailbox": 0, "item": f"m{k}", "result": "ok"},
            {"thread": t, "event": "append", "mailbox": 0, "item": f"m{k}"},
        ]
        if k == 0:
            events += [
                {"thread": t, "event": "schedule", "mailbox": 0},
                {"thread": t, "event": "execute", "mailbox": 0},
            ]
    events.append({"thread": "w0", "event": "run_begin", "mailbox": 0})
    events += [{"thread": "w0", "event": "process", "mailbox": 0, "item": f"m{k}"} for k in range(n)]
    events.append({"thread": "w0", "event": "run_end", "mailbox": 0, "processed": n, "status": 0})
    return [{"seq": seq, **e} for seq, e in enumerate(events, start=1)]


@pytest.mark.timeout(120)
def test_a_process_takes_no_senders_re_check() -> None:
    """``MOVES_TO``: a sender owing its re-check can reach no queue read, so a ``process`` takes the
    worker's steps only (it took every sender's: 2^senders states, at every message)."""
    events = _senders_then_one_run(8)
    checker = AkkaChecker({"workers": 1, "throughput": 8, "logs_append": True})
    first = next(i for i, e in enumerate(events) if e["event"] == "process")
    for ev in events[:first]:
        checker.step(ev)
    assert checker.search._taking("process", ("w:w0",), 0) == {"w:w0"}
    for ev in events[first:-1]:
        checker.step(ev)
        assert len(checker.search.live) == 1
    checker.step(events[-1])  # each sender may re-check before the run's setAsIdle, or after
    assert len(checker.search.live) == 2**7
    checker.finish(complete=True)  # the state where every one re-checked before: found first
    cut = AkkaChecker({"workers": 1, "throughput": 8, "logs_append": True})
    for ev in events[:-2]:  # the last message never processed
        cut.step(ev)
    with pytest.raises(Rejected) as refused:
        cut.finish(complete=True)
    assert refused.value.rule == 6 and "m7" in refused.value.message


@pytest.mark.timeout(300)
def test_reaches_is_any_state_of_the_closure() -> None:
    """``TraceSearch.reaches`` (best first, stopping at the first) says what a look at every
    state of the closure says, after every event, of predicates true nowhere, somewhere, late."""
    events = _senders_then_one_run(4)
    checker = AkkaChecker({"workers": 1, "throughput": 4, "logs_append": True})
    predicates: dict[str, Callable[[am.Vars], bool]] = {
        "done": lambda s: am.Done(checker.c, s) and am.AllSettled(checker.c, s),
        "a sender at its CAS": lambda s: any(pc == am.R_CAS for pc, _, _ in s.producer.values()),
        "never": lambda s: False,
    }
    seen: dict[str, set[bool]] = {name: set() for name in predicates}
    for ev in events:
        checker.step(ev)
        for name, accept in predicates.items():
            found = checker.search.reaches(accept)
            checker.search.states = checker.search.live  # ``reaches`` alone: no closure cached
            assert found == any(accept(s) for s in checker.search.states), (ev, name)
            seen[name].add(found)
    assert seen == {"done": {False, True}, "a sender at its CAS": {False, True}, "never": {False}}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 3])
def test_deferred_and_eager_agree_on_scheduled_runs_and_their_mutants(seed: int) -> None:
    config, events = akka_scheduled(6, seed)
    header = {"trace": "lanecheck", "version": 1, "design": "akka-mailbox", "config": config}
    agree_on_run_and_mutants(FORMAT, EAGER, header, events, ts.UNIT_FIELD)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("seed", [0, 3])
def test_without_append_events_deferred_and_eager_agree(seed: int) -> None:
    config, events = without_append_events(*akka_scheduled(6, seed))
    header = {"trace": "lanecheck", "version": 1, "design": "akka-mailbox", "config": config}
    agree_on_run_and_mutants(FORMAT, EAGER, header, events, ts.UNIT_FIELD)


@pytest.mark.timeout(300)
def test_without_append_events_concurrent_senders_are_one_pending_append_each() -> None:
    """Six senders append to one mailbox while it is scheduled: taken at once, every order of the
    appends made so far is held at every event; deferred, each is one pending step until a
    ``process`` needs it (7 senders took 35 s, 8 beyond a minute; docs/conformance.md, "Session 34")."""
    config, events = without_append_events({"workers": 1, "throughput": 6}, _senders_then_one_run(6))
    held = []
    for deferred in (ts.DEFERRED_WITHOUT_APPEND_EVENTS, {}):
        checker = AkkaChecker(config, deferred=deferred)
        held.append(live_set_sum(checker, [{k: v for k, v in e.items() if k != "seq"} for e in events]))
        checker.finish(complete=True)
    assert held[0] * 20 <= held[1], held


@pytest.mark.timeout(600)
def test_deferred_steps_keep_the_live_set_small() -> None:
    """What the deferral is for: the unlogged tails of independent threads no longer multiply
    the states held."""
    config, events = akka_scheduled(60, 0)
    held = []
    for deferred in (ts.DEFERRED, {}):
        checker = AkkaChecker(config, deferred=deferred)
        held.append(live_set_sum(checker, events))
        checker.finish(complete=True)
    assert held[0] * 4 <= held[1], held
