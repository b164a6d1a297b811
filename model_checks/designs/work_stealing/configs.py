"""Configurations of the work-stealing spec, in the manner of TLC ``.cfg`` files.

* ``small`` — CI, seconds: two workers, first arrays of one slot (so the
  second push grows the array and the third would wrap), one root task that
  forks two subtasks and joins them; **TSO** memory.
* ``small-sc`` — the same model under sequential consistency (the fence mutant
  holds here: the bug needs the store buffer).
* ``standard`` — what ``lanecheck verify`` checks: two roots, one forking two
  subtasks, one of which forks again (nested joins, a grow, injector and
  deques in use at once); **TSO**.
* ``large`` — three workers (every victim order), for benchmarks; TSO.
"""

from __future__ import annotations

from dataclasses import replace

from spec.work_stealing import Constants

FORK_TWO = (("a", ("b", "c")), ("b", ()), ("c", ()))

SMALL = Constants(workers=2, capacity=1, tasks=FORK_TWO, roots=("a",), join=True, memory="tso")

CONFIGS: dict[str, Constants] = {
    "small": SMALL,
    "small-sc": replace(SMALL, memory="sc"),
    "standard": replace(
        SMALL, tasks=(("a", ("b", "c")), ("b", ("d",)), ("c", ()), ("d", ()), ("e", ())), roots=("a", "e")
    ),
    "large": replace(SMALL, workers=3),
}
