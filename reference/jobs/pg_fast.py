"""PgStore's common claim and finish as server-side functions: one statement, one round trip each.

``lanecheck_claim_v2`` and ``lanecheck_finish_v2`` (PL/pgSQL) do on the server what the core's
general steps do for the common case, taking the same locks in the same order, and are called as
one autocommit statement each (its own transaction). Why: the general claim and finish are a
dozen statements, each a round trip, and the claim holds its queue's and group's advisory locks
across them; four workers on one budgeted queue then queue for those locks while their clients
are descheduled. Inside one statement the locks are held only while the server runs and commits
it, never across a client round trip. (``_v2``: the finish appends a sample without taking the
array apart, the claim returns the samples as text for the client's cache; ``_v1`` was the same
otherwise.)

**Serialisation (unchanged).** The advisory key locks, not budget rows ``FOR UPDATE``: a group has
a concurrency limit without any budget row, and SERIALIZABLE would abort exactly the contended
claims. The claim locks its candidate ``FOR UPDATE SKIP LOCKED``, then the shared budgets lock,
then ``group:G`` and ``queue:Q`` (a budgeted queue only) in sorted order ('group:' < 'queue:'),
waiting while it holds no other key lock, as ``PgStore._lock_keys``; each later statement of a
VOLATILE PL/pgSQL function takes a fresh snapshot (READ COMMITTED), so the usage it then sums sees
every finish that committed before it got the locks, and none can commit until it does. The
finish locks its row, then the budgets lock, then the same keys **shared**, then leaves
``processing``: a finish only has to wait for the claims counting its key (exclusive), not for
other finishes, which free budget and never read it. (The general path's steps take the keys
exclusive: stricter, just as correct.)

**Only the common case.** The claim function admits the first candidate only when there is no
lease to reap, its cost fits its budgets, checks 1-3 pass (the same integer comparisons as
``admission.decide``) and the handler's profile is within ``admission.profile_bounds`` (checks 5-8
as two bounds). Otherwise it changes nothing and says ``general``: the store runs the core's
general claim, which denies, refuses, reaps and explains. ``empty``: nothing claimable. So the
decisions and the trace events are the core's; ``PgStore`` runs ``decide`` again on what the
function read and raises should they ever disagree.

**Versioned by name.** A changed body gets a new name (``_v3`` next): workers of an older release
keep calling theirs on a shared database while newer ones call the new. ``install`` creates a
function that is missing or whose body differs (a development database), under the schema lock.
"""

from __future__ import annotations

from typing import Any

import psycopg

LOCK_SPACE = 0x4A4F4253
"""The first half of every advisory lock key PgStore takes ('JOBS'): apart from other users'."""
BUDGETS_LOCK = 2
CLAIM_FUNCTION = "lanecheck_claim_v2"
FINISH_FUNCTION = "lanecheck_finish_v2"

_LOCKS = f"""
    PERFORM pg_advisory_xact_lock_shared({LOCK_SPACE}, {BUDGETS_LOCK});
    SELECT b.budget INTO {{qb}} FROM budgets b WHERE b.kind = 'queue' AND b.name = {{row}}.queue;
    IF {{row}}.concurrency_group IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock{{mode}}({LOCK_SPACE}, hashtext('group:' || {{row}}.concurrency_group));
    END IF;
    IF {{qb}} IS NOT NULL THEN
        PERFORM pg_advisory_xact_lock{{mode}}({LOCK_SPACE}, hashtext('queue:' || {{row}}.queue));
    END IF;
"""

USAGE = """
    SELECT COUNT(*) FILTER (WHERE j.concurrency_group = c.concurrency_group),
           COALESCE(SUM(j.cost_units) FILTER (WHERE j.queue = c.queue), 0),
           COALESCE(SUM(j.cost_units) FILTER (WHERE j.concurrency_group = c.concurrency_group), 0)
        INTO running, queue_cost, group_cost
        FROM jobs j WHERE j.state = 'processing'
        AND (j.queue = c.queue OR j.concurrency_group = c.concurrency_group);
"""
"""What runs and is spent on the candidate ``c``'s group and queue: summed under their key locks."""

