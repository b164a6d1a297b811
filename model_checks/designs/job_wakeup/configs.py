"""Configurations of the job-wakeup spec, in the manner of TLC ``.cfg`` files.

* ``small`` — CI (``verify --quick``): one worker, one job announced by its enqueue. The setting
  of the lost wakeup: the naive order deadlocks here.
* ``delayed`` — one worker, one delayed job: it becomes claimable with no NOTIFY, so only the
  poll finds it (the ``notify-only`` mutant deadlocks here).
* ``drop`` — one worker, one job, one lost listening connection (a server restart).
* ``standard`` — what ``lanecheck verify`` checks: two workers, two announced jobs and a delayed
  one, one lost connection.
"""

from __future__ import annotations

from spec.job_wakeup import Constants

CONFIGS: dict[str, Constants] = {
    "small": Constants(workers=1, jobs=(False,)),
    "delayed": Constants(workers=1, jobs=(True,)),
    "drop": Constants(workers=1, jobs=(False,), drops=1),
    "standard": Constants(workers=2, jobs=(False, False, True), drops=1),
}
