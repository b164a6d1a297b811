"""Configurations of the Schedule Gate spec, in the manner of TLC ``.cfg`` files.

* ``small`` — CI: about a second; every action fires (a permit refused, a
  surplus permit returned after a lost CAS from Idle, a full mailbox, a drain
  that spends its budget, FinalizationDeferred decided by the last producer).
* ``standard`` — what ``lanecheck verify`` checks (about 15 s): two workers, so
  two actors drain in parallel, and a third post so that an actor goes Idle,
  returns its permit and is made runnable again.
* ``large`` — for benchmarks (``lanecheck bench explorer``): three posts per
  producer and room for two events per mailbox.
"""

from __future__ import annotations

from dataclasses import replace

from spec.schedule_gate_state import Constants

# The workload shared by every design for docs/designs.md; the others change a few constants.
COMPARE = Constants(
    actors=2, workers=2, permits=2, mailbox_capacity=2, max_per_drain=2, script=((0, 1), (1, 0))
)

CONFIGS: dict[str, Constants] = {
    "small": replace(COMPARE, workers=1, mailbox_capacity=1, max_per_drain=1, script=((0, 1), (0, 1))),
    "standard": replace(COMPARE, mailbox_capacity=1, max_per_drain=1, script=((0, 1, 0), (0, 1))),
    "large": replace(COMPARE, script=((0, 1, 0), (0, 1, 1))),
    "compare": COMPARE,
}
