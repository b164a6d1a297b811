"""What a program observes that none of its operations shows, learned by a search as it runs.

A thread's ident: a finished worker's is given to the next worker started (``thread_idents``), so
a worker's ``spawn`` (it takes the ident freed last) and another's ``exit`` (it frees its own)
decide which ident a thread has, though they touch different objects. Only a program that reads
an ident can tell: ``thread_idents`` sets ``IDENTS_READ`` when one is read in a controlled thread
(a worker's; the main thread's never changes). From the first execution of a search that read
one, spawns and exits are writes of the pool of idents too (``dependency.ident_op``) and a state
pruned search tells states apart by the pool (``IDENTS_STATE``); the search starts again from the
empty path then (``Observed.switched``), so that one relation holds for all its executions: a
pair taken as commuting in an execution before the switch is never ordered the other way later.
A program that reads no ident pays one test per execution.

An object's lifetime (review 13, F1): which thread drops the last reference to an object decides
where its finalizer runs (a ``__del__``, a weak reference's callback, a ``weakref.finalize``, a
suspended generator's ``finally``) and whether a weak reference to it is dead, but a reference
drop is plain code that no operation shows and no access is recorded for, so two threads' drops
were taken to commute and one order explored. ``race_shadow.observable`` sets ``LIFETIMES`` when
the race detector makes a location that shows the program can observe a lifetime (it looked up
one of ``weakref``'s names, a class of its own with a ``__del__``, an object of one, a generator
with a ``try`` or ``with``). From then on every step of the search is dependent with every
other, as a process-state write is (the search is ``dfs``'s, and sleep sets prune nothing): the
drops are unseen, so nothing finer is sound (a step marked where the object died is another
step in another order, and a sleep set taken with one order's marks prunes the other's). A
program that shows none pays nothing but the test at each location the detector makes."""

from __future__ import annotations

from collections.abc import Callable, Hashable

IDENTS_READ: list[bool] = [False]  # (set by ``thread_idents``; taken by ``Observed.switched``)
LIFETIMES: list[bool] = [False]  # (set by ``race_shadow.observable``)
# what ``race_shadow.observable`` looked at in this search: a dict's or generator's (id, key), an
# object's class by id (no reference kept: a class made in each execution is one statement's,
# whose answer is the same wherever its id comes again)
CHECKED: set[object] = set()


def _no_pool() -> Hashable:
    return None


# the state of the pool of idents in the running execution (``thread_idents`` sets it)
IDENTS_STATE: list[Callable[[], Hashable]] = [_no_pool]


class Observed:
    """One search's knowledge of what its program observes (sticky across its executions)."""

    def __init__(self) -> None:
        IDENTS_READ[0] = LIFETIMES[0] = False
        CHECKED.clear()
        self.idents = False
        self.lifetimes = False

    def switched(self) -> bool:
        """After an execution: did it observe something no execution of the search had? The
        search then starts again from the empty path with the larger relation."""
        new = (IDENTS_READ[0] and not self.idents) or (LIFETIMES[0] and not self.lifetimes)
        self.idents, self.lifetimes = IDENTS_READ[0], LIFETIMES[0]
        return new


__all__ = ["CHECKED", "IDENTS_READ", "IDENTS_STATE", "LIFETIMES", "Observed"]
