"""The Work Lane's generic engine defers the steps its traces do not log (``spec_engine.DEFERRED``).

The declaration (which internal actions move right past which, per lane for a drainer's pops) is
checked on every reachable state of a spec configuration (``conformance.movers``), wrong ones are
caught, the deferred search gives the same verdict, word for word, as the search that takes every
internal step at once on spec behaviours and their mutants, and it holds few states.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Hashable
from dataclasses import replace
from typing import Any

import pytest

from model_checks.conformance import validate_lines
from model_checks.conformance.export import lines, project, random_walk
from model_checks.conformance.lines import validate_with
from model_checks.conformance.movers import violations
from model_checks.designs.work_lane.bench_traces import CONFIG, synthetic_events
from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.designs.work_lane.trace.parse import Config
from model_checks.designs.work_lane.trace.spec_engine import DEFERRED, EMITS, MOVES_TO, SpecEngine
from model_checks.designs.work_lane.trace.spec_format import FORMAT, SpecChecker
from spec import work_lane as wl

pytestmark = pytest.mark.timeout(600)


def local_pc(s: wl.Vars, process: Hashable) -> Hashable:
    """A process's pc in the spec's own names (the engine's ``role_pc`` reads ``p:``/``w:`` names)."""
    name = str(process)
    for part in (s.producer, s.worker):
        if name in part.domain():
            return part[name][0]
    return s.stopper[name]


def drained_lane(s: wl.Vars, process: Hashable) -> Hashable:
    """``binding.drained_lane`` in the spec's own names."""
    if str(process) in s.worker.domain():
        pc, lane, _, _ = s.worker[str(process)]
        return lane if pc == wl.W_DRAIN else None
    return None


def _violations(blocked: dict[str, frozenset[str]], unit: Any = drained_lane) -> set[tuple[str, str]]:
    found, examined = violations(
        wl.SPEC,
        CONFIGS["small"],
        blocked,
        local=local_pc,
        unit=unit,
        unit_field="lane",
        moves_to=MOVES_TO,
        emits=EMITS,
        limit=1_000_000,
    )
    assert examined < 1_000_000  # every reachable state, not a bounded sample
    return found


def test_the_declaration_holds_on_every_reachable_state() -> None:
    assert not _violations(DEFERRED)


def test_wrong_declarations_are_caught() -> None:
    # A pop needs the room it makes before a post that fills the lane; an empty pop cannot follow it.
    found = _violations({**DEFERRED, "Pop": frozenset(), "PopEmpty": frozenset()})
    assert {("Pop", "PostAccepted"), ("PopEmpty", "PostAccepted")} <= found

    # A worker that gives up its drain is about no lane: Stop(discard) waits for every worker.
    def took_lane(s: wl.Vars, process: Hashable) -> Hashable:
        return s.worker[process][1] if process in s.worker.domain() else None

    assert ("GiveUpDrain", "DiscardLane") in _violations(DEFERRED, unit=took_lane)


def test_an_unlogged_stop_call_gives_no_work_item_up() -> None:
    """Stop(discard) takes effect at its logged ``stop_begin`` (session 41): a worker gives its
    work item up (``GiveUpDrain``) only after ``StopBegin``, so the unlogged ``StopCall`` moves
    right past it; until then it did not, and a trace could show a worker beyond the pool taking
    before ``stop_begin`` (corpus ``invalid_r3_take_beyond_workers_before_stop_begin.jsonl``)."""
    found = {pair for pair in _violations({**DEFERRED, "StopCall": frozenset()}) if pair[0] == "StopCall"}
    assert found == {("StopCall", "PostRefused"), ("StopCall", "StopWhileStopping")}


EAGER = dataclasses.replace(FORMAT, make=lambda config: SpecChecker(config, deferred={}))


SETS = [
    CONFIGS["small"],
    CONFIGS["standard"],
    replace(CONFIGS["standard"], script=((0, 0, 1, 0), (1, 1, 0), (0,)), stops=("discard", "drain", "drain")),
    replace(CONFIGS["huge"], stops=("discard",)),
]


def _mutants(events: list[dict[str, Any]], rng: random.Random) -> list[list[dict[str, Any]]]:
    """Each of a few events dropped, and a few neighbours of different threads swapped."""
    out = []
    for i in rng.sample(range(len(events)), min(4, len(events))):
        out.append(events[:i] + events[i + 1 :])
    swaps = [i for i in range(len(events) - 1) if events[i]["thread"] != events[i + 1]["thread"]]
    for i in rng.sample(swaps, min(3, len(swaps))):
        out.append([*events[:i], events[i + 1], events[i], *events[i + 2 :]])
    return out


def test_deferred_and_eager_agree_on_spec_behaviours_and_their_mutants() -> None:
    rng = random.Random(7)
    judged = rejected = 0
    for n in range(24):
        c = SETS[n % len(SETS)]
        events = project(random_walk(wl.SPEC, c, rng))
        for trace in [events, *_mutants(events, rng)]:
            text = list(lines(c, trace))
            lazy = validate_with(FORMAT, text, engine="spec")
            eager = validate_with(EAGER, text, engine="spec")
            assert dataclasses.asdict(lazy) == dataclasses.asdict(eager), text
            # the format judges as `lanecheck validate --engine spec` does
            plain = validate_lines(text, engine="spec")
            assert (lazy.code, lazy.seq, lazy.rule) == (plain.code, plain.seq, plain.rule)
            judged += 1
            rejected += not lazy.allowed
        assert validate_with(FORMAT, list(lines(c, events)), engine="spec").allowed
    assert rejected and rejected < judged  # the corpus holds both kinds


def test_deferred_steps_keep_the_live_set_small() -> None:
    """What the deferral is for: whether each producer passed its unlogged stop-state check and
    each drainer its next pop no longer multiplies the states held."""
    events = [json.loads(json.dumps(e)) for e in synthetic_events(300, 3)]
    held = []
    for deferred in (DEFERRED, {}):
        engine = SpecEngine(Config(**CONFIG), deferred=deferred)
        total = 0
        for ev in events:
            engine.step(ev)
            total += len(engine.search.live)
        held.append(total)
    assert held[0] <= len(events) * 1.2, held  # about one state after each event
    assert held[0] * 10 <= held[1], held
