"""The lock-free lane's deferral tables beyond ``DEFERRED``: the pcs each deferred action leads
to (``MOVES_TO``) with the spec's ``at=`` of its logged actions, checked on every reachable state
of small configurations, wrong tables caught; and what they buy: the live set stays at one state
(tests/conformance/test_deferred_steps.py compares the verdicts with the eager search's)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from model_checks.conformance.movers import EMITS_OTHER, LEAVES_PC, OUTSIDE_AT, violations
from model_checks.designs.work_lane_lockfree.configs import CONFIGS
from model_checks.designs.work_lane_lockfree.trace.checker import DEFERRED, EMITS, MOVES_TO, LockFreeChecker
from spec import work_lane_lockfree as wlf
from spec.language import Spec


def local_pc(s: wlf.Vars, process: Any) -> Any:
    """A process's program counter in the spec's own names (as tests/conformance/test_deferred_steps.py)."""
    for part in (s.producer, s.worker):
        if process in part.domain():
            return part[process][0]
    return s.stopper[process]


def _violations(
    spec: Spec, config: str, moves_to: dict[str, frozenset[Any]], emits: dict[str, dict[str, Any]] = EMITS
) -> set[tuple[str, str]]:
    found, examined = violations(
        spec, CONFIGS[config], DEFERRED, local=local_pc, moves_to=moves_to, emits=emits, limit=1_000_000
    )
    assert examined < 1_000_000  # every reachable state, not a bounded sample
    return found


@pytest.mark.timeout(900)
@pytest.mark.parametrize("config", ["small", "refine"])
def test_moves_to_and_the_logged_actions_at_hold_on_every_reachable_state(config: str) -> None:
    assert not _violations(wlf.SPEC, config, MOVES_TO)


@pytest.mark.timeout(600)
def test_a_wrong_moves_to_is_caught() -> None:
    # Claimed: giving up a drain leaves the worker where drain_begin fires.
    found = _violations(wlf.SPEC, "refine", {**MOVES_TO, "GiveUpDrain": frozenset({wlf.W_TOOK})})
    assert ("GiveUpDrain", LEAVES_PC) in found


@pytest.mark.timeout(600)
def test_a_wrong_at_is_caught() -> None:
    # A spec whose drain_begin claims to fire from an idle worker only.
    actions = tuple(
        dataclasses.replace(a, at=frozenset({wlf.W_IDLE})) if a.name == "DrainBegin" else a
        for a in wlf.SPEC.actions
    )
    found = _violations(dataclasses.replace(wlf.SPEC, actions=actions), "refine", MOVES_TO)
    assert ("DrainBegin", OUTSIDE_AT) in found


@pytest.mark.timeout(600)
def test_a_wrong_emits_is_caught() -> None:
    # Claimed: a refused post returns ok.
    found = _violations(wlf.SPEC, "refine", MOVES_TO, {"PostRefused": {"result": "ok"}})
    assert ("PostRefused", EMITS_OTHER) in found


@pytest.mark.timeout(600)
def test_the_live_set_stays_at_one_state(tmp_path: Path) -> None:
    """Whether each producer passed its unlogged Admit, and whether a Stop was already called, no
    longer stay in the live set: a drain_begin does not expand every producer (``MOVES_TO``), and
    what an expansion adds is dropped below the state it came from (the pruning follows chains)."""
    from model_checks.designs.work_lane_lockfree.trace_bench import write_trace

    path = tmp_path / "t.jsonl"
    write_trace(path, 12)
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    config = json.loads(header)["config"]
    sizes = {}
    for name, moves_to in (("lean", MOVES_TO), ("plain", {})):
        checker = LockFreeChecker(config)
        checker.search.moves_to = dict(moves_to)
        held = []
        for line in lines:
            checker.step(json.loads(line))
            held.append(len(checker.search.live))
        sizes[name] = held
    assert sizes["lean"] == sizes["plain"]  # the tables change the work, not what is held
    assert sum(n == 1 for n in sizes["lean"]) >= 0.9 * len(lines), sizes["lean"]
