"""The race detector's shadow memory of one location (``races.RaceDetector.shadow``): its last
write and each thread's last read since, and whether an access is ordered after them (FastTrack's
epochs against the accessing thread's vector clock). ``_race_filter.c`` reads its fields too.

What the detector keeps of the objects of its locations (``Held``).

Its shadow memory knows a location by the object's ``id``, which CPython gives to another object
once the first is freed: a location's history must not outlive its object. It used to keep every
such object alive for the execution instead, which changed the program (review 13, F2, A3, A4,
F4): a finalizer (``__del__``, a weak reference's callback, ``weakref.finalize``) never ran, a
generator's ``finally`` never ran, a connection kept in an object's field was never closed, an
``id`` was never reused. Now an object that takes weak references (most objects of a program's
classes, a generator, a set, a deque) is held weakly, and its locations are forgotten when it is
freed (the weak reference's callback runs before its memory can be given to another object); an
object's ``__dict__``, whose attributes are the locations, goes with that object. Its sites name
it by its type only (``Gone``), so that no report's words keep it either.

Still kept alive for the execution (no weak reference to them can be made): a list, a dict that
is no object's ``__dict__``, a closure's cell, an object with ``__slots__`` and no ``__weakref__``
slot; and what they hold. ``_race_filter.c``'s ``frame_owned`` counts one reference per location
of an exact list, dict or set, and its sites' references: a set held weakly has a weak reference,
which it takes as "not owned"; a ``__dict__`` held through its object carries ``WEAKLY`` among its
keys, a key with no location, which it takes so too (``foreign_write``)."""

from __future__ import annotations

import sys
import types
import weakref
from typing import Any

from model_checks.harness.race_sites import Site
from model_checks.harness.rt import under_test
from model_checks.harness.strategies.observed import CHECKED, LIFETIMES


class Loc:
    """Shadow memory of one location: the last write and each thread's last read since."""

    __slots__ = ("reads", "w_epoch", "w_site", "w_tid")

    def __init__(self) -> None:
        self.w_tid = -1
        self.w_epoch = 0
        self.w_site: Site | None = None
        self.reads: dict[int, tuple[int, Site]] = {}


def at(vc: list[int], i: int) -> int:
    return vc[i] if i < len(vc) else 0


def unordered(loc: Loc, tid: int, vc: list[int], write: bool) -> Site | None:
    """The site of an access to ``loc`` that thread ``tid`` (at vector clock ``vc``) is not ordered
    after: the last write by another thread, or (for a write) another thread's read since. None
    when every such access happens before this one."""
    u = loc.w_tid
    if u >= 0 and u != tid and loc.w_site is not None and loc.w_epoch > at(vc, u):
        return loc.w_site
    if write:
        for r, (epoch, rsite) in loc.reads.items():
            if r != tid and epoch > at(vc, r):
                return rsite
    return None


# a key with no location, listed with a ``__dict__``'s keys while the dict is held through its
# object (the C filter then leaves a loop over it to the handler: it cannot count the references)
WEAKLY = object()


class Gone:
    """What a site keeps of an object held weakly: its type (``race_report.describe``)."""

    __slots__ = ("kind",)

    def __init__(self, kind: type) -> None:
        self.kind = kind


_GONE: dict[type, Gone] = {}


def named(obj: object) -> object:
    """What a site keeps of ``obj``, a location's object: a ``Gone`` if it is held weakly."""
    kind = type(obj)
    if not kind.__weakrefoffset__ or issubclass(kind, type):  # (a class is named by its name)
        return obj
    gone = _GONE.get(kind)
    if gone is None:
        gone = _GONE[kind] = Gone(kind)
    return gone


# what the program looks up to make a weak reference of its own, or a finalizer (by id: a weak
# mapping's class compares by identity, but a program's dict may hold anything)
_WEAK_API = frozenset(
    map(
        id,
        (
            weakref,
            weakref.ref,
            weakref.proxy,
            weakref.finalize,
            weakref.WeakMethod,
            weakref.WeakSet,
            weakref.WeakValueDictionary,
            weakref.WeakKeyDictionary,
        ),
    )
)


def _finalizes(kind: type) -> bool:
    """Has class ``kind`` a ``__del__`` of code under test?"""
    code = getattr(getattr(kind, "__del__", None), "__code__", None)
    return isinstance(code, types.CodeType) and under_test._program_file(code.co_filename)


