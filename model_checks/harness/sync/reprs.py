"""CPython's reprs of the controlled primitives (review 10, row 19): a program that logs or
compares ``repr(cond)``, ``repr(ev)``, ``repr(lock)`` read the harness's class names
(``<model_checks.harness.sync.primitives.Condition object at ...>``). Each is read from the
model's state with no step (a repr is a snapshot, as CPython's reads the fields unlocked), and
the address is the controlled object's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# ``threading.get_ident()`` of a controlled thread (``thread_idents.thread_ident``, which sets it:
# it imports the runtime, so it cannot be imported here); the thread's index until then
OWNER_IDENT: list[Callable[[int], int]] = [lambda tid: tid]


def lock(obj: object, st: Any) -> str:
    """``<unlocked _thread.lock object at 0x...>``; an RLock's names its owner and count."""
    state = "unlocked" if st.owner is None else "locked"
    if not st.reentrant:
        return f"<{state} _thread.lock object at {id(obj):#x}>"
    owner = 0 if st.owner is None else OWNER_IDENT[0](st.owner)
    return f"<{state} _thread.RLock object owner={owner} count={st.count} at {id(obj):#x}>"


def condition(lock_repr: str, st: Any) -> str:
    return f"<Condition({lock_repr}, {len(st.waiters)})>"


def event(obj: object, st: Any) -> str:
    return f"<threading.Event at {id(obj):#x}: {'set' if st.flag else 'unset'}>"


def semaphore(obj: object, st: Any) -> str:
    if st.bound is None:
        return f"<threading.Semaphore at {id(obj):#x}: value={st.value}>"
    return f"<threading.BoundedSemaphore at {id(obj):#x}: value={st.value}/{st.bound}>"


def queue(obj: object, st: Any, simple: bool) -> str:
    kind = "_queue.SimpleQueue" if simple else "queue.LifoQueue" if st.lifo else "queue.Queue"
    return f"<{kind} object at {id(obj):#x}>"
