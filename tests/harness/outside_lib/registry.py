"""An object made at import, imported by name (``from ... import REGISTRY``): its module is
reached through the object's class."""

from __future__ import annotations

import threading


class Registry:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: dict[str, int] = {}

    def add(self, name: str) -> None:
        with self.lock:
            self.names[name] = self.names.get(name, 0) + 1


REGISTRY = Registry()
