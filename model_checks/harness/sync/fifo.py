"""The controlled shared FIFO behind ``ControlledRuntime.deque``: ``collections.deque``'s
``append`` / ``popleft`` / ``len``, each one scheduling point.

With real threads these are single atomic C calls on a plain deque (``ThreadingRuntime.deque``),
so code built on them needs no lock of its own; under the harness every one of them is a step of
its own, which is what lets the explorer race a drainer's pop against a producer's publish.
For DPOR, ``len`` is a read (independent of other reads) and the two others are writes; all three
touch only the FIFO itself.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from model_checks.harness.rt.objects import RESUME_NONE, ObjState, Op, Outcome, Raise, Resume

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

T = TypeVar("T")


class FifoState(ObjState):
    kind = "deque"

    def __init__(self, oid: int, name: str) -> None:
        super().__init__(oid, name)
        self.items: deque[object] = deque()

    def apply(self, ex: Execution, op: Op, tid: int, alt: int) -> Outcome:
        kind = op.kind
        if kind == "append":
            self.items.append(op.args[0])
            return RESUME_NONE
        if kind == "popleft":
            if not self.items:
                return Raise(IndexError("pop from an empty deque"))
            return Resume(self.items.popleft())
        if kind == "len":
            return Resume(len(self.items))
        raise NotImplementedError(kind)


class Fifo(Generic[T]):
    """A shared FIFO under the scheduler; ``popleft`` on an empty one raises ``IndexError``."""

    def __init__(self, ex: Execution, name: str = "") -> None:
        self._ex = ex
        st = FifoState(len(ex.objects), name)
        ex.add_object(st)
        self._st = st
        # ``popleft`` and ``len``, shared by their announcements (``sync/primitives.py``)
        shared = not ex.sources
        self._shared_popleft = Op("popleft", st) if shared else None
        self._shared_len = Op("len", st, read=True) if shared else None

    @property
    def name(self) -> str:
        return self._st.name

    def append(self, item: T, /) -> None:
        self._ex.perform(Op("append", self._st, (item,)))

    def popleft(self) -> T:
        return self._ex.perform(self._shared_popleft or Op("popleft", self._st))  # type: ignore[return-value]

    def __len__(self) -> int:
        size = self._ex.perform(self._shared_len or Op("len", self._st, read=True))
        assert isinstance(size, int)
        return size

    def __bool__(self) -> bool:
        return self.__len__() > 0  # (a native call: ``len(self)`` went through Python's protocol)

    @property
    def _items(self) -> deque[Any]:
        # The model's contents, read without a scheduling point: for checks that run between
        # steps (``rt.pending_work`` predicates written against the older lock-guarded queue,
        # which exposed its deque under this name). Prefer ``len(fifo)`` there.
        return self._st.items

    def __repr__(self) -> str:
        return f"<controlled deque {self._st.name}>"