CLAIM_BODY = (
    """
DECLARE
    c jobs%ROWTYPE;
    peak double precision;
    dur double precision;
    held jsonb;
BEGIN
    status := 'general';
    IF EXISTS (SELECT 1 FROM jobs j WHERE j.state = 'processing' AND j.lease_until < p_now) THEN
        RETURN;  -- a lease to reap: the general claim does it
    END IF;
    SELECT * INTO c FROM jobs j WHERE j.state = 'pending' AND j.available_at <= p_now
        AND (p_queues IS NULL OR j.queue = ANY(p_queues))
        ORDER BY j.priority DESC, j.available_at, j.id LIMIT 1 FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        status := 'empty';
        RETURN;
    END IF;
"""
    + _LOCKS.format(qb="queue_budget", row="c", mode="")
    + """
    SELECT b.budget INTO group_budget FROM budgets b WHERE b.kind = 'group' AND b.name = c.concurrency_group;
    IF c.cost_units > queue_budget OR c.cost_units > group_budget THEN
        RETURN;  -- can never run: the general claim fails it with the reason
    END IF;"""
    + USAGE
    + """    IF (c.concurrency_group IS NOT NULL AND running >= c.concurrency_limit)
        OR queue_cost + c.cost_units > queue_budget OR group_cost + c.cost_units > group_budget THEN
        RETURN;  -- denied (checks 1-3): the general claim denies it, naming the reason
    END IF;
    SELECT p.samples INTO held FROM profiles p WHERE p.handler = c.handler;
    samples := held::text;  -- as text: the client decodes a handler's samples once per change
    IF p_check_profile AND held IS NOT NULL AND jsonb_array_length(held) > 0 THEN
        SELECT max((e->>0)::float8), max((e->>1)::float8) INTO dur, peak
            FROM jsonb_array_elements(held) AS e;
        IF floor(peak)::numeric > p_max_peak OR dur > p_max_duration THEN
            RETURN;  -- checks 5-8 deny: the general claim says which
        END IF;
    END IF;
    UPDATE jobs j SET state = 'processing', attempts = j.attempts + 1, lease_until = p_lease_until,
        lease_token = p_token, worker = p_worker WHERE j.id = c.id RETURNING to_jsonb(j.*) INTO job;
    IF p_events > 0 THEN  -- last: the trace seq's row lock orders traced steps by commit
        UPDATE meta m SET value = m.value + p_events WHERE m.key = 'trace_seq'
            RETURNING m.value - p_events + 1 INTO seq;
    END IF;
    status := 'admitted';
END
"""
)

CLAIM_SQL = f"""
CREATE OR REPLACE FUNCTION {CLAIM_FUNCTION}(
    p_now double precision, p_queues text[], p_lease_until double precision, p_token text,
    p_worker text, p_check_profile boolean, p_max_peak numeric, p_max_duration double precision,
    p_events integer,
    OUT status text, OUT seq bigint, OUT running bigint, OUT queue_cost bigint, OUT group_cost bigint,
    OUT queue_budget bigint, OUT group_budget bigint, OUT samples text, OUT job jsonb)
VOLATILE LANGUAGE plpgsql AS $body${CLAIM_BODY}$body$
"""

FINISH_BODY = (
    """
DECLARE
    c record;
    queue_budget bigint;
BEGIN
    finished := false;
    SELECT j.queue, j.concurrency_group, j.handler INTO c FROM jobs j
        WHERE j.id = p_id AND j.state = 'processing' AND j.lease_token = p_token FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;  -- the lease is no longer this token's: nothing changes
    END IF;
"""
    + _LOCKS.format(qb="queue_budget", row="c", mode="_shared")
    + """
    UPDATE jobs j SET state = 'done', result = p_result, lease_until = NULL, lease_token = NULL
        WHERE j.id = p_id;
    -- The usual cases without taking the array apart: room left, append; full, drop the first
    -- and append. Longer (``p_keep`` was lowered): the last ``p_keep``, as the general path keeps.
    INSERT INTO profiles AS p (handler, samples) VALUES (c.handler, jsonb_build_array(p_sample))
        ON CONFLICT (handler) DO UPDATE SET samples = CASE
            WHEN jsonb_array_length(p.samples) < p_keep THEN p.samples || jsonb_build_array(p_sample)
            WHEN jsonb_array_length(p.samples) = p_keep AND p_keep > 0
                THEN (p.samples - 0) || jsonb_build_array(p_sample)
            ELSE (SELECT COALESCE(jsonb_agg(kept.e ORDER BY kept.n), '[]'::jsonb) FROM (
                SELECT t.e, t.n FROM jsonb_array_elements(p.samples || jsonb_build_array(p_sample))
                    WITH ORDINALITY AS t(e, n) ORDER BY t.n DESC LIMIT p_keep) AS kept) END;
    IF p_events > 0 THEN
        UPDATE meta m SET value = m.value + p_events WHERE m.key = 'trace_seq'
            RETURNING m.value - p_events + 1 INTO seq;
    END IF;
    finished := true;
END
"""
)

FINISH_SQL = f"""
CREATE OR REPLACE FUNCTION {FINISH_FUNCTION}(
    p_id bigint, p_token text, p_result text, p_sample jsonb, p_keep integer, p_events integer,
    OUT finished boolean, OUT seq bigint)
VOLATILE LANGUAGE plpgsql AS $body${FINISH_BODY}$body$
"""

CALL_CLAIM = f"SELECT * FROM {CLAIM_FUNCTION}(%s, %s, %s, %s, %s, %s, %s, %s, %s)"
CALL_FINISH = f"SELECT * FROM {FINISH_FUNCTION}(%s, %s, %s, %s, %s, %s)"


def install(conn: psycopg.Connection[Any]) -> None:
    """Create the functions that are missing or differ, inside the caller's transaction."""
    functions = ((CLAIM_FUNCTION, CLAIM_BODY, CLAIM_SQL), (FINISH_FUNCTION, FINISH_BODY, FINISH_SQL))
    for name, body, create in functions:
        found = conn.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", (name,)).fetchone()
        source = None if found is None else (found["prosrc"] if isinstance(found, dict) else found[0])
        if source != body:
            conn.execute(create)
