"""A program's subclass of ``threading.Event`` made at import (tests/harness/test_patch_imported.py):
its stand-in would be a plain event, without the override, so patching refuses it by name."""

from __future__ import annotations

import threading


class OnceEvent(threading.Event):
    def set(self) -> None:
        if self.is_set():
            raise RuntimeError("set twice")
        super().set()


once = OnceEvent()


def set_twice() -> None:
    setters = [threading.Thread(target=once.set) for _ in range(2)]
    for t in setters:
        t.start()
    for t in setters:
        t.join()
