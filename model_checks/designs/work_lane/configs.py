"""Configurations of the Work Lane spec, in the manner of TLC ``.cfg`` files.

* ``small`` — CI: seconds; every action of the spec fires (invalid handle, a
  full lane, both Stop modes, a concurrent Stop, a Stop from a callback).
* ``standard`` — what ``lanecheck verify`` checks: three posts per producer, so
  a lane can be re-reserved after going Idle, resubmitted after its budget,
  and refused when full.
* ``large`` — for benchmarks (``lanecheck bench explorer``).
* ``huge`` — for scale-out on Ray (docs/scale-out.md): ``large`` with four workers and a fourth
  post per producer, millions of states, more than a CI job should hold in one process.
* ``compare`` — the workload shared by every design for docs/designs.md: two
  producers posting to two lanes in opposite orders, two workers, budget 2.
"""

from __future__ import annotations

from dataclasses import replace

from spec.work_lane_state import Constants

# Two lanes and two workers, room for two items everywhere, no Stop: the ``compare`` workload,
# which every other configuration changes in a few constants.
COMPARE = Constants(
    lanes=2, workers=2, lane_capacity=2, max_per_drain=2, ready_capacity=2, script=((0, 1), (1, 0))
)

CONFIGS: dict[str, Constants] = {
    "small": replace(
        COMPARE,
        lane_capacity=1,
        script=((0, 0), (1, None)),
        stops=("discard", "drain"),
        callback_stop=True,
    ),
    "standard": replace(
        COMPARE, script=((0, 1, 0), (1, 0, None)), stops=("drain", "discard"), callback_stop=True
    ),
    "large": replace(
        COMPARE,
        max_per_drain=1,
        script=((0, 1, 0), (1, 0, 0)),
        stops=("discard", "drain"),
        callback_stop=True,
    ),
    "huge": replace(
        COMPARE,
        workers=4,
        max_per_drain=1,
        script=((0, 1, 0, 1), (1, 0, 0, 1)),
        stops=("discard", "drain"),
        callback_stop=True,
    ),
    "compare": COMPARE,
}
