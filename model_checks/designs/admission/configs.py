"""Configurations of the admission spec, in the manner of TLC ``.cfg`` files.

The budgets are the seed's (queue ``providers``, ``exports``; groups ``openai``,
``tenant:acme``) scaled down so that two jobs already contend.

* ``small`` — CI (``verify --quick``), a few hundred states: two workers; two
  ``providers`` jobs that fit the queue budget alone but not together (one in
  ``openai``), and an ``exports`` job whose cost alone exceeds its queue's
  budget (refused at enqueue). Reaches the queue-budget and resource denials,
  a lease expiry (one attempt: the job fails ``attempts_exhausted``, or runs
  again while the stale worker's finish is fenced off).
* ``livelock`` — the mutual-deferral setting: two workers, two jobs of cost 2 in
  a queue of budget 3 and nothing else. The claim-first variant livelocks here;
  the design (claim and admit in one transaction) runs both jobs.
* ``standard`` — what ``lanecheck verify`` checks: four jobs over two queues
  and two groups, so that every denial reason is reached in the issue's order —
  ``group_concurrency_limit`` (tenant:acme, limit 1), ``queue_budget``
  (providers, 3), ``group_budget`` (openai, 2), ``resource`` (one) — with a
  lease expiry and two attempts. Every job fits its budgets, so ``Refuse``
  never fires here (``small`` has the refusal).
* ``disabled`` — ``standard`` with admission disabled: the budgets still hold,
  the process-level (resource) checks are skipped, so no ``resource`` denial.
* ``large`` — ``standard`` with three workers, for benchmarks;
  not run by the tests.
* ``release`` — a worker told to stop gives its held job back (one job, two
  workers, one attempt): the job must run again on the attempt it had.
* ``release-expiry`` — the stop comes after the lease expired and another worker
  claimed the job (two attempts): the stale give-back must be fenced off.
"""

from __future__ import annotations

import dataclasses

from spec.admission import Constants, JobSpec

SMALL = Constants(
    workers=2,
    jobs=(
        JobSpec("providers", "openai", 2),
        JobSpec("providers", None, 1),
        JobSpec("exports", None, 9),
    ),
    queue_budgets=(("providers", 2), ("exports", 8)),
    group_limits=(("openai", 1),),
    resource_denials=1,
    expiries=1,
)

LIVELOCK = Constants(
    workers=2,
    jobs=(JobSpec("providers", None, 2), JobSpec("providers", None, 2)),
    queue_budgets=(("providers", 3),),
)

STANDARD = Constants(
    workers=2,
    jobs=(
        JobSpec("providers", "openai", 2),
        JobSpec("providers", "openai", 1),
        JobSpec("providers", "tenant:acme", 2),
        JobSpec("exports", "tenant:acme", 1),
    ),
    queue_budgets=(("providers", 3), ("exports", 8)),
    group_budgets=(("openai", 2), ("tenant:acme", 6)),
    group_limits=(("openai", 2), ("tenant:acme", 1)),
    max_attempts=2,
    expiries=1,
    resource_denials=1,
)

RELEASE = Constants(
    workers=2,
    jobs=(JobSpec("providers", None, 1),),
    queue_budgets=(("providers", 2),),
    releases=1,
)

CONFIGS: dict[str, Constants] = {
    "small": SMALL,
    "livelock": LIVELOCK,
    "standard": STANDARD,
    "disabled": dataclasses.replace(STANDARD, admission_enabled=False),
    "large": dataclasses.replace(STANDARD, workers=3),
    "release": RELEASE,
    "release-expiry": dataclasses.replace(RELEASE, max_attempts=2, expiries=1),
}
