"""A program's subclass of ``threading.Event`` made at import (tests/harness/test_patch_imported.py):
its stand-in would be a plain event, without the override, so patching refuses it by name."""

from __future__ import annotations

import threading

from tests.harness.program_threads import run_copies


class OnceEvent(threading.Event):
    def set(self) -> None:
        if self.is_set():
            raise RuntimeError("set twice")
        super().set()


once = OnceEvent()


def set_twice() -> None:
    run_copies(once.set)
