"""Programs for ``test_session45_costs.py``: what each execution must start from, whatever the
harness skips putting back when nothing changed (session 45)."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

from tests.harness.program_threads import run_copies


def draws_from_the_module_generator_itself() -> tuple[float, ...]:
    """Two threads' draws from the ``random`` module's own generator object (not through the
    module's functions, which patch mode gives the execution's generator): each execution starts
    it where the check's first found it, so every execution draws the same two numbers."""
    got: list[float] = []

    def work() -> None:
        got.append(vars(random)["_inst"].random())

    run_copies(work)
    return tuple(sorted(got))


def pool_name() -> str:
    """The first pool's worker name (``ThreadPoolExecutor-0_0`` in each execution)."""
    with ThreadPoolExecutor(1) as ex:
        return ex.submit(lambda: threading.current_thread().name).result()
