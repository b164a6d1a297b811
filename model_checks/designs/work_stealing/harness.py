"""The work-stealing reference's harness scenarios as `lanecheck verify` and `lanecheck explore` see them.

The programs are ``scenarios.py`` (the real ``ChaseLevDeque`` and pools under the harness);
the seeded reference bugs are ``reference_mutants.py``. Every deque scenario and every
one-worker pool scenario is explored exhaustively by DPOR, with the race detector on (except
``global/fork-join``), so "exhaustive" covers the plain accesses too. Executions (DPOR, races
off / on; the race detector makes the declared fields scheduling points), re-measured with
``lanecheck explore work-stealing/NAME --races/--no-races`` after the take's known-empty
shortcut and Stop's registered wait (docs/work-stealing.md, *Reference*); seconds on the shared
2-core machine at load 10-16 with the harness core uncompiled (about half its speed):

=============================== ====== ====== ========== =========
scenario                        off    on     s (off)    s (on)
=============================== ====== ====== ========== =========
deque/one-element                  104    104      0.6      2.6
deque/push-take-steal            1,454  1,454     10.5     40
deque/resize-while-stealing      1,739  1,739     14.5     38
deque/steal-after-resize         6,098  6,098     45      158
pool/park-wake                     201    507      1.2     --
pool/park-wake-traced              253  2,994*     2.4    197*
pool/fork-join                   1,041  2,896*     8.8    304*
pool/task-raises                   546  1,431*     7.4     83*
pool/stop-discard                  946  1,668*    13.7     79*
global/fork-join                 1,539     --     28       --
=============================== ====== ====== ========== =========

Session 12 (DPOR fixed where it missed traces: docs/harness.md, "dpor-ipb"), ``lanecheck verify``
rows, compiled core, idle: deque/one-element 140, push-take-steal 2,271, resize-while-stealing 2,774,
steal-after-resize 11,247 (races on; the table's 104 / 1,454 / 1,739 / 6,098 were short of
exhaustive); the pool rows unchanged; park-wake-2w 21,023 -> 27,045.

Pool rows races off re-measured after the semaphore sleep, the lock-free injector pop and Stop's
quiet fast path (load 13-16, so the seconds are slow); ``*``: the figure before them. Before them:
park-wake 226 / 541, park-wake-traced 316, fork-join 1,171, task-raises 611, stop-discard 1,668,
global/fork-join 1,851.
(Earlier, compiled core at load 10-13: one-element 112, push-take-steal 1,500,
resize-while-stealing 3,517, park-wake 321 / 912, park-wake-traced 450 / 4,876 (135 s on),
fork-join 1,942 / 5,217 (103 s on), task-raises 952 / 2,527, stop-discard 671 / 671,
global/fork-join 2,954.)

``pool/park-wake-2w`` (two workers park while main submits; Stop(drain) waits, no external join) is
exhaustive under DPOR, races off: 21,023 executions, 27 s at load 5 (uncompiled core). The other
pools with two workers are beyond DPOR in a CI budget (60 s of DPOR at load 2, compiled core:
fork-join-2w 20,209 and global/fork-join-2w 27,795 executions, unfinished; with the root queued
before the workers start and one child, still over 72,000 unfinished: docs/work-stealing.md,
*Tried in session 11*), and state-hash pruning proves them in under two CPU minutes: `lanecheck
explore NAME --strategy states` (sleep sets) is exhaustive over 61,646 stored states
(pool/fork-join-2w) and 26,139 (global/fork-join-2w), held to those counts by
tests/work_stealing/test_two_worker_proofs.py (a soak, outside the suite; docs/work-stealing.md,
*Session 14*). The verify row of global/fork-join-2w is that proof (since session 17);
pool/fork-join-2w's row samples with PCT and says "bounded"; so do both with ``--quick``.

Each mutant must be caught, with the failure kind it names, by DPOR in the correct scenario it
names; the minimised counterexamples have 0 to 3 preemptions (take-without-cas 3,
steal-reads-after-cas 2, steal-without-cas 2, park-without-recheck 2, the others 0).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from model_checks.design import Program, Scenario
from model_checks.designs.work_stealing.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_stealing.scenarios import PoolScenario, deque_program, pool_program
from reference.global_queue_pool import GlobalQueuePool
from reference.scheduler import StopMode
from reference.work_stealing import WorkStealingPool
from reference.work_stealing_deque import ChaseLevDeque

# name -> (owner's script, steals per thief, what it races); capacity 2 everywhere.
DEQUES: dict[str, tuple[tuple[str, ...], tuple[int, ...], str]] = {
    "deque/one-element": (("push", "take"), (1, 1), "owner + 2 thieves race for one element"),
    "deque/push-take-steal": (
        ("push", "push", "take", "take"),
        (1, 1),
        "owner pushes 2 and takes 2 while 2 thieves steal",
    ),
    "deque/resize-while-stealing": (
        ("push", "push", "push", "take"),
        (1, 1),
        "the third push grows the array (or reuses a slot) while 2 thieves steal",
    ),
    "deque/steal-after-resize": (
        ("push", "push", "push"),
        (2, 1),
        "thieves steal all three elements across the grow",
    ),
}

# name -> (pool class, scenario, trace watched, what it shows)
POOLS: dict[str, tuple[type[Any], PoolScenario, bool, str]] = {
    "pool/park-wake": (
        WorkStealingPool,
        PoolScenario(workers=1, children=0),
        False,
        "a worker parks while main submits (the park/wake race); main joins, then Stop(drain)",
    ),
    "pool/park-wake-traced": (
        WorkStealingPool,
        PoolScenario(workers=1, children=0),
        True,
        "the same, traced: no worker steals from itself",
    ),
    "pool/fork-join": (
        WorkStealingPool,
        PoolScenario(workers=1, children=2),
        False,
        "a root spawns 2 children and joins them (join helps: the only worker runs them)",
    ),
    "pool/task-raises": (
        WorkStealingPool,
        PoolScenario(workers=1, children=1, raising_child=True),
        False,
        "a child raises: on_error sees it, the root's join raises TaskFailed",
    ),
    "pool/stop-discard": (
        WorkStealingPool,
        PoolScenario(workers=1, roots=1, children=1, join_roots=False, stop=StopMode.DISCARD),
        False,
        "Stop(discard) races a root and its child: each task runs or is discarded exactly once",
    ),
    "global/fork-join": (
        GlobalQueuePool,
        PoolScenario(workers=1, children=2),
        False,
        "the global-lock baseline: fork/join on one worker",
    ),
}

# Two workers, explored exhaustively by DPOR (races off): the park/wake race with both workers
# parking while main submits; Stop(drain) waits for the task (main does not join it from outside:
# that wait is the one-worker pool/park-wake's, and with it the space is beyond a CI budget).
POOLS_2W_EXHAUSTIVE: dict[str, tuple[type[Any], PoolScenario, str]] = {
    "pool/park-wake-2w": (
        WorkStealingPool,
        PoolScenario(workers=2, children=0, join_roots=False),
        "2 workers park while main submits one task; Stop(drain) waits for it (the park/wake race)",
    ),
}

# Two workers, beyond DPOR's reach: proved by the state-caching search (tests/work_stealing/
# test_two_worker_proofs.py). The verify row of the global-lock pool is that proof (about 26 CPU s);
# the stealing pool's takes about two minutes, so its row samples with PCT and says "bounded".
POOLS_2W: dict[str, tuple[type[Any], PoolScenario, str]] = {
    "pool/fork-join-2w": (
        WorkStealingPool,
        PoolScenario(workers=2, children=2),
        "2 workers, a root forks 2 children: steals, joins that help, parking",
    ),
    "global/fork-join-2w": (
        GlobalQueuePool,
        PoolScenario(workers=2, children=2),
        "the global-lock baseline with 2 workers",
    ),
}
PROVED_BY_STATES = {"global/fork-join-2w"}
# The state search with sleep sets, races off (pruning cuts executions: no race proof); the time
# limit is a guard, the row must end exhaustive.
BY_STATES = {"strategy": "states", "time_limit": 900, "races": False}

EXHAUSTIVE = {"strategy": "dpor", "time_limit": 120, "races": False}
# With the race detector (declared.py names the deliberate GIL-atomic fields): a proof for the
# program as written, plain accesses included. `verify --quick` runs without it.
EXHAUSTIVE_RACES = {"strategy": "dpor", "time_limit": 300, "races": True}
# global/fork-join with races needs more than 120 s on the pure-Python harness core: races off.
NO_RACES = {"global/fork-join"}
SAMPLED = {"strategy": "pct", "seed": 1, "max_executions": 500, "races": False}
SAMPLED_QUICK = {"strategy": "pct", "seed": 1, "max_executions": 50, "races": False}


def program(name: str, build: Callable[..., Any] | None = None) -> Program:
    """The harness program of scenario ``name``, with ``build`` (a deque or pool class) in place
    of the reference's."""
    if name in DEQUES:
        owner, thieves, _ = DEQUES[name]
        return deque_program(owner, thieves, build=build or ChaseLevDeque)
    if name in POOLS:
        cls, sc, watch, _ = POOLS[name]
        return pool_program(sc, build=build or cls, watch=watch)
    cls, sc, _ = POOLS_2W_EXHAUSTIVE[name] if name in POOLS_2W_EXHAUSTIVE else POOLS_2W[name]
    return pool_program(sc, build=build or cls)


