"""``bench_pg``: the key-lock mechanism against budget slot rows and counter rows, same run.

The bench runs every phase to the end with no double claim and leaves every slot free and every
counter at zero; and the mechanisms it compares are mechanisms: under a tight budget, claimers
racing on each of them never see more running than the budget and the limit allow (the phase
without key locks is the bench's upper bound, not a mechanism, and is not raced here).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from model_checks.designs.admission import bench_pg
from reference.jobs import Budgets, JobSpec
from reference.jobs.core import PROFILE_SAMPLES
from reference.jobs.pg_store import PgStore


@pytest.mark.timeout(300)
def test_every_phase_drains_its_queue_once_and_the_server_cpu_is_measured(pg_url: str) -> None:
    figures = bench_pg.bench_pg(pg_url, quick=True, jobs=40)
    assert set(figures["phases"]) == set(bench_pg.PHASES)
    for kind, phase in figures["phases"].items():
        assert phase["double_claims"] == 0, kind
        assert phase["jobs_per_s"] > 0, kind
        # The tests' server runs on this machine under our eyes: its CPU is read, not guessed.
        assert phase["server_cpu_us_per_job"] is not None and phase["server_cpu_us_per_job"] >= 0, kind
    assert figures["phases"]["bare"]["ratio_vs_bare"] == 1.0


def test_an_unknown_phase_is_refused_naming_the_choices(pg_url: str) -> None:
    with pytest.raises(ValueError, match="slot-rows"):
        bench_pg.bench_pg(pg_url, quick=True, phases=("bare", "slots"))


QUEUE_BUDGET, GROUP_BUDGET, LIMIT, COST = 5, 4, 3, 2
"""Binding: a group budget of 4 at cost 2 lets two run; the queue budget 5 alone would let two too."""


def _race(kind: str, pg_url: str, run: str) -> tuple[list[BaseException], list[int], list[int]]:
    """Four threads claim and finish 60 jobs through ``kind``'s functions: what went wrong (a
    bound seen broken, in a thread), the running counts seen after each claim, the jobs admitted."""
    import psycopg
    from psycopg.types.json import Jsonb

    queue, group = f"{run}queue", f"{run}group"
    with PgStore(pg_url) as store:
        store.set_budgets(Budgets({queue: QUEUE_BUDGET}, {group: GROUP_BUDGET}))
        for _ in range(60):
            store.enqueue(
                JobSpec(
                    queue, handler="noop", concurrency_group=group, concurrency_limit=LIMIT, cost_units=COST
                )
            )
    bench_pg.install(pg_url, run, ["bare", kind])
    if kind == "slot-rows":  # the budgets in slots: one per cost unit, one per running job
        with psycopg.connect(pg_url, autocommit=True) as conn:
            for key, count in (
                (f"queue:{queue}", QUEUE_BUDGET),
                (f"gcost:{group}", GROUP_BUDGET),
                (f"run:{group}", LIMIT),
            ):
                conn.execute(
                    "INSERT INTO lanecheck_bench_slots SELECT %s, n, NULL FROM generate_series(1, %s) AS n",
                    (key, count),
                )
    else:
        bench_pg.prepare_rows(pg_url, kind, queue, group)
    claim_function, finish_function = bench_pg.function_names(kind, run)
    seen: list[int] = []
    admitted: list[int] = []
    errors: list[BaseException] = []

    def claimer(name: str) -> None:
        try:
            with psycopg.connect(pg_url, autocommit=True) as conn:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and not errors:  # one broken bound ends the race
                    now = time.time()
                    row: Any = conn.execute(
                        f"SELECT status, (job->>'id')::bigint FROM {claim_function}"
                        "(%s, %s, %s, %s, %s, false, NULL, NULL, 0)",
                        (now, [queue], now + 300.0, name, name),
                    ).fetchone()
                    if row[0] == "empty":
                        return
                    if row[0] != "admitted":  # no room (or none free right now): try again
                        continue
                    admitted.append(int(row[1]))
                    # Every committed state a new statement sees: never past the budgets or the limit.
                    running, cost = conn.execute(
                        "SELECT count(*), coalesce(sum(cost_units), 0) FROM jobs"
                        " WHERE state = 'processing' AND queue = %s",
                        (queue,),
                    ).fetchone()  # type: ignore[misc]
                    seen.append(int(running))
                    assert running <= LIMIT and cost <= min(QUEUE_BUDGET, GROUP_BUDGET), (running, cost)
                    time.sleep(0.001)  # hold it a moment: the others race for what is left
                    finished = conn.execute(
                        f"SELECT finished FROM {finish_function}(%s, %s, NULL, %s, %s, 0)",
                        (row[1], name, Jsonb([0.0, 0.0]), PROFILE_SAMPLES),
                    ).fetchone()
                    assert finished is not None and finished[0]
        except BaseException as problem:  # the main thread asserts on it
            errors.append(problem)

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors, seen, admitted


@pytest.mark.timeout(180)
@pytest.mark.parametrize("kind", ["advisory", "late-locks", "slot-rows", "counter-rows"])
def test_racing_claimers_never_exceed_a_tight_budget(kind: str, pg_url: str) -> None:
    run = "race"
    errors, seen, admitted = _race(kind, pg_url, run)
    assert not errors, errors[0]
    assert sorted(admitted) == sorted(set(admitted)) and len(admitted) == 60  # each once, all of them
    assert max(seen) == 2  # the race reached the bound (two at cost 2 fill the group budget)
    bench_pg.check_rows(pg_url, kind, f"{run}queue", f"{run}group")  # every slot back, every counter 0
    bench_pg.uninstall(pg_url, run, [kind])


@pytest.mark.timeout(180)
def test_the_race_catches_claims_that_take_no_lock(pg_url: str) -> None:
    # The same functions without their key-lock statements (the bench's upper bound) let a third
    # job run: the race above would see it. A few tries, since a race may happen not to collide.
    caught: list[AssertionError] = []
    for attempt in range(5):
        errors, _, _ = _race("no-locks", pg_url, f"nolocks{attempt}")
        caught.extend(e for e in errors if isinstance(e, AssertionError))
        if caught:
            break
    assert caught, "five races without key locks never broke a budget or the limit"
