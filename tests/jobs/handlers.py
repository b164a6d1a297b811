"""Handlers for the worker tests: importable by ``--handlers tests.jobs.handlers``."""

from __future__ import annotations

import time
from typing import Any

from model_checks.designs.admission.soak_worker import append_line


def work(payload: Any) -> Any:
    # Each execution appends its number to a shared log: a job run twice shows up twice.
    log = payload.get("log")
    if log:
        append_line(log, str(payload["n"]))
    time.sleep(payload.get("sleep", 0))
    return {"n": payload.get("n")}


def boom(payload: Any) -> Any:
    raise RuntimeError("boom")


def plan(state: Any) -> Any:
    return {"tasks": list(range(state.get("count", 3)))}


def square(item: Any) -> Any:
    return item * item
