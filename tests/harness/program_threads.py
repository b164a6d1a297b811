"""Starting a test program's threads and joining them, on plain ``threading`` (patched or not)."""

from __future__ import annotations

import threading
from collections.abc import Callable


def start_and_join(*targets: Callable[[], object]) -> None:
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