def _table() -> dict[str, Scenario]:
    table: dict[str, Scenario] = {}
    for name, doc in [(n, d[2]) for n, d in DEQUES.items()] + [(n, p[3]) for n, p in POOLS.items()]:
        full = EXHAUSTIVE if name in NO_RACES else EXHAUSTIVE_RACES
        table[name] = Scenario(name, partial(program, name), doc=doc, options=full, quick_options=EXHAUSTIVE)
    for name, (_, _, doc) in POOLS_2W_EXHAUSTIVE.items():
        build = partial(program, name)
        table[name] = Scenario(name, build, doc=doc, options=EXHAUSTIVE, quick_options=EXHAUSTIVE)
    for name, (_, _, doc) in POOLS_2W.items():
        if name in PROVED_BY_STATES:
            table[name] = Scenario(
                name,
                partial(program, name),
                doc=doc,
                options=BY_STATES,
                quick_options=SAMPLED_QUICK,
                quick_expect="bounded",
                subject=f"scenario work-stealing/{name} [states; pct with --quick]",
            )
            continue
        table[name] = Scenario(
            name,
            partial(program, name),
            expect="bounded",
            doc=doc,
            options=SAMPLED,
            quick_options=SAMPLED_QUICK,
            subject=f"scenario work-stealing/{name} [pct]",
        )
    for name, m in REFERENCE_MUTANTS.items():
        table[f"mutant/{name}"] = Scenario(
            f"mutant/{name}",
            partial(program, m.scenario, m.build),
            expect=m.expect,
            doc=f"{m.doc} (in {m.scenario})",
            options={"strategy": "dpor", "time_limit": 60},
            subject=f"work-stealing reference --mutant {name}",
        )
    return table


SCENARIOS: dict[str, Scenario] = _table()

__all__ = ["DEQUES", "POOLS", "POOLS_2W", "POOLS_2W_EXHAUSTIVE", "SCENARIOS", "program"]
