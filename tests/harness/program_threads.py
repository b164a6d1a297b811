"""Starting a test program's threads and joining them, on plain ``threading`` (patched or not).

Each helper names ``threading.Thread`` when it runs, so under patch mode (which replaces the
module's attributes) it makes the controlled class; threads start in the order given, so they
keep the names (``Thread-1``, ``Thread-2``, ...) that reports and replays show."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable


def start_and_join(*targets: Callable[[], object]) -> None:
    """One thread per target, started in order, then joined in the same order."""
    join_all([threading.Thread(target=t) for t in targets])


def run_copies(target: Callable[[], object], count: int = 2) -> None:
    """``count`` threads all running ``target``, started in order and joined."""
    join_all([threading.Thread(target=target) for _ in range(count)])


def join_all(threads: Iterable[threading.Thread]) -> None:
    """Start every thread of ``threads`` in order, then join them in the same order."""
    started = list(threads)
    for t in started:
        t.start()
    for t in started:
        t.join()


def start_then_release(gate: threading.Lock, *targets: Callable[[], object]) -> None:
    """One thread per target, started in order while the caller holds ``gate``; then ``gate``
    released and the threads joined in order (the review programs' window: the explorer's first
    order, main to its join first, passes)."""
    started = [threading.Thread(target=t) for t in targets]
    for t in started:
        t.start()
    gate.release()
    for t in started:
        t.join()
