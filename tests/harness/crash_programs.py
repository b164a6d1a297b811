"""Plain ``threading`` programs on which patch mode crashed, or proved what fails on every real
run (seventh review, session 39; ``test_crash_programs.py``)."""

from __future__ import annotations

import os
import signal
import sys
import threading

from tests.harness.program_kit_main_signal import signal_the_main_thread
from tests.harness.program_threads import run_copies


class LazySettings:
    """A settings proxy made at import whose ``__getattr__`` raises its own error until configured
    (Django's does): patch mode's look for a cache's ``cache_clear`` on every module global raised
    it, "internal error (a bug in lanecheck)"."""

    def __init__(self) -> None:
        self.__dict__["_wrapped"] = None

    def configure(self, **values: int) -> None:
        self.__dict__["_wrapped"] = dict(values)

    def __getattr__(self, name: str) -> int:
        wrapped: dict[str, int] | None = self.__dict__["_wrapped"]
        if wrapped is None:
            raise LookupError(f"settings not configured: {name}")
        return wrapped[name]


settings = LazySettings()
lock = threading.Lock()


def settings_read_under_a_lock() -> None:
    settings.configure(LIMIT=2)
    out: list[int] = []

    def read() -> None:
        with lock:
            out.append(settings.LIMIT)

    run_copies(read)
    assert out == [2, 2]


def handler_installed_in_a_worker() -> None:
    """CPython refuses ``signal.signal`` outside the main thread (every real run fails)."""

    def install() -> None:
        signal.signal(signal.SIGUSR1, signal.SIG_IGN)

    t = threading.Thread(target=install)
    t.start()
    t.join()


def handler_installed_in_main() -> None:
    previous = signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.signal(signal.SIGUSR1, previous)


def signal_sent_to_the_main_thread() -> None:
    """A controlled thread's ident is no OS thread's: ``pthread_kill`` of it crashed the process
    (with no handler for SIGUSR1 a real run ends there: its default action)."""
    signal_the_main_thread(signal.SIGUSR1)


def trace_function_set_in_a_worker() -> None:
    """The program's trace function took the race detector's place: its unlocked update of
    ``counts`` was proved race free (a real run loses updates)."""
    counts = {"n": 0}

    def work() -> None:
        sys.settrace(lambda frame, event, arg: None)
        counts["n"] += 1

    run_copies(work)


def profile_hook_for_new_threads() -> None:
    """``threading.setprofile``'s hook never ran in a controlled thread."""
    threading.setprofile(lambda frame, event, arg: None)
    t = threading.Thread(target=lambda: None)
    t.start()
    t.join()


def watchdog_exits_the_process() -> None:
    """A watchdog that hard-exits when the job is late (its timed wait may time out): lanecheck
    itself ended, silently, with the program's status."""
    done = threading.Event()

    def watchdog() -> None:
        if not done.wait(0.1):
            os._exit(3)

    wd = threading.Thread(target=watchdog, daemon=True)
    wd.start()
    done.set()
    wd.join()
