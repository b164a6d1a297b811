"""Configurations of the pool spec, in the manner of TLC ``.cfg`` files.

* ``small`` — CI (``verify --quick``): min 1, max 2, three jobs arriving (more than the
  maximum), memory for three workers until others take 5 of its 8 units (then one more
  would not fit), one crash, one SIGTERM. Reaches scale-up to the maximum, the gate holding
  a start back (the pool below its minimum after a crash), the idle scale-down, and
  shutdown while draining.
* ``standard`` — what ``lanecheck verify`` checks: min 1, max 3, four jobs, a longer
  grace, two memory changes among three levels.
* ``zero-min`` — min 0: the pool scales to nothing when idle and back up on a job.
"""

from __future__ import annotations

import dataclasses

from spec.job_pool import Constants

SMALL = Constants(arrivals=3)

STANDARD = Constants(max_workers=3, grace=2, memory=10, other=(0, 4, 7), pressure=2, arrivals=4)

CONFIGS: dict[str, Constants] = {
    "small": SMALL,
    "standard": STANDARD,
    "zero-min": dataclasses.replace(SMALL, min_workers=0),
}
