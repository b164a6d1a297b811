"""Where PostgreSQL admission's time goes: the key-lock mechanism against budget rows, same run.

``bench`` gives one ratio (the store's claim and finish against a bare ``SKIP LOCKED`` loop); this
bench takes the gap apart. Four worker processes drain one queue of no-op jobs per phase, the phases
alternating on one database, each round starting one phase later (each phase its own queue, the
same budgets as ``bench``'s: a queue budget and a group budget of 64 cost units and a concurrency
limit of 8, checked on every claim and never binding for four workers):

* ``bare``: ``bench_loops.pg_bare``, checking nothing (always run: the ratios are to it);
* ``store``: ``PgStore.claim`` and ``finish`` (``bench_loops.admission``);
* ``advisory``: the store's own claim and finish functions (``pg_fast``: advisory key locks, the
  usage summed under them) from a plain connection, nothing decoded (``bench_loops.pg_floor``'s
  client): the server's price of admission without the store's Python;
* ``late-locks``: the same mechanism with the claim's key locks taken last, after the budgets are
  read and the profile checked, just before the usage is summed (the finish is the store's);
* ``no-locks``: the same functions with the key-lock statements removed. **Not a mechanism**: it
  can exceed a budget. It bounds what any way of serialising the budgets could win here;
* ``slot-rows``: each budget and concurrency limit as rows, one per cost unit (one per running
  job for the limit); a claim takes the slots it needs ``FOR UPDATE SKIP LOCKED`` and the finish
  frees them, so concurrent claims never wait for each other;
* ``counter-rows``: one usage row per budgeted queue and per group; a claim adds its cost with a
  guarded ``UPDATE ... WHERE cost + c <= budget AND running < limit`` (READ COMMITTED re-checks the
  guard on the row's newest version after a wait), the finish subtracts it.

The two row mechanisms are written for this bench's case only (one concurrency limit per group,
budgets fixed during the run, no lease expiry): enough to measure what they cost, not a store.
After each of their phases every slot must be free and every counter zero again (checked; a
mismatch raises). Reported per phase: jobs/s (best of the rounds) and its ratio to bare in the same
round set, the workers' CPU per job, the server's CPU per job (the cluster's processes in
``/proc``, when the server runs on this machine and its data directory can be read; else None),
claim latency p50, double claims. ``--statements`` adds pg_stat_statements' top statements per
phase, from the last round, where the extension is installed in that database (reset before each
phase: needs the right to reset; under ``track = top`` the function calls' times include their
lock waits).

``python -m model_checks.designs.admission.bench_pg --store postgresql://... [--quick]
[--phases a,b] [--statements]`` prints it as JSON.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from model_checks.designs.admission import bench_loops
from model_checks.designs.admission.bench import PROCESSES, phase
from reference.jobs.budgets import Budgets
from reference.jobs.location import open_store
from reference.jobs.model import JobSpec

PHASES = ("bare", "store", "advisory", "late-locks", "no-locks", "slot-rows", "counter-rows")
BUDGET = 64
LIMIT = 8

Loop = Callable[[str, str, str, str], None]


def _split(text: str, marker: str) -> tuple[str, str]:
    """``text`` around the first ``marker``; a clear error should ``pg_fast`` no longer have it."""
    at = text.find(marker)
    if at < 0:
        raise RuntimeError(f"bench_pg: pg_fast's function body no longer contains {marker!r}")
    return text[:at], text[at:]


def variant_bodies() -> dict[str, tuple[str, str]]:
    """The claim and finish bodies of each server-side phase but ``advisory`` (pg_fast's own)."""
    from reference.jobs import pg_fast

    claim, finish = pg_fast.CLAIM_BODY, pg_fast.FINISH_BODY
    keyed = "hashtext("  # the key-lock statements, and only they, hash a key name
    no_locks = (
        "\n".join(line for line in claim.splitlines() if keyed not in line),
        "\n".join(line for line in finish.splitlines() if keyed not in line),
    )
    # The claim up to its locks (lease check, first candidate FOR UPDATE SKIP LOCKED), then:
    head, _ = _split(claim, "    PERFORM pg_advisory_xact_lock_shared")
    checks = f"""
    PERFORM pg_advisory_xact_lock_shared({pg_fast.LOCK_SPACE}, {pg_fast.BUDGETS_LOCK});
    SELECT (SELECT b.budget FROM budgets b WHERE b.kind = 'queue' AND b.name = c.queue),
           (SELECT b.budget FROM budgets b WHERE b.kind = 'group' AND b.name = c.concurrency_group)
        INTO queue_budget, group_budget;
    IF c.concurrency_group IS NULL OR queue_budget IS NULL OR group_budget IS NULL THEN
        RETURN;  -- outside this bench's case
    END IF;
    SELECT p.samples INTO held FROM profiles p WHERE p.handler = c.handler;
    samples := held::text;
    IF p_check_profile AND held IS NOT NULL AND jsonb_array_length(held) > 0 THEN
        SELECT max((e->>0)::float8), max((e->>1)::float8) INTO dur, peak
            FROM jsonb_array_elements(held) AS e;
        IF floor(peak)::numeric > p_max_peak OR dur > p_max_duration THEN
            RETURN;
        END IF;
    END IF;
"""
    lease = """
    UPDATE jobs j SET state = 'processing', attempts = j.attempts + 1, lease_until = p_lease_until,
        lease_token = p_token, worker = p_worker WHERE j.id = c.id RETURNING to_jsonb(j.*) INTO job;
    status := 'admitted';
END
"""
    slot_claim = (
        head
        + checks
        + """
    UPDATE lanecheck_bench_slots s SET job = c.id FROM (
        SELECT t.key, t.n FROM (VALUES ('queue:' || c.queue, c.cost_units),
            ('gcost:' || c.concurrency_group, c.cost_units), ('run:' || c.concurrency_group, 1)) AS k(key, n),
        LATERAL (SELECT f.key, f.n FROM lanecheck_bench_slots f WHERE f.key = k.key AND f.job IS NULL
            LIMIT k.n FOR UPDATE SKIP LOCKED) AS t) AS t
        WHERE s.key = t.key AND s.n = t.n;
    GET DIAGNOSTICS running = ROW_COUNT;
    IF running < 2 * c.cost_units + 1 THEN  -- too few free (or all locked): take none
        UPDATE lanecheck_bench_slots s SET job = NULL WHERE s.job = c.id;
        RETURN;
    END IF;
"""
        + lease
    )
    counter_claim = (
        head
        + checks
        + """
    UPDATE lanecheck_bench_usage u SET cost = u.cost + c.cost_units, running = u.running + 1
        WHERE u.key = 'group:' || c.concurrency_group AND u.running < c.concurrency_limit
        AND u.cost + c.cost_units <= group_budget;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    UPDATE lanecheck_bench_usage u SET cost = u.cost + c.cost_units
        WHERE u.key = 'queue:' || c.queue AND u.cost + c.cost_units <= queue_budget;
    IF NOT FOUND THEN  -- the group's row is this transaction's: give its share back
        UPDATE lanecheck_bench_usage u SET cost = u.cost - c.cost_units, running = u.running - 1
            WHERE u.key = 'group:' || c.concurrency_group;
        RETURN;
    END IF;
"""
        + lease
    )
    before, rest = _split(finish, "    PERFORM pg_advisory_xact_lock_shared")
    _, after = _split(rest, "    UPDATE jobs j SET state = 'done'")
    picked = "SELECT j.queue, j.concurrency_group, j.handler INTO c"
    _split(before, picked)  # the finish must read the job's cost too
    finish_head = before.replace(
        picked, "SELECT j.queue, j.concurrency_group, j.handler, j.cost_units INTO c"
    )
    slot_finish = (
        finish_head + "    UPDATE lanecheck_bench_slots s SET job = NULL WHERE s.job = p_id;\n" + after
    )
    counter_finish = (
        finish_head
        # Group first, then queue, as the claim takes them: one UPDATE of both rows locks them in
        # the table's order, and a claim taking them the other way round deadlocks with it.
        + """    UPDATE lanecheck_bench_usage u SET cost = u.cost - c.cost_units, running = u.running - 1
        WHERE u.key = 'group:' || c.concurrency_group;
    UPDATE lanecheck_bench_usage u SET cost = u.cost - c.cost_units WHERE u.key = 'queue:' || c.queue;
"""
        + after
    )
    late_claim = (
        head
        + checks
        + f"""
    PERFORM pg_advisory_xact_lock({pg_fast.LOCK_SPACE}, hashtext('group:' || c.concurrency_group));
    PERFORM pg_advisory_xact_lock({pg_fast.LOCK_SPACE}, hashtext('queue:' || c.queue));"""
        + pg_fast.USAGE
        + """    IF running >= c.concurrency_limit OR queue_cost + c.cost_units > queue_budget
        OR group_cost + c.cost_units > group_budget THEN
        RETURN;
    END IF;
"""
        + lease
    )
    return {
        "late-locks": (late_claim, finish),
        "no-locks": no_locks,
        "slot-rows": (slot_claim, slot_finish),
        "counter-rows": (counter_claim, counter_finish),
    }


_TABLES = """
CREATE TABLE IF NOT EXISTS lanecheck_bench_slots (key TEXT NOT NULL, n INTEGER NOT NULL, job BIGINT,
    PRIMARY KEY (key, n));
CREATE INDEX IF NOT EXISTS lanecheck_bench_slots_job ON lanecheck_bench_slots (job) WHERE job IS NOT NULL;
CREATE TABLE IF NOT EXISTS lanecheck_bench_usage (key TEXT PRIMARY KEY, cost BIGINT NOT NULL,
    running BIGINT NOT NULL)
"""


def function_names(kind: str, run: str) -> tuple[str, str]:
    """The claim and finish functions a phase calls (the store's own for ``advisory``)."""
    from reference.jobs import pg_fast

    if kind == "advisory":
        return pg_fast.CLAIM_FUNCTION, pg_fast.FINISH_FUNCTION
    tag = kind.replace("-", "_")
    return f"lanecheck_bench_claim_{tag}_{run}", f"lanecheck_bench_finish_{tag}_{run}"


def install(url: str, run: str, kinds: list[str]) -> None:
    """This run's variant functions and the row mechanisms' tables."""
    import psycopg

    from reference.jobs import pg_fast

    bodies = variant_bodies()
    claim_head = _split(pg_fast.CLAIM_SQL, "$body$")[0].replace(pg_fast.CLAIM_FUNCTION, "{name}")
    finish_head = _split(pg_fast.FINISH_SQL, "$body$")[0].replace(pg_fast.FINISH_FUNCTION, "{name}")
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in _TABLES.split(";"):
            conn.execute(statement)
        for kind in kinds:
            if kind not in bodies:
                continue
            claim, finish = function_names(kind, run)
            conn.execute(claim_head.format(name=claim) + "$body$" + bodies[kind][0] + "$body$")
            conn.execute(finish_head.format(name=finish) + "$body$" + bodies[kind][1] + "$body$")


def uninstall(url: str, run: str, kinds: list[str]) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for kind in kinds:
            if kind in ("slot-rows", "counter-rows", "no-locks", "late-locks"):
                for name in function_names(kind, run):
                    conn.execute(f"DROP FUNCTION IF EXISTS {name}")
        conn.execute("DELETE FROM lanecheck_bench_slots WHERE key LIKE %s", (f"%{run}%",))
        conn.execute("DELETE FROM lanecheck_bench_usage WHERE key LIKE %s", (f"%{run}%",))


def prepare_rows(url: str, kind: str, queue: str, group: str) -> None:
    """The slots or counters of ``queue`` and ``group`` for a row mechanism's phase, all free."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if kind == "slot-rows":
            for key, count in (
                (f"queue:{queue}", BUDGET),
                (f"gcost:{group}", BUDGET),
                (f"run:{group}", LIMIT),
            ):
                conn.execute("DELETE FROM lanecheck_bench_slots WHERE key = %s", (key,))
                conn.execute(
                    "INSERT INTO lanecheck_bench_slots SELECT %s, n, NULL FROM generate_series(1, %s) AS n",
                    (key, count),
                )
        elif kind == "counter-rows":
            for key in (f"queue:{queue}", f"group:{group}"):
                conn.execute(
                    "INSERT INTO lanecheck_bench_usage VALUES (%s, 0, 0)"
                    " ON CONFLICT (key) DO UPDATE SET cost = 0, running = 0",
                    (key,),
                )


def check_rows(url: str, kind: str, queue: str, group: str) -> None:
    """After a row mechanism's phase: every slot free, every counter zero, or ``RuntimeError``."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if kind == "slot-rows":
            row = conn.execute(
                "SELECT count(*) FROM lanecheck_bench_slots WHERE key = ANY(%s) AND job IS NOT NULL",
                ([f"queue:{queue}", f"gcost:{group}", f"run:{group}"],),
            ).fetchone()
            held = 0 if row is None else int(row[0])
            if held:
                raise RuntimeError(f"slot rows: {held} slots still held after phase {queue}")
        elif kind == "counter-rows":
            rows = conn.execute(
                "SELECT key, cost, running FROM lanecheck_bench_usage WHERE key = ANY(%s)",
                ([f"queue:{queue}", f"group:{group}"],),
            ).fetchall()
            if any(cost != 0 or running != 0 for _, cost, running in rows):
                raise RuntimeError(f"counter rows: {rows} after phase {queue}")


def function_loop(claim_function: str, finish_function: str) -> Loop:
    """``bench_loops.pg_floor``'s client calling ``claim_function`` and ``finish_function``."""

    def loop(url: str, queue: str, out: str, name: str) -> None:
        bench_loops.pg_functions(url, queue, out, name, claim_function, finish_function)

    return loop


def server_pids(url: str) -> list[int] | None:
    """The server's processes (the postmaster and its children), if it runs here and we may look."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        assert row is not None
        postmaster = int((Path(row[0]) / "postmaster.pid").read_text().split()[0])
    except (psycopg.Error, OSError, ValueError, IndexError):
        return None
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(status[1]) == postmaster:
                pids.append(int(entry.name))
    return pids


def server_cpu(url: str) -> float | None:
    """CPU seconds the server's processes used so far (ended backends' included through their
    parent's children's times); None where they cannot be read."""
    pids = server_pids(url)
    if pids is None:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended since it was listed: its time went to the postmaster's children's
        own = int(fields[11]) + int(fields[12])  # utime, stime
        total += own + (int(fields[13]) + int(fields[14]) if pid == pids[0] else 0)
    return total / tick


def statements(url: str, reset: bool) -> list[dict[str, Any]] | None:
    """pg_stat_statements' top statements by time (None without the extension); ``reset`` first."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            if reset:
                conn.execute("SELECT pg_stat_statements_reset()")
                return []
            found = conn.execute(
                "SELECT calls, total_exec_time, toplevel, regexp_replace(query, '\\s+', ' ', 'g')"
                " FROM pg_stat_statements WHERE calls >= 10 ORDER BY total_exec_time DESC LIMIT 10"
            ).fetchall()
    except psycopg.Error:
        return None
    return [
        {"calls": calls, "us_per_call": round(1e3 * ms / calls, 1), "toplevel": top, "query": query[:120]}
        for calls, ms, top, query in found
    ]


