"""The failed state shared by the reference schedulers: what a fault of their own code leaves.

A scheduler whose own code raised (a bug, a broken runtime or plug-in; never
the user's handler or callback, which are reported and survived) must not lose
what it accepted: it refuses new work, reports every accepted item that was not
run, and its stop returns ``Result.UNKNOWN``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Self

from .results import Result


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


class FailureState(ABC):
    """The failed state's public face, and the context manager, of a scheduler that has one.

    The scheduler keeps its first fault in ``_failure`` and says, in ``_stop_on_exit``, which
    Stop leaving a ``with`` block runs. Leaving a block that did not raise, of a scheduler whose
    Stop answered ``UNKNOWN`` because it failed, raises ``SchedulerFailed``: a ``with`` block
    never hides a failure.
    """

    _failure: SchedulerFailure | None

    @property
    def failed(self) -> bool:
        """True once the scheduler's own code raised (see ``failure``)."""
        return self._failure is not None

    @property
    def failure(self) -> SchedulerFailure | None:
        """The first fault of the scheduler's own code and, after Stop, the items it discarded."""
        return self._failure

    @abstractmethod
    def _stop_on_exit(self, exc_type: type[BaseException] | None) -> Result:
        """The Stop leaving a ``with`` block runs (``exc_type``: what the block raised, or None)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        result = self._stop_on_exit(exc_type)
        failure = self._failure
        if result is Result.UNKNOWN and exc_type is None and failure is not None:
            raise SchedulerFailed(failure.describe()) from failure.error
