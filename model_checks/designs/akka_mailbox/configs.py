"""Configurations of the Akka/Pekko mailbox spec, in the manner of TLC ``.cfg`` files.

* ``small`` — CI: seconds; every action fires (a send to a closed mailbox, a run
  that finds its mailbox closed, a registration refused while suspended, a run
  stopped by a suspension, an emptied queue, a re-check that reschedules).
* ``standard`` — what ``lanecheck verify`` checks: two producers race on one
  mailbox, so the re-check after ``setAsIdle`` and the CAS of ``setAsScheduled``
  both matter; a suspend/resume and a close happen concurrently with sends.
* ``large`` — for benchmarks: three workers and a budget of two.
"""

from __future__ import annotations

from dataclasses import replace

from spec.akka_mailbox import Constants

# Suspend and resume mailbox 0, close mailbox 1: the supervisor of every configuration but ``compare``.
SUPERVISED = Constants(
    mailboxes=2,
    workers=1,
    throughput=1,
    script=((0, 0, 1),),
    supervise=((("suspend", 0), ("resume", 0), ("close", 1)),),
)

CONFIGS: dict[str, Constants] = {
    "small": SUPERVISED,
    "standard": replace(SUPERVISED, workers=2, script=((0, 0), (0, 1))),
    "large": replace(SUPERVISED, workers=3, throughput=2, script=((0, 0, 1), (0, 1))),
    # The workload shared by every design for docs/designs.md.
    "compare": replace(SUPERVISED, workers=2, throughput=2, script=((0, 1), (1, 0)), supervise=()),
}
