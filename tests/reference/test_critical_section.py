"""``critical_section``: the interpreter's locks get a class of their own, any other lock one shared
class; both hold the lock for the block and append through ``+``."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

import pytest

from reference.runtime import DEFAULT_RUNTIME, ThreadingRuntime, TokenLock, cheap_lock, token_lock
from reference.worker_pool import critical_section


class _CountingLock:
    """A lock double that records its enters and exits."""

    def __init__(self) -> None:
        self.log: list[str] = []

    def __enter__(self) -> bool:
        self.log.append("enter")
        return True

    def __exit__(self, *exc_info: Any) -> None:
        self.log.append("exit")

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return True

    def release(self) -> None:
        pass


@pytest.mark.parametrize("make", [threading.Lock, threading.RLock])
def test_an_interpreter_lock_is_held_in_the_block_and_released_after(make: Any) -> None:
    lock = make()
    queue: deque[int] = deque()
    section = critical_section(lock, append=queue.append)
    with section:
        assert not _free_elsewhere(lock)
        section + 1
    assert _free_elsewhere(lock)
    assert list(queue) == [1]


def _free_elsewhere(lock: Any) -> bool:
    """Can another thread take ``lock`` now?"""
    got: list[bool] = []

    def attempt() -> None:
        got.append(lock.acquire(blocking=False))
        if got[0]:
            lock.release()

    t = threading.Thread(target=attempt)
    t.start()
    t.join()
    return got[0]


def test_an_interpreter_lock_is_released_when_the_block_raises() -> None:
    lock = threading.Lock()
    with pytest.raises(ValueError), critical_section(lock):
        raise ValueError("inside")
    assert not lock.locked()


def test_any_other_lock_shares_one_class_and_means_the_same() -> None:
    first, second = _CountingLock(), _CountingLock()
    queue: deque[int] = deque()
    a = critical_section(first, append=queue.append)
    b = critical_section(second)
    # no class made per lock: a search's equal states stay equal (the harness's fingerprint)
    assert type(a) is type(b)
    assert type(critical_section(threading.Lock())) is not type(critical_section(threading.Lock()))
    with a:
        a + 7
    with pytest.raises(KeyError), b:
        raise KeyError("inside")
    assert first.log == second.log == ["enter", "exit"]
    assert list(queue) == [7]
    with pytest.raises(TypeError, match="without an append"):
        b + 1


def test_a_token_lock_means_a_lock_and_its_section_holds_it() -> None:
    """``cheap_lock`` under the threading runtime: a ``TokenLock``, with ``threading.Lock``'s meaning."""
    lock = cheap_lock(DEFAULT_RUNTIME, name="lane")
    assert isinstance(lock, TokenLock)
    assert lock.acquire(blocking=False)
    assert not _free_elsewhere(lock) and not lock.acquire(timeout=0.01)
    lock.release()
    with pytest.raises(RuntimeError, match="unlocked"):
        lock.release()  # a second token would let two threads in
    queue: deque[int] = deque()
    section = critical_section(lock, append=queue.append)
    with section:
        assert lock.locked() and not _free_elsewhere(lock)
        section + 3
    with pytest.raises(ValueError), lock:
        raise ValueError("inside")
    assert not lock.locked() and _free_elsewhere(lock)
    assert list(queue) == [3]


def test_a_token_lock_excludes_threads() -> None:
    lock = token_lock()
    section = critical_section(lock)
    inside, most = [0], [0]

    def work() -> None:
        for _ in range(2_000):
            with section:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1 and not lock.locked()


class _OtherRuntime(ThreadingRuntime):
    def lock(self, name: str = "") -> Any:
        return _CountingLock()


def test_another_runtimes_lock_is_kept() -> None:
    assert isinstance(cheap_lock(_OtherRuntime()), _CountingLock)


class _SectionMakingLock(_CountingLock):
    """A runtime's lock that makes its own critical section (as the harness's controlled lock does)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[object] = []

    def critical_section(self, append: Any = None) -> object:
        self.asked.append(append)
        return ("own section", append)


def test_a_lock_that_makes_its_own_section_is_asked_for_it() -> None:
    lock = _SectionMakingLock()
    queue: deque[int] = deque()
    made: list[object] = [critical_section(lock, append=queue.append), critical_section(lock)]
    assert made == [("own section", queue.append), ("own section", None)]
    assert lock.asked == [queue.append, None]
