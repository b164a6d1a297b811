"""The failed state shared by the reference schedulers: what a fault of their own code leaves.

A scheduler whose own code raised (a bug, a broken runtime or plug-in; never
the user's handler or callback, which are reported and survived) must not lose
what it accepted: it refuses new work, reports every accepted item that was not
run, and its stop returns ``Result.UNKNOWN``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class SchedulerFailure:
    """Why a scheduler failed, and what its stop could not run.

    ``error`` is the first exception raised by the scheduler's own code.
    ``discarded`` lists, as ``(lane or actor, item)``, every accepted item that
    had not run when stop took it out; each was also offered to the
    scheduler's ``on_discard``. Stop fills it.
    """

    error: BaseException
    discarded: list[tuple[int, Any]] = field(default_factory=list)

    def describe(self) -> str:
        return (
            f"the scheduler failed ({type(self.error).__name__}: {self.error}); "
            f"{len(self.discarded)} accepted items were reported discarded"
        )


class SchedulerFailed(RuntimeError):
    """Raised on leaving a ``with`` block (that did not raise) of a scheduler that failed."""
