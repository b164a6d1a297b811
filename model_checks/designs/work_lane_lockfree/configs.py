"""Configurations of the lock-free Work Lane spec.

The constants are the lock-based spec's (``spec.work_lane_state.Constants``), so one
configuration means the same workload for both and the two can be compared
(``refinement.py``). There is deliberately no ``compare`` configuration: docs/designs.md
tabulates the designs that have one, and this design is compared with its lock-based
twin by its own check instead.

* ``small`` — CI and ``verify --quick``: the lock-based ``small`` workload; every action fires
  (a post CAS that loses, a reclaim that loses, an owed submission refused after Stop(discard)).
* ``standard`` — ``lanecheck verify``: a budget of one, so a drain ends with items left and
  races the producers' CAS for the reservation, and a lane is re-reserved after going Idle.
* ``refine`` — the workload of the refinement comparison (one lane, two producers, two
  workers, budget one, Stop(discard)): small enough to enumerate every behaviour of both specs;
  ``refine-drain`` the same with Stop(drain).
"""

from __future__ import annotations

from dataclasses import replace

from spec.work_lane_state import Constants

SMALL = Constants(
    lanes=2,
    workers=2,
    lane_capacity=1,
    max_per_drain=2,
    ready_capacity=2,
    script=((0, 0), (1, None)),
    stops=("discard", "drain"),
    callback_stop=True,
)

CONFIGS: dict[str, Constants] = {
    "small": SMALL,
    "standard": replace(SMALL, lane_capacity=2, max_per_drain=1, script=((0, 0, None), (0, 1))),
    "refine": Constants(
        lanes=1,
        workers=2,
        lane_capacity=2,
        max_per_drain=1,
        ready_capacity=1,
        script=((0,), (0,)),
        stops=("discard",),
    ),
}
CONFIGS["refine-drain"] = replace(CONFIGS["refine"], stops=("drain",))
