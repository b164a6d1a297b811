"""The controlled handles that are not locks or queues: sequentially consistent cells (``rt.atomic``,
``rt.atomic_reference``) and a controlled thread as ``rt.start_thread`` returns it. Each call is
one scheduling point."""

from __future__ import annotations

from typing import Generic, TypeVar

from model_checks.harness.rt.objects import AtomicState, Op, ThreadState
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.sync.timeouts import _wait_refusal

T = TypeVar("T")


class _Cell(Generic[T]):
    """A sequentially consistent cell: load, store, compare_and_swap (by identity or by value)."""

    def __init__(self, ex: Execution, value: T, name: str, by_identity: bool) -> None:
        self._ex = ex
        self._st = ex.new_object(lambda oid: AtomicState(oid, name, value, by_identity=by_identity))

    def load(self) -> T:
        return self._ex.perform(Op("load", self._st, read=True))  # type: ignore[return-value]

    def store(self, value: T) -> None:
        self._ex.perform(Op("store", self._st, (value,)))

    def compare_and_swap(self, expected: T, new: T) -> bool:
        return bool(self._ex.perform(Op("cas", self._st, (expected, new))))


class Atomic(_Cell[int]):
    """A sequentially consistent integer cell: load, store, compare_and_swap, fetch_add, swap."""

    def __init__(self, ex: Execution, value: int = 0, name: str = "") -> None:
        super().__init__(ex, value, name, by_identity=False)

    def fetch_add(self, delta: int) -> int:
        return self._ex.perform(Op("fetch_add", self._st, (delta,)))  # type: ignore[return-value]

    def swap(self, value: int) -> int:
        return self._ex.perform(Op("swap", self._st, (value,)))  # type: ignore[return-value]


class AtomicReference(_Cell[T]):
    """A sequentially consistent reference cell; compare_and_swap compares by identity."""

    def __init__(self, ex: Execution, value: T, name: str = "") -> None:
        super().__init__(ex, value, name, by_identity=True)


class ThreadHandle:
    """A controlled thread, as ``rt.start_thread`` returns it."""

    def __init__(self, ex: Execution, st: ThreadState) -> None:
        self._ex = ex
        self._st = st
        self._shared_join = None if ex.sources else Op("join", st)  # the untimed join, shared (see above)
        # CPython's ``_tstate_lock is None``: a join or ``is_alive`` has seen the thread end
        self._seen_ended = False

    @property
    def name(self) -> str:
        return self._st.name

    @property
    def ident(self) -> int:
        return self._st.tid

    def join(self, timeout: float | None = None) -> None:
        if timeout is not None:
            timeout = max(timeout, 0.0)  # CPython's ``max(timeout, 0)``: NaN stays NaN
            refused = _wait_refusal(timeout)
            if refused is not None:
                # NaN, ``inf``, ``1e10``: CPython's thread-state lock refuses it, even once the
                # thread has finished, unless a join or ``is_alive`` has already seen it end
                if self._seen_ended:
                    return
                raise refused
            self._ex.perform(Op("join", self._st, timeout=timeout))
        else:
            self._ex.perform(self._shared_join or Op("join", self._st))
        if self._st.finished:
            self._seen_ended = True

    def is_alive(self) -> bool:
        alive = bool(self._ex.perform(Op("is_alive", self._st, read=True)))
        if not alive and self._st.finished:
            self._seen_ended = True
        return alive

    def __repr__(self) -> str:
        return f"<controlled thread {self.name}>"
