"""The event pool's harness scenarios, for `lanecheck explore` and `lanecheck verify`.

The programs are ``scenarios.py``'s (the real ``EventPool`` under the harness); the
seeded reference bugs are ``reference_mutants.py``. The small correct scenarios are
exhaustive under DPOR (execution counts measured on this machine, in the docs of each
row); two threads with more than one work are sampled with PCT ("bounded"). Each
mutant must be caught by DPOR with the failure kind it names.
"""

from __future__ import annotations

from functools import partial

from model_checks.design import Scenario
from model_checks.designs.event_pool.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.event_pool.scenarios import PoolScenario, pool_program
from model_checks.mutant_scenarios import mutant_scenarios
from reference.scheduler import StopMode

# name -> (scenario, DPOR executions when exhaustive, what it shows)
EXHAUSTIVE: dict[str, tuple[PoolScenario, int, str]] = {
    "one-thread": (
        PoolScenario(threads=1, posts=2),
        142,
        "one thread, two works: the second waits in the list",
    ),
    "one-thread-three": (PoolScenario(threads=1, posts=3), 614, "one thread, three works"),
    "one-thread-raises": (
        PoolScenario(threads=1, posts=2, raising=(0,)),
        142,
        "a work that raises is reported to on_error and the thread takes the next",
    ),
    "two-threads": (PoolScenario(threads=2, posts=1), 515, "two threads, one work: idle first"),
    "discard": (
        PoolScenario(threads=1, posts=2, stop=StopMode.DISCARD),
        118,
        "stop(discard): every work ran or was reported discarded",
    ),
    "api-wait": (
        PoolScenario(threads=1, posts=2, api=True),
        504,
        "one work object submitted twice runs two callbacks; wait, close, stop",
    ),
    "api-cancel": (
        PoolScenario(threads=1, posts=2, api=True, cancel=True),
        648,
        "wait_for_callbacks(cancel_pending=True): each submission ran or was cancelled",
    ),
}

SAMPLED: dict[str, tuple[PoolScenario, str]] = {
    "two-threads-busy": (
        PoolScenario(threads=2, posts=3),
        "two threads, three works: a post finds both busy and a finishing thread takes it",
    ),
    "two-threads-api-cancel": (
        PoolScenario(threads=2, posts=3, api=True, cancel=True),
        "two threads, three submissions, wait with cancel",
    ),
    "timeouts": (
        PoolScenario(threads=1, posts=2, wait_timeout=1.0),
        "waits with a (virtual) timeout: a timed-out wait looks at the list and waits again",
    ),
}


# The race detector multiplies these searches' executions by about 20 (session 48, load 5: one
# thread 142 -> 2,668 executions and 0.05 -> 23.5 s; two threads still open at 120 s), so one row
# runs with it (no race: the pool's plain accesses are all under its lock) and the others are
# proofs at synchronisation points only, as their rows say; `verify --quick` runs none with it.
PROVED_RACE_FREE = frozenset({"one-thread"})


def _table() -> dict[str, Scenario]:
    table: dict[str, Scenario] = {}
    for name, (sc, _, doc) in EXHAUSTIVE.items():
        table[name] = Scenario(
            name,
            partial(pool_program, sc),
            doc=doc,
            options={"strategy": "dpor", "time_limit": 120, "races": name in PROVED_RACE_FREE},
            quick_options={"strategy": "dpor", "time_limit": 120, "races": False},
            subject=f"scenario event-pool/{name}",
        )
    for name, (sc, doc) in SAMPLED.items():
        table[name] = Scenario(
            name,
            partial(pool_program, sc),
            expect="bounded",
            doc=doc,
            options={"strategy": "pct", "seed": 1, "max_executions": 500, "races": False},
            quick_options={"strategy": "pct", "seed": 1, "max_executions": 50, "races": False},
            subject=f"scenario event-pool/{name} [pct]",
        )
    table.update(
        mutant_scenarios(
            "event-pool", REFERENCE_MUTANTS, lambda m: partial(pool_program, m.scenario, build=m.build)
        )
    )
    return table


SCENARIOS: dict[str, Scenario] = _table()
