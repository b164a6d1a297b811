"""The pool threads the event-pool search holds: those the trace has named, and one stand-in for
all the others.

The header's ``threads`` may be 65,536 (docs/trace-format.md, "Limits"); the engines size their
state by what the trace uses, not by what the header declares. A pool thread the trace has not
named has logged nothing, no post picked it and no signal set its event: it is where ``Init`` put
it (about to wait, idle, its event unset), and no internal step moves it (its wait follows its
logged ``wait``). Such threads are interchangeable, and the spec reads them only through "some
thread is idle" (``PostAllBusy``) and "every thread exited" (``Joined``). So the search holds the
named threads, numbered in the order the trace first names them, and while any is left unnamed,
one more: ``SPARE``, which stands for them all (the third outside review, session 47, T5: a
two-event trace under ``threads: 65536`` took 43 s and 437 MB, its verdict listed every thread).
A thread is added in its initial state when first named (``with_thread``); the spare goes when the
last one is named.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, TypeGuard

from spec import event_pool as ep
from spec.function import Function
from spec.win32_events import Event

# Not a pool thread's name (``t`` and a number): no event names it, so no step of the trace's is its.
SPARE = "(never named)"
_POOL_NAME = re.compile(r"t(0|[1-9][0-9]*)", re.ASCII)


@dataclass(frozen=True)
class NamedThreads(ep.Constants):
    """``ep.Constants`` whose threads are ``names`` (``threads`` stays the header's count)."""

    names: tuple[str, ...] = ()

    def thread_names(self) -> tuple[str, ...]:
        return self.names

    def unnamed(self) -> int:
        """How many pool threads the trace has not named yet (the spare stands for them)."""
        return self.threads - len(self.names) + (SPARE in self.names)


def is_pool_thread(name: Any, threads: int) -> TypeGuard[str]:
    """``name`` is one of ``t0`` .. ``t{threads - 1}``, without building the list."""
    m = _POOL_NAME.fullmatch(name) if type(name) is str else None
    return m is not None and int(m.group(1)) < threads


def first(threads: int, **constants: Any) -> NamedThreads:
    """The constants before any event: no thread named, the spare for all of them."""
    return NamedThreads(threads=threads, names=(SPARE,), **constants)


def naming(c: NamedThreads, thread: str) -> NamedThreads:
    """``c`` with ``thread`` named: after the named ones, the spare last while any is left."""
    named = (*[t for t in c.names if t != SPARE], thread)
    return dataclasses.replace(c, names=(*named, SPARE) if c.threads > len(named) else named)


def _over(f: Function[str, Any], names: tuple[str, ...], value: Any, tail: tuple[str, ...] = ()) -> Any:
    """``f`` over ``names`` (then ``tail``): a new key takes ``value``, a key not in them goes."""
    keys = (*names, *tail)
    got = dict(f.items())
    return Function(keys, [got.get(k, value) for k in keys])


def with_thread(c: NamedThreads) -> Any:
    """A state extension to constants ``c``: every thread it names and a state lacks, where ``Init``
    puts it; the spare's entries dropped if it is gone."""
    names = c.names
    auto = Event(manual=c.manual_reset)

    def extend(s: Any) -> Any:
        return s._replace(
            idle=_over(s.idle, names, True),
            events=_over(s.events, names, auto, (ep.STOP,)),
            thread=_over(s.thread, names, ep.Local(ep.WAIT)),
            owed=_over(s.owed, names, 0),
        )

    return extend


def shown(value: Any, unnamed: int) -> Any:
    """``value`` (a state shown, a list of threads) with the spare said as the threads it stands for."""
    word = f"{unnamed} more, never named"
    if value == SPARE:
        return word
    if isinstance(value, dict):
        return {(word if k == SPARE else k): shown(v, unnamed) for k, v in value.items()}
    if isinstance(value, list):
        return [shown(v, unnamed) for v in value]
    return value