def checked_as(obj: object, key: object) -> object:
    """What ``CHECKED`` keeps of a look at location ``(obj, key)``: ids and a ``str`` key only, never
    another object (session 48, review 14 C3: a dict keyed by futures put each execution's
    ``Future`` there, and through it that execution's scheduler and threads, so a search of N
    executions kept N of them to its end; the collector's full passes and the process's exit
    walked them all, 17 s after a 30 s limit). Only a ``str`` key's look-up can find a name of
    ``weakref`` or a class; a generator's answer is its code's, whatever the key."""
    kind = type(obj)
    if kind is dict:
        return (id(obj), key if type(key) is str else None)
    if kind is types.GeneratorType:
        return (id(obj), None)
    return id(kind)


def observable(obj: object, key: object) -> None:
    """A location ``(obj, key)`` was made: does it show that the program can observe an object's
    lifetime (``strategies/observed.py``)? A look-up of one of ``weakref``'s names (a module's
    ``__dict__`` and its key) or of a class of the program's with a ``__del__``, a field of an
    object of such a class, a generator whose code has a ``try`` or ``with`` (its ``finally`` runs
    where it is dropped). Sets ``LIFETIMES``; the harness's own code makes no location. What it
    looked at goes into ``CHECKED`` (a search's: its executions make the same locations again)."""
    kind = type(obj)
    CHECKED.add(checked_as(obj, key))
    if kind is dict:
        value = obj.get(key) if type(key) is str else None  # type: ignore[attr-defined]
        found = id(value) in _WEAK_API or (type(value) is type and _finalizes(value))
    elif kind is types.GeneratorType:
        code = obj.gi_code  # type: ignore[attr-defined]
        # (a library's generator does not count: ``as_completed``'s ``finally`` runs where the
        # program drops it, but does only the library's own bookkeeping)
        found = bool(code.co_exceptiontable) and under_test._program_file(code.co_filename)
    else:
        found = _finalizes(kind)
    if found:
        LIFETIMES[0] = True


