"""Programs for the search's side of the process-state watch (``tests/harness/
test_process_write_search.py``): where a step is found to change process state only when it
ends, and where two orders of such steps reach states the fingerprint cannot tell apart."""

from __future__ import annotations

import locale
import threading

# (its own names, not ``process_state_programs``': that module holds a ``ctypes`` function, which
# the fingerprint cannot read, and the state search would then fingerprint no state)
ORIGINAL_CTYPE = locale.setlocale(locale.LC_CTYPE)
OTHER_CTYPE = "C" if ORIGINAL_CTYPE != "C" else "C.UTF-8"
SEEN: list[str] = []
FIRST = threading.Lock()
SECOND = threading.Lock()
GATE = threading.Lock()


def _ctype() -> str:
    return locale.setlocale(locale.LC_CTYPE)


def _change_between_own_locks() -> None:
    with FIRST:
        pass
    locale.setlocale(locale.LC_CTYPE, OTHER_CTYPE)
    with FIRST:
        pass


def _read_between_own_locks() -> None:
    with SECOND:
        pass
    SEEN.append(_ctype())
    with SECOND:
        pass


def reader_started_first() -> object:
    """The reader is started first and the first schedule runs it to its end before the writer:
    its read step and the writer's change step share no object, and the change is seen only when
    its step ends, after the read was run. Joined writer first, so no race of main's joins puts
    the writer ahead of the reader by chance."""
    SEEN.clear()
    reader = threading.Thread(target=_read_between_own_locks)
    writer = threading.Thread(target=_change_between_own_locks)
    reader.start()
    writer.start()
    writer.join()
    reader.join()
    return SEEN[0]


def _set_ctype(value: str) -> None:
    locale.setlocale(locale.LC_CTYPE, value)


def _read_after_gate() -> None:
    with GATE:
        SEEN.append(_ctype())


def last_writer_read_later() -> object:
    """Two threads set the locale, each to its own value; two more read it once main, having
    joined both, opens the gate. Both orders of the writers end in states equal in every object
    and thread position: only the locale, which the fingerprint does not read, tells them apart. Two
    readers, so that the state after the gate opens has two threads to choose from (a state with
    one is not fingerprinted)."""
    SEEN.clear()
    GATE.acquire()
    writers = [threading.Thread(target=_set_ctype, args=(v,)) for v in (OTHER_CTYPE, ORIGINAL_CTYPE)]
    readers = [threading.Thread(target=_read_after_gate) for _ in range(2)]
    for t in (*writers, *readers):
        t.start()
    for t in writers:
        t.join()
    GATE.release()
    for t in readers:
        t.join()
    return SEEN[0]
