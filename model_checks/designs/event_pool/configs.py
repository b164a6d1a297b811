"""Configurations of the event-pool spec, in the manner of TLC ``.cfg`` files.

* ``small`` — CI, well under a second: two pool threads, three submissions of
  the work object (so a post can find every thread busy), the wait for
  callbacks cancels what is still listed, the last callback raises; waits
  have no timeout.
* ``standard`` — what ``lanecheck verify`` checks: the same with timeouts on
  every pool wait, and the second callback raising.
* ``large`` — three pool threads (every idle-thread choice), for benchmarks.
"""

from __future__ import annotations

from spec.event_pool import Constants

CONFIGS: dict[str, Constants] = {
    "small": Constants(threads=2, submits=3, cancel=True, raises=(2,)),
    "standard": Constants(threads=2, submits=3, cancel=True, timeouts=True, raises=(1,)),
    "large": Constants(threads=3, submits=3, cancel=True, timeouts=True, raises=(1,)),
}
