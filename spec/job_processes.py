"""The processes the job specs share (``spec/admission.py``, ``spec/job_wakeup.py``): the workers,
the one producer, and one timer per job named after it (what it times is each spec's: a deferred
job's retry-after, a delayed job coming due)."""

from __future__ import annotations

from typing import Protocol

from spec.processes import HasWorkers
from spec.processes import Workers as Workers  # re-exported: the job specs


class JobConstants(HasWorkers, Protocol):
    def job_names(self) -> tuple[str, ...]: ...


def Producers(c: JobConstants) -> tuple[str, ...]:
    return ("client",)


def Timers(c: JobConstants) -> tuple[str, ...]:
    return c.job_names()
