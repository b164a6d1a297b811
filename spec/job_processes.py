"""The processes the job specs share (``spec/admission.py``, ``spec/job_wakeup.py``): the workers,
the one producer, and one timer per job named after it (what it times is each spec's: a deferred
job's retry-after, a delayed job coming due)."""

from __future__ import annotations

from typing import Protocol


class JobConstants(Protocol):
    def job_names(self) -> tuple[str, ...]: ...

    def worker_names(self) -> tuple[str, ...]: ...


def Workers(c: JobConstants) -> tuple[str, ...]:
    return c.worker_names()


def Producers(c: JobConstants) -> tuple[str, ...]:
    return ("client",)


def Timers(c: JobConstants) -> tuple[str, ...]:
    return c.job_names()