class Held:
    """The detector's references to the objects of its locations: strong (``alive``) or weak."""

    def __init__(self, shadow: dict[tuple[int, object], Any], keys: dict[int, list[object]]) -> None:
        self.shadow = shadow
        self.keys = keys
        self.alive: list[object] = []  # objects with a location that take no weak reference
        self.strong: dict[int, list[object]] = {}  # their ids -> their locations' keys
        self.first: dict[int, int] = {}  # their ids -> where in ``alive`` each is first
        self.kept: set[int] = set()  # the ids of those kept for another reason (``keep``)
        # id -> the weak reference keeping its locations' keys (forgotten when it is freed)
        self.weak: dict[int, tuple[weakref.ref[Any], list[object]]] = {}
        self.of_ref: dict[int, int] = {}  # id of such a weak reference -> its object's id
        self.forget = self._forget  # (one bound method for every weak reference)
        # ``release_unheld``'s last look: each id of ``first`` -> its object's reference count
        # then. Whether nothing but the detector holds an object depends only on its count, its
        # locations and its locations' sites: one whose count is as it was and whose locations
        # and sites are not ``touched`` since is held as it was, and is not looked at again.
        self.counts: dict[int, int] = {}
        self.touched: set[int] = set()  # ids of strong objects with a location or site made since

    def hold(self, obj: object, oid: int, key: object, holder: object) -> None:
        """A location ``(oid, key)`` of ``obj`` was made; ``holder``: the object whose ``__dict__``
        ``obj`` is (None for any other object)."""
        held = self.weak.get(oid)
        if held is not None:
            held[1].append(key)
            return
        self.observe(obj, key)
        target = obj if holder is None else holder
        # (a set held strongly too: ``_race_filter.c`` takes a weak reference to a set as one
        # handed to another thread, and its turns would all call the handler)
        if not type(target).__weakrefoffset__ or type(target) is set:
            keys = self.strong.get(oid)
            if keys is None:
                keys = self.strong[oid] = []
                self.first.setdefault(oid, len(self.alive))
            self.alive.append(obj)  # (one per location: ``_race_filter.c`` counts them)
            keys.append(key)
            self.touched.add(oid)
            return
        ref = weakref.ref(target, self.forget)
        self.weak[oid] = (ref, [key])
        self.of_ref[id(ref)] = oid
        if holder is not None:
            self.keys.setdefault(oid, []).append(WEAKLY)

    def alone(self, threads: int, points: set[Any] | None, obj: object, key: object) -> bool:
        """Is an access of ``(obj, key)`` one of a thread alone (``threads``: how many the execution
        has made; each is counted from its creation, before its start), so left unrecorded? Every
        later access of any thread follows it (program order, then the spawns): it is in no race
        and needs no location. Session 47: a scenario that builds its scheduler before starting
        threads makes about 60% of an execution's accesses there. What its location would show
        of the program is still looked at (``observe``). Not while racy sites are scheduling
        points (``points``): the detector announces their operations where it records the access."""
        if threads != 1 or points:
            return False
        self.observe(obj, key)
        return True

    @staticmethod
    def observe(obj: object, key: object) -> None:
        """A location ``(obj, key)`` is made, or would be (``alone``): what it shows of the program
        (``observable``), unless a look before answered."""
        if not LIFETIMES[0] and checked_as(obj, key) not in CHECKED:
            observable(obj, key)

    def keep(self, obj: object) -> None:
        """Keep ``obj`` alive for the execution, whatever else holds it (a declared field's
        content, an interleaved location's object: not the detector's location alone)."""
        self.alive.append(obj)
        self.kept.add(id(obj))

    def release_unheld(self, threads: int) -> None:
        """Forget the objects held strongly that nothing but the detector holds now (a thread's
        list, cell or slotted object, which its code dropped), and let them go: called when a
        thread's code is done, in that thread, so that what they hold is freed there, as it was
        when the thread's function returned (review 13: a connection kept in a list). ``threads``:
        how many threads the execution has (a location has a write's site and a read's of each).
        Looked at: the objects whose reference count moved since the last call, or with a location
        or site made since (``touched``); the others are held as they were (each was looked at
        each time before session 45: the cost grew with every object held strongly)."""
        strong, alive, shadow, kept, first = self.strong, self.alive, self.shadow, self.kept, self.first
        # (read in C: no reference of this frame to any of them while they are counted)
        counts = dict(zip(first, map(sys.getrefcount, map(alive.__getitem__, first.values())), strict=True))
        touched = self.touched
        if not touched and counts == self.counts:
            return
        self.touched = set()
        if self.counts:
            moved = {oid for oid, _ in counts.items() - self.counts.items()}
            moved.update(touched)
        else:  # (the first look of the execution: each one)
            moved = set(counts)
        self.counts = counts
        gone: list[int] = []
        for oid in moved:
            keys = strong.get(oid)
            if keys is None or oid in kept:
                continue
            obj = alive[first[oid]]
            # beside ``alive``'s (one per location): ``obj``'s and the call's argument
            spare = sys.getrefcount(obj) - 2 - len(keys)
            if spare > len(keys) * (threads + 1):  # (more than its sites could hold: held elsewhere)
                continue
            for key in keys:
                loc = shadow.get((oid, key))
                if loc is not None:
                    site = loc.w_site
                    spare -= site is not None and site[3][0] is obj
                    for _, site in loc.reads.values():
                        spare -= site[3][0] is obj
            if spare == 0:
                gone.append(oid)
        obj = None
        if not gone:
            return
        for oid in gone:
            counts.pop(oid, None)
            for key in strong.pop(oid):
                shadow.pop((oid, key), None)
            self.keys.pop(oid, None)
        freed = set(gone)
        alive[:] = [o for o in alive if id(o) not in freed]  # (their finalizers run here)
        self.first = {}
        for i, o in enumerate(alive):
            self.first.setdefault(id(o), i)

    def let_go(self) -> None:
        """The execution ended: let go of every object held, here and now. Held on, they lived
        until the collector broke the execution's own reference cycles, at any point of a later
        execution, whose program then saw an earlier execution's finalizers run in its middle (a
        ``__del__`` appending to a module's list: review 13's F1 twins under state pruning)."""
        self.alive.clear()
        self.strong.clear()
        self.first.clear()
        self.counts.clear()
        self.touched.clear()
        self.kept.clear()
        self.shadow.clear()  # (its sites hold the objects their accesses were made on)
        self.keys.clear()

    def _forget(self, ref: weakref.ref[Any]) -> None:
        """An object held weakly was freed: its locations go (its id may be another's next)."""
        oid = self.of_ref.pop(id(ref), None)
        held = None if oid is None else self.weak.pop(oid, None)
        if oid is None or held is None:
            return
        shadow = self.shadow
        for key in held[1]:
            shadow.pop((oid, key), None)
        self.keys.pop(oid, None)