def bench_pg(
    store: str,
    quick: bool = False,
    phases: tuple[str, ...] = PHASES,
    with_statements: bool = False,
    jobs: int | None = None,
) -> dict[str, Any]:
    """Each of ``phases`` and ``bare``, alternating (each round one phase later); figures per phase.
    ``jobs`` per phase overrides ``quick``'s 300 and the full run's 2000 (the tests' small run)."""
    unknown = set(phases) - set(PHASES)
    if unknown:
        raise ValueError(f"unknown phases {sorted(unknown)}; choose from {', '.join(PHASES)}")
    kinds = ["bare", *(p for p in phases if p != "bare")]
    jobs = jobs if jobs is not None else 300 if quick else 2000
    rounds = 1 if quick else 3
    run = secrets.token_hex(3)
    group = f"g{run}"
    load_before = os.getloadavg()
    opened = open_store(store, process="bench-pg")  # the store's schema and functions first
    install(store, run, kinds)
    per_phase: dict[str, list[dict[str, Any]]] = {kind: [] for kind in kinds}
    top: dict[str, Any] = {}
    try:
        budgeted = [
            f"{kind}{run}{r}".replace("-", "") for kind in kinds if kind != "bare" for r in range(rounds)
        ]
        opened.set_budgets(Budgets(dict.fromkeys(budgeted, BUDGET), {group: BUDGET}))
        with tempfile.TemporaryDirectory(prefix="lanecheck-bench-pg-") as tmp:
            for r in range(rounds):
                # Each round starts one phase later: a drift in the machine's load does not always
                # favour the same phase (the others' work shares these cores).
                for kind in kinds[r % len(kinds) :] + kinds[: r % len(kinds)]:
                    queue = f"{kind}{run}{r}".replace("-", "")
                    if kind == "bare":
                        spec = JobSpec(queue, handler="noop")
                    else:
                        spec = JobSpec(
                            queue, handler="noop", concurrency_group=group, concurrency_limit=LIMIT
                        )
                    for _ in range(jobs):
                        opened.enqueue(spec)
                    prepare_rows(store, kind, queue, group)
                    loop: Loop
                    if kind == "bare":
                        loop = bench_loops.pg_bare
                    elif kind == "store":
                        loop = bench_loops.admission
                    else:
                        loop = function_loop(*function_names(kind, run))
                    if with_statements:
                        statements(store, reset=True)
                    cpu = server_cpu(store)
                    figures = phase(store, queue, loop, Path(tmp))
                    after = server_cpu(store)
                    figures["server_cpu_us_per_job"] = (
                        None
                        if cpu is None or after is None
                        else 1e6 * (after - cpu) / max(figures["jobs"], 1)
                    )
                    if with_statements and r == rounds - 1:
                        top[kind] = statements(store, reset=False)
                    check_rows(store, kind, queue, group)
                    if figures["jobs"] != jobs:
                        raise RuntimeError(f"phase {queue} ran {figures['jobs']} of {jobs} jobs")
                    per_phase[kind].append(figures)
    finally:
        opened.close()
        uninstall(store, run, kinds)
    bare_rate = max(p["jobs"] / p["seconds"] for p in per_phase["bare"])
    table = {}
    for kind, runs in per_phase.items():
        rate = max(p["jobs"] / p["seconds"] for p in runs)
        server = [p["server_cpu_us_per_job"] for p in runs if p["server_cpu_us_per_job"] is not None]
        latency = sorted(x for p in runs for x in p["latency"])
        table[kind] = {
            "jobs_per_s": round(rate, 1),
            "ratio_vs_bare": round(rate / bare_rate, 3),
            "client_cpu_us_per_job": round(min(p["cpu_us_per_job"] for p in runs), 1),
            "server_cpu_us_per_job": round(min(server), 1) if server else None,
            "claim_p50_ms": round(latency[len(latency) // 2] * 1e3, 3) if latency else 0.0,
            "double_claims": sum(p["double_claims"] for p in runs),
        }
    return {
        "processes": PROCESSES,
        "jobs_per_phase": jobs,
        "rounds": rounds,
        "phases": table,
        "statements": top or None,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m model_checks.designs.admission.bench_pg --store URL [--quick] [--phases ...]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m model_checks.designs.admission.bench_pg")
    parser.add_argument(
        "--store", required=True, help="a postgresql:// URL (any database: names are per run)"
    )
    parser.add_argument("--quick", action="store_true", help="one round of 300 jobs per phase")
    parser.add_argument("--phases", default=",".join(PHASES), help=f"comma-separated, of {', '.join(PHASES)}")
    parser.add_argument(
        "--statements", action="store_true", help="pg_stat_statements' top statements per phase"
    )
    args = parser.parse_args(argv)
    phases = tuple(p for p in args.phases.split(",") if p)
    print(json.dumps(bench_pg(args.store, args.quick, phases, args.statements), indent=2))


if __name__ == "__main__":
    main()
