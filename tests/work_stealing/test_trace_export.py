"""Traces of the work-stealing spec, projected onto the trace format, against the validator.

Every covering behaviour and random walk of the correct spec is allowed; every spec mutant's
shortest counterexample is refused where the bug is observable in a trace.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from model_checks.conformance.export import random_walk
from model_checks.designs.work_stealing import DESIGN
from model_checks.designs.work_stealing.configs import CONFIGS
from model_checks.designs.work_stealing.trace_export import export, lines, project
from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from spec.language import Instance
from spec.work_stealing import SPEC
from tests.work_stealing.test_trace import judge_lines


@pytest.mark.timeout(120)
def test_covering_traces_validate_and_show_every_event(tmp_path: Path) -> None:
    written = export(tmp_path / "out", CONFIGS["small"], "ws-small")
    assert written and all(p.name.startswith("ws-small-") for p in written)
    seen: set[tuple[str, object]] = set()
    for path in written:
        text = path.read_text(encoding="utf-8").splitlines()
        verdict = judge_lines(text, complete=True)
        assert verdict.code == 0 and not verdict.prefix, verdict.message
        seen |= {(e["event"], e.get("result")) for e in map(json.loads, text[1:])}
    for wanted in [("take", "lost"), ("steal", "abort"), ("resize", None), ("park", None), ("join", None)]:
        assert wanted in seen


@pytest.mark.timeout(120)
@pytest.mark.parametrize("config", ["standard", "small-sc"])
def test_random_walks_of_the_spec_are_allowed(config: str) -> None:
    c = CONFIGS[config]
    inst = Instance(SPEC, c)
    rng = random.Random(17)
    for _ in range(30):
        walk = random_walk(SPEC, c, rng, max_steps=rng.randrange(5, 400))
        ended = not walk or inst.is_terminal(walk[-1].state)
        verdict = judge_lines(lines(c, project(c, walk)), complete=ended)
        assert verdict.code == 0, verdict.message


# mutant -> (codes it may get: 1 rejected, 2 malformed — a take/steal "ok" of an unwritten slot
# has no task to log), complete (the run is over: the lost wakeup and the deadlock show at the end)
MUTANTS = {
    "take-without-cas": ({1}, False),
    "steal-reads-after-cas": ({1}, False),
    "resize-drops-newest": ({2}, False),
    "stale-mask": ({2}, False),
    "missing-fence": ({1}, False),
    "park-without-recheck": ({1}, True),
    "join-never-helps": ({1}, True),
    "bottom-before-slot": ({2}, False),
    "steal-without-cas": ({1}, False),
    "steal-newest": ({1}, False),
}


def test_every_mutant_is_listed() -> None:
    assert set(MUTANTS) == set(DESIGN.mutants)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_mutant_counterexamples_are_refused(name: str) -> None:
    m = DESIGN.mutant(name)
    c = m.constants(DESIGN.config(m.config))
    cx = check(m.spec, c, Options()).counterexample
    assert cx is not None
    codes, complete = MUTANTS[name]
    verdict = judge_lines(lines(c, project(c, cx.steps)), complete=complete)
    assert verdict.code in codes, verdict.message
    if verdict.code == 2:
        assert "task: null" in verdict.message  # the unwritten slot, named
