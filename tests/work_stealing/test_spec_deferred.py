"""Work stealing's spec engine defers the steps its traces do not log (``spec_binding.DEFERRED``).

The declaration (which internal steps move right past which, the pcs each leaves its worker at) is
checked on every reachable state of a pool configuration and of a deque-programs one
(``conformance.movers``), wrong ones are caught, and the deferred search gives the same verdict,
word for word, as the search that takes every internal step at once.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from model_checks.designs.work_stealing.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_stealing.rows import mutant_trace
from model_checks.designs.work_stealing.trace.spec_binding import DEFERRED, MOVES_TO, local_pc
from model_checks.designs.work_stealing.trace.spec_search import SPEC_FORMAT, StealingSearch
from spec import work_stealing_open as wo
from tests.conformance.deferral_checks import numbered_lines, reachable_violations, same_verdict
from tests.work_stealing.both_engines import generated, lines_of

pytestmark = pytest.mark.timeout(600)

# A root that forks a child, two workers, one-slot deques (so a push grows them): the pool; and the
# same tree as deque programs (the harness's deque scenarios).
TREE = (("a", ("b",)), ("b", ()))
POOL = wo.OpenConstants(workers=2, capacity=1, tasks=TREE, roots=("a",))
PROGRAMS = dataclasses.replace(POOL, deques=True)


def _violations(c: wo.OpenConstants, blocked: dict[str, frozenset[str]]) -> set[tuple[str, str]]:
    return reachable_violations(wo.OPEN, c, blocked, local=local_pc, moves_to=MOVES_TO, at_least=1_000)


@pytest.mark.parametrize("c", [POOL, PROGRAMS], ids=["pool", "deque-programs"])
def test_the_declaration_holds_on_every_reachable_state(c: wo.OpenConstants) -> None:
    assert not _violations(c, DEFERRED)


def test_wrong_declarations_are_caught() -> None:
    # The owner's bottom store decides whether a thief's load finds the deque empty; a thief's
    # load of top, whether the owner's last-element CAS wins; an unlogged round that found nothing,
    # whether a submit's task was there to see.
    wrong = {**DEFERRED, "TakeBegin": frozenset(), "StealBegin": frozenset(), "QuietRound": frozenset()}
    caught = {("TakeBegin", "StealEmpty"), ("StealBegin", "TakeLast"), ("QuietRound", "Submit")}
    assert caught <= _violations(POOL, wrong)


EAGER = dataclasses.replace(SPEC_FORMAT, make=lambda config: StealingSearch(config, deferred={}))


def _edits(lines: list[str], rng: random.Random) -> list[list[str]]:
    """A few events dropped, and a few neighbours swapped (seqs renumbered)."""
    events = [json.loads(line) for line in lines[1:]]
    out = []
    for i in rng.sample(range(len(events)), min(3, len(events))):
        out.append(events[:i] + events[i + 1 :])
    for i in rng.sample(range(len(events) - 1), min(3, len(events) - 1)):
        out.append([*events[:i], events[i + 1], events[i], *events[i + 2 :]])
    return [numbered_lines(json.loads(lines[0]), edited) for edited in out]


def test_deferred_and_eager_agree_on_generated_traces_and_their_edits() -> None:
    judged = rejected = 0
    for seed in (0, 1, 2, 3, 12, 24):
        workers, capacity, events = generated(seed)
        text = lines_of(events[:60], workers, capacity)
        for edited in [text, *_edits(text, random.Random(seed))]:
            lazy = same_verdict(SPEC_FORMAT, EAGER, edited, complete=False)
            judged += 1
            rejected += not lazy.allowed
    assert judged >= 40 and rejected >= 10


@pytest.mark.parametrize("name", sorted(REFERENCE_MUTANTS))
def test_deferred_and_eager_agree_on_each_reference_mutants_trace(name: str) -> None:
    """Pools' and deque programs' traces (where a push's task is numbered as it begins)."""
    lines, _ = mutant_trace(name)
    for cut in (lines, lines[: len(lines) // 2 + 1]):
        same_verdict(SPEC_FORMAT, EAGER, cut, complete=False)
