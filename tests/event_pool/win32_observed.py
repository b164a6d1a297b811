"""Real threads under ``reference.win32_events``, observed: a test knows a waiter is blocked without
sleeping.

``Observed`` is a runtime whose conditions count the threads inside ``wait`` and record each
``notify``. A waiter enters its condition wait only after registering its wait block under the
kernel lock, and a signaller needs that lock, so "n threads inside wait" means "n registered waits".
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from reference.runtime import ConditionLike, LockLike, ThreadHandle, ThreadingRuntime

BOUND = 10.0  # seconds: the longest a real-thread test waits for anything that must happen


class ObservedCondition(threading.Condition):
    """A real condition that tells ``Observed`` when a thread enters or leaves ``wait``."""

    def __init__(self, lock: LockLike | None, name: str, runtime: Observed) -> None:
        super().__init__(lock)  # type: ignore[arg-type]
        self._name, self._rt = name, runtime

    def wait(self, timeout: float | None = None) -> bool:
        with self._rt.meta:
            self._rt.blocked += 1
            self._rt.meta.notify_all()
        try:
            return super().wait(timeout)
        finally:
            with self._rt.meta:
                self._rt.blocked -= 1
                self._rt.meta.notify_all()

    def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
        raise NotImplementedError("the kernel waits with wait() only")

    def notify(self, n: int = 1) -> None:
        self._rt.notified.append(self._name)
        super().notify(n)

    def notify_all(self) -> None:
        self._rt.notified.append(self._name)
        super().notify(sys.maxsize)  # every waiter, recorded once (not again through notify)


class Observed(ThreadingRuntime):
    def __init__(self) -> None:
        self.meta = threading.Condition()
        self.blocked = 0  # threads inside a kernel condition's wait
        self.notified: list[str] = []  # the kernel conditions notified, in order ("kernel.wait[w0]")
        self.threads: list[ThreadHandle] = []

    def condition(self, lock: LockLike | None = None, name: str = "") -> ConditionLike:
        return ObservedCondition(lock, name, self)

    def start_thread(self, target: Callable[[], None], name: str) -> ThreadHandle:
        handle = super().start_thread(target, name)
        self.threads.append(handle)
        return handle

    def until_blocked(self, n: int) -> None:
        with self.meta:
            assert self.meta.wait_for(lambda: self.blocked == n, BOUND), f"{self.blocked} blocked, not {n}"

    def until(self, predicate: Callable[[], bool], what: str) -> None:
        with self.meta:
            assert self.meta.wait_for(predicate, BOUND), f"not within {BOUND}s: {what}"

    def join_all(self) -> None:
        for t in self.threads:
            t.join(BOUND)
            assert not t.is_alive(), f"{t.name} is still waiting"


def _waiter(rt: Observed, name: str, wait: Callable[[], int], results: dict[str, int]) -> None:
    def body() -> None:
        result = wait()
        with rt.meta:
            results[name] = result
            rt.meta.notify_all()

    rt.start_thread(body, name)


def blocked_waiters(rt: Observed, waits: Sequence[Callable[[], int]]) -> dict[str, int]:
    """Start one thread per wait, each blocked before the next starts (so the queue order is known);
    the result of waiter ``w<i>`` appears under its name when its wait returns."""
    results: dict[str, int] = {}
    for i, wait in enumerate(waits):
        _waiter(rt, f"w{i}", wait, results)
        rt.until_blocked(i + 1)
    return results
