"""The Schedule Gate's deferred drain ends (``trace_search.DEFERRED``, per actor).

The declaration (``DECLARED``) is checked on every reachable state of small configurations, with
a wrong declaration and a unit naming no actor, as every per-unit design's is
(``tests/conformance/test_deferred_per_unit.py``); here: the producers' reads measured and not
kept would hold, and the deferred search gives the eager one's verdict word for word on
harness-scheduled runs of the bench workload, their prefixes and mutants, and a real-thread run.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from model_checks.designs.schedule_gate.bench import gate_scheduled
from model_checks.designs.schedule_gate.configs import CONFIGS
from model_checks.designs.schedule_gate.trace import FORMAT, GateChecker
from model_checks.designs.schedule_gate.trace_search import DEFERRED, UNIT_FIELD, drained_actor, local_pc
from reference.schedule_gate import header
from spec import schedule_gate as sg
from tests.conformance.deferral_checks import (
    Declaration,
    agree_on_run_and_mutants,
    live_set_sum,
    same_verdict,
)

EAGER = dataclasses.replace(FORMAT, make=lambda config: GateChecker(config, deferred={}))

# The producers' reads, deferred too, were measured and not kept (trace_search's docstring): the
# claim they rest on holds, with a producer idle or re-reading the shared pool about every actor.
PRODUCER_READS: dict[str, frozenset[str]] = {
    "SeeIdle": frozenset({"AdmitFirst"}),
    "RefusalSeesRunnable": frozenset(
        {"ReleaseSurplus", "ProducerRelease", "WorkerRelease", "AdmitEnd", "DrainEnd"}
    ),
    "AdmitCasLost": frozenset({"AdmitEnd", "DrainEnd"}),
}


DECLARED = Declaration(sg.SPEC, CONFIGS, DEFERRED, local=local_pc, unit=drained_actor, unit_field=UNIT_FIELD)


def test_the_workers_internal_actions_are_the_deferred_ones() -> None:
    # The search refuses a process with deferred and eager internal steps: a worker's are all
    # deferred, a producer's none.
    internal = {a.name: a.domains[0] for a in sg.SPEC.actions if a.event is None}
    assert set(DEFERRED) == {name for name, domain in internal.items() if domain is sg.Workers}


@pytest.mark.timeout(300)
def test_the_producer_reads_measured_and_not_kept_would_hold() -> None:
    def unit(s: sg.Vars, process: Any) -> int | None:
        if process in s.worker.domain():
            return drained_actor(s, process)
        pc, k, _ = s.producer[process]
        post = c.post_of(process, k)
        return None if pc in (sg.P_IDLE, sg.P_SAW_IDLE) or post is None else post[0]

    c = CONFIGS["small"]
    assert not DECLARED.violations("small", {**DEFERRED, **PRODUCER_READS}, unit=unit)
    # Without the pool's releases of other actors' permits the re-read's claim is wrong.
    narrow = {**PRODUCER_READS, "RefusalSeesRunnable": frozenset({"AdmitEnd", "DrainEnd"})}
    found = DECLARED.violations("small", {**DEFERRED, **narrow}, unit=unit)
    assert {other for name, other in found if name == "RefusalSeesRunnable"} & {
        "ProducerRelease",
        "WorkerRelease",
    }


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("strategy", "seed"), [("random", 0), ("random", 5), ("pct", 1)])
def test_deferred_and_eager_agree_on_scheduled_runs_and_their_mutants(strategy: Any, seed: int) -> None:
    config, events = gate_scheduled(3, seed, strategy)
    assert events[-1]["event"] == "stop_end"
    agree_on_run_and_mutants(FORMAT, EAGER, header(config), events, UNIT_FIELD, keep=1)


@pytest.mark.timeout(600)
def test_deferred_steps_keep_the_live_set_small() -> None:
    """What the deferral is for: drains that end together no longer multiply the states held."""
    config, events = gate_scheduled(300, 0, "random")
    held = []
    for deferred in (DEFERRED, {}):
        checker = GateChecker(config, deferred=deferred)
        held.append(live_set_sum(checker, events))
        assert checker.complete
    assert held[0] * 1.25 <= held[1], held


@pytest.mark.timeout(300)
def test_deferred_and_eager_agree_on_real_thread_runs() -> None:
    from tests.gate.test_conformance import _real_run

    for permits in (1, 3):
        config, events = _real_run(80, permits=permits)
        lines = [json.dumps(header(config))] + [json.dumps(e) for e in events]
        assert same_verdict(FORMAT, EAGER, lines, complete=True).code == 0
        assert same_verdict(FORMAT, EAGER, lines[: len(lines) // 2], complete=False).code == 0
