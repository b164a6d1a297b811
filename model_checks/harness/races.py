"""A happens-before data-race detector over plain shared accesses (docs/harness.md, "Data races").

Exploring only the synchronisation points (controlled operations) is complete only for
data-race-free programs (the DRF-SC argument behind CHESS and loom's ``UnsafeCell`` tracking):
two plain accesses to one location, one a write, that no synchronisation orders could happen in
either order, and the explorer, which interleaves only whole steps, would see just one. So every
explored execution also runs this detector:

* **Happens-before** is the dependency order the explorer itself uses (``rt.objects.dependent``):
  a thread's operation on controlled objects joins their vector clocks (a pure read joins only
  their writes) and publishes its clock to them; a yield point is ordered with every operation.
  This gives release->acquire of a lock, notify->woken wait, put->get, set->wait, spawn->begin,
  exit->join, atomics as sequentially consistent cells.
* **Accesses** come from opcode tracing (``f_trace_opcodes``) of the code under test only (not
  the standard library, site-packages or the harness), entered inside a controlled thread's step
  (not the scheduler's invariants and final checks): attribute loads and stores, subscripts,
  ``in``, iteration, ``len`` and the methods of dict/list/set/deque, and module globals. The
  trace function is C (``_race_tracer.c``: the per-opcode filter never calls Python outside an
  access site) or, without it, ``_global`` in Python, deciding the same. The object and key of an
  access are read from the interpreter's value stack of the traced frame (``stack_value``), which
  CPython 3.11 keeps up to date while it calls the tracer.
* **Shadow memory** per location (object, attribute or key): the last write's (thread, epoch,
  site) and each thread's last read (FastTrack's); one thread's location or two reads never race.

A race is reported as an execution failure of kind ``data_race``: both sites, both threads.
**Interleaving the racy accesses** (``Options(interleave_races=True)``): a reported race's sites
become scheduling points (``points``) and the search starts again, so the explorer runs them in
both orders and shows the race's consequence. At a point site the tracer announces an operation
on a cell standing for the location (``rt.objects.LocationState``) before the access, which is
part of that operation (at the epoch it published), as a declared field's (``declared.py``).
"""

from __future__ import annotations

import dis
import gc
import sys
import types
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from model_checks.harness import race_objects
from model_checks.harness.busy_wait import BusyWait
from model_checks.harness.race_attributes import MISSING, AttributeAccesses
from model_checks.harness.race_builtins import WATCHED, label
from model_checks.harness.race_calls import NESTED, CallSites
from model_checks.harness.race_files import FILE_TYPES, iterated_file
from model_checks.harness.race_frames import (
    NATIVE,
    SUPPORTED,
    Untraced,
    address,
    fast_local,
    frame_code,
    join,
    py_owned_turn,
    stack_value,
    sync_op,
)
from model_checks.harness.race_functions import NAMED_CALLS, NESTED_DEPTH
from model_checks.harness.race_items import decided, key_of, loop_reads, subscripted
from model_checks.harness.race_library import TRACED_FILES, generated_caller, library_caller, library_state
from model_checks.harness.race_python_tracer import trace_function
from model_checks.harness.race_report import describe, race_failure
from model_checks.harness.race_shadow import Held, named, unordered
from model_checks.harness.race_shadow import Loc as _Loc
from model_checks.harness.race_sites import (
    ALL,
    BINARY,
    CALL_EX,
    CODE_TYPES,
    COMPARE,
    CONTAINERS,
    CONTAINS,
    DELETE_SUBSCR,
    DICT_VIEWS,
    GLOBAL_NAME,
    INDEXED,
    INPLACE,
    ITER,
    ITERATORS,
    KEYED,
    LOAD_ATTR,
    LOAD_CELL,
    LOAD_METHOD,
    LOAD_NAME,
    METHODS,
    RUN,
    STORE_ATTR,
    STORE_CELL,
    STORE_GLOBAL,
    STORE_NAME,
    STORE_SUBSCR,
    STREAMS,
    SUBSCR,
    TRUTH,
    Point,
    Site,
    Where,
    alike,
    code_entries,
    iterated,
    viewed,
)
from model_checks.harness.rt.objects import GLOBAL, LocationState, Op

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

FORMAT_VALUE = dis.opmap["FORMAT_VALUE"]


class RaceDetector(AttributeAccesses):
    """Vector clocks from the controlled operations, shadow memory from the traced accesses, for
    one execution. ``sync`` is called by the scheduler for every operation it runs."""

    def __init__(self, ex: Execution, points: set[Point] | None = None) -> None:
        self.ex = ex
        # interleave_races: the sites made scheduling points (shared by the executions of one
        # search), the sites of this execution's race, and the cell of each location
        self.points = points
        self.racy: list[Point] = []
        self.cells: dict[tuple[int, object], LocationState] = {}
        self.clocks: list[list[int]] = []
        self.writes: dict[int, list[int]] = {}  # object id -> join of its non-read operations
        self.reads: dict[int, list[int]] = {}  # object id -> join of its pure reads
        self.everything: list[int] = []  # join of every step, tails included (what a yield acquires)
        self.yielded: list[int] | None = None  # the last yield step's clock (every op acquires it)
        self.shadow: dict[tuple[int, object], _Loc] = {}
        self.keys: dict[int, list[object]] = {}  # container id -> keys with a location
        # the objects with a location: held weakly where they can be, their locations forgotten
        # when they are freed (``race_shadow``: an id is not reused while its locations are known)
        self.held = Held(self.shadow, self.keys)
        self.accesses = 0
        self.busy = BusyWait(ex)  # a thread spinning on plain data is given scheduling points
        self.calls = CallSites(self)  # what a call site accesses
        self.found = False
        # the reads of code recorded: (site's entry, location) ids -> (thread, epoch) (``_code_read``)
        self.code_seen: dict[tuple[int, int], tuple[int, int]] = {}
        # containers held in declared fields (``declared.py``), and the traced standard-library
        # modules' own state (``race_library.library_state``)
        self.exempt: set[int] = set(library_state())
        # the C trace function when built (``race_frames.NATIVE``), else the pure-Python one
        self._tracer = (
            # (the C filter also lets through a container's iterator: ``ITERATORS``)
            NATIVE.Tracer(
                ex,
                code_entries,
                self._site,
                CODE_TYPES,
                (*CONTAINERS, *ITERATORS, *FILE_TYPES),
                METHODS,
                NAMED_CALLS,
                self.clocks,
                decided(),
            )
            if NATIVE is not None
            else None
        )
        self._python_tracer = trace_function(self) if NATIVE is None else None
        if self._tracer is not None:  # (a loop's turn over a container only its frame holds)
            self._tracer.own_loops(self.shadow, self.keys, ALL, points)

    # ---------------------------------------------------------------- happens-before
    def _clock(self, tid: int) -> list[int]:
        clocks = self.clocks
        while len(clocks) <= tid:
            clocks.append([0] * (len(clocks) + 1))
        vc = clocks[tid]
        vc.extend([0] * (tid + 1 - len(vc)))  # (none when it is long enough)
        return vc

    def sync(self, tid: int, op: Op) -> None:
        """``tid`` runs ``op``: acquire from its objects, publish to them, start a new epoch (the
        accesses after the operation belong to the new step, which nothing has seen yet)."""
        self.busy.synced(op)
        vc = self.clocks[tid] if tid < len(self.clocks) and tid < len(self.clocks[tid]) else self._clock(tid)
        objs = op.objs
        if op.kind == "sleep":
            # A sleep synchronises nothing: it is a scheduling point (dependent with every step,
            # for the explorer) but no release or acquire, so the accesses around it stay as
            # unordered as they are on real threads (session 35: a sleep before an unlocked
            # read-modify-write hid the lost update, treated as a barrier like a yield point)
            vc[tid] += 1
            return
        if objs is GLOBAL:
            # a yield point stands for the unseen access that follows it, in its own step: the
            # explorer orders that whole step (operation and tail) with every other step, so it
            # acquires every step so far, tails included, and publishes its own tail (below)
            join(vc, self.everything)
            vc[tid] += 1
            self.yielded = list(vc)
            join(self.everything, vc)
            return
        sync_op(vc, tid, objs, op.read, self.writes, self.reads, self.yielded, self.everything)

    def exempt_container(self, obj: object) -> None:
        """``obj`` is the content of a declared field: its accesses follow the field's scheduling
        point in the same step, so they are not checked (the object is kept alive)."""
        if id(obj) not in self.exempt:
            self.exempt.add(id(obj))
            self.held.keep(obj)

    def thread_ended(self) -> None:
        """The running thread's code is done: what only the detector holds of what it dropped goes."""
        self.held.release_unheld(len(self.ex.threads))

    # ---------------------------------------------------------------- tracing
    def enter_thread(self) -> None:
        """Called at the start of every controlled thread (tracing is per OS thread)."""
        if self._tracer is not None:
            self._tracer.install()
        else:
            sys.settrace(self._python_tracer)

    def _site(self, frame: types.FrameType, entry: tuple[int, Any] | None) -> None:
        """An access site (``race_sites.code_table``) is about to run in ``frame``; None: the
        tracer counted a long run of opcodes (``busy_wait.LONG_RUN``)."""
        if entry is None:
            self.busy.long_run(frame)
            return
        if self.found and not self.points:
            # One race is the execution's report. While racy sites are interleaved (``points``)
            # they stay scheduling points after it: a thread spinning on a racy flag would
            # otherwise never give way again, and the execution would never end. Without them, a
            # spinning thread still gives way: the scheduler then ends the execution.
            busy = self.busy
            busy.unsynced += 1
            if busy.unsynced >= busy.limit and self.ex.current is not None:
                busy.give_way()
            return
        tid = self.ex.current
        if tid is None:
            return
        kind, arg_ = entry
        if kind == LOAD_ATTR:
            self._load_attr(tid, stack_value(frame, 1), arg_, frame, entry)
        elif kind == LOAD_METHOD:
            self._load_method(tid, stack_value(frame, 1), arg_, frame, entry)
        elif kind == STORE_ATTR:
            self._store_attr(tid, stack_value(frame, 1), arg_, frame)
        elif kind in (SUBSCR, STORE_SUBSCR, DELETE_SUBSCR):
            container = stack_value(frame, 2)
            if issubclass(type(container), CONTAINERS):
                key = stack_value(frame, 1)
                self._item(tid, container, key, kind != SUBSCR, frame, indexed=kind != DELETE_SUBSCR)
            elif subscripted(type(container)):  # ``mm[0]``, ``section["k"]``: ``race_items``
                key = key_of(container, stack_value(frame, 1))
                self._access(tid, container, key, kind != SUBSCR, frame, "")
        elif kind == CONTAINS:
            container, key = stack_value(frame, 1), stack_value(frame, 2)
            if issubclass(type(container), INDEXED) and issubclass(type(key), NESTED):
                # ``[1, 2] in outer`` compares each item with a sequence: reads them, deep
                self.calls.read_whole(tid, container, frame, "", NESTED_DEPTH)
            elif issubclass(type(container), CONTAINERS):
                self._item(tid, container, key, False, frame)
            elif type(container) in race_objects.TABLE:  # ``k in cache``, a ``weakref`` mapping
                race_objects.contains(self, tid, frame, container, key)
        elif kind == ITER:
            container = stack_value(frame, 1)
            if issubclass(type(container), STREAMS):
                # a loop over its lines moves it; ``f"{buf}"`` names it and reads nothing
                if frame.f_code.co_code[frame.f_lasti] != FORMAT_VALUE:
                    self._access(tid, container, ALL, True, frame, "")
            elif issubclass(type(container), CONTAINERS):
                self._access(tid, container, ALL, False, frame, "")
            elif type(container) is types.GeneratorType:
                self._generator(tid, container, frame)
            elif issubclass(type(container), ITERATORS):  # ``for x in it:`` over a shared iterator
                self._iterator(tid, container, frame)
            elif issubclass(type(container), FILE_TYPES):  # ``for line in f:``, a regular file's
                iterated_file(self, tid, frame, container)
            elif type(container) in race_objects.TABLE:  # ``for k in cache:``
                race_objects.whole(self, tid, frame, container, False)
        elif kind == RUN:  # each turn of a loop: it runs a generator, or reads a container
            if (
                self._python_tracer is not None
                and not self.points
                and py_owned_turn(frame, tid, self.shadow, self.keys, ALL)
            ):
                return  # (the C filter's ``frame_owned``: a container only the frame holds)
            it = stack_value(frame, 1)
            if type(it) is types.GeneratorType:
                self._generator(tid, it, frame)
            else:  # (once a step per site and container, as the C filter lets it through)
                for container in loop_reads(it):
                    if self._code_read(tid, entry, container):
                        self._access(tid, container, ALL, False, frame, "")
        elif kind == TRUTH:  # ``if xs:``: a container's truth is its length (a stream's is True)
            container = stack_value(frame, 1)
            if issubclass(type(container), CONTAINERS) and not issubclass(type(container), STREAMS):
                self._access(tid, container, ALL, False, frame, "")
        elif kind == GLOBAL_NAME:
            g = frame.f_globals
            value = g.get(arg_, MISSING)
            if value is MISSING and arg_ in WATCHED:  # a builtin the program rebound (``race_builtins``)
                g = frame.f_builtins
                value = g.get(arg_, MISSING)
            if self._value_read(tid, entry, g, value):
                self._access(tid, g, arg_, False, frame, label(g, arg_))
        elif kind == STORE_GLOBAL:
            self._access(tid, frame.f_globals, arg_, True, frame, f"global {arg_}")
        elif kind == BINARY:
            left, right = stack_value(frame, 2), stack_value(frame, 1)
            formats = issubclass(type(left), str)  # "%s" % xs, "%s" % (xs,): what it formats, deep
            # ``outer == [[1, 2]]`` compares the items, recursively (session 39)
            compares = (
                arg_ == COMPARE
                and issubclass(type(left), NESTED)
                and issubclass(type(right), NESTED)
                and (issubclass(type(left), CONTAINERS) or issubclass(type(right), CONTAINERS))
            )
            depth = NESTED_DEPTH if formats or compares else 1
            if issubclass(type(right), CONTAINERS) and right is not left:
                self.calls.read_whole(tid, right, frame, "", depth)
            elif (formats or compares) and issubclass(type(right), tuple):  # (a tuple: no level of its own)
                self.calls.read_whole(tid, right, frame, "", NESTED_DEPTH + 1)
            if compares:
                self.calls.read_whole(tid, left, frame, "", NESTED_DEPTH + issubclass(type(left), tuple))
            elif issubclass(type(left), CONTAINERS):
                self._access(tid, left, ALL, arg_ in INPLACE, frame, "")
        elif kind in (LOAD_CELL, STORE_CELL):
            slot, name = arg_
            cell = fast_local(frame, slot)
            if not isinstance(cell, types.CellType):
                return
            if kind == LOAD_CELL:
                try:
                    value = cell.cell_contents
                except ValueError:  # not bound yet: the load raises NameError
                    return
                if not self._value_read(tid, entry, cell, value):
                    return
            self._access(tid, cell, name, kind == STORE_CELL, frame, "")
        elif kind in (LOAD_NAME, STORE_NAME):
            self._name(tid, frame, entry, kind == STORE_NAME)
        elif kind == CALL_EX:
            self.calls.call_ex(tid, frame, arg_)
        else:
            self.calls.call(tid, frame, arg_)

    def _generator(self, tid: int, gen: types.GeneratorType[Any, Any, Any], frame: Where) -> None:
        """``next(gen)``, a loop over ``gen`` or ``list(gen)``: it runs the generator's frame, which
        two threads cannot do at once (``ValueError: generator already executing``): a write. And
        it reads the containers its frame's iterators go over: a loop's turns in its frame are not
        looked at (session 39: ``gen = (x for x in xs)`` made in one thread, run in another while
        the first appends to ``xs``, was proved race free)."""
        self._access(tid, gen, "<running>", True, frame, f"generator {gen.__qualname__}")
        for held in gc.get_referents(gen):
            if isinstance(held, ITERATORS):
                for container in iterated(held):
                    self._access(tid, container, ALL, False, frame, "")

    def _iterator(self, tid: int, it: object, frame: Where) -> None:
        """``next(it)`` or a loop's start: moves ``it`` (a write) and reads its container."""
        self._access(tid, it, "<position>", True, frame, type(it).__name__)
        for container in iterated(it):
            self._access(tid, container, ALL, False, frame, "")

    def _item(
        self,
        tid: int,
        container: object,
        key: object,
        write: bool,
        frame: Where,
        indexed: bool = False,
    ) -> None:
        """An access to ``container[key]`` (``indexed``: a subscript, where an int is a position of
        a sequence; otherwise ``key`` is an element, as in ``key in container``)."""
        if isinstance(container, KEYED):
            try:
                hash(key)
            except TypeError:
                key = ALL
            else:
                if indexed and not write and isinstance(container, defaultdict) and key not in container:
                    write = True  # the read of a missing key inserts it (``__missing__``)
        elif indexed and type(key) is int and isinstance(container, INDEXED):
            n = len(container)
            # -1 and n - 1 are one location; out of range raises IndexError (no item touched)
            key = key % n if -n <= key < n else ALL
        else:
            key = ALL
        self._access(tid, container, key, write, frame, "")

    # ---------------------------------------------------------------- shadow memory
    def _access(
        self,
        tid: int,
        obj: object,
        key: object,
        write: bool,
        frame: Where,
        label: str,
        owner: type | None = None,
        in_op: bool = False,
        holder: object = None,
    ) -> None:
        """An access to ``obj``'s ``key`` (``owner``: the class of the object whose ``__dict__``
        ``obj`` is, for an attribute, ``holder`` that object; ``in_op``: part of the operation just
        run, ``race_files``)."""
        if issubclass(type(obj), DICT_VIEWS):
            obj, key = viewed(obj), ALL
        oid = address(obj)
        if oid in self.exempt or self.held.alone(len(self.ex.threads), self.points, obj, key):
            return
        self.accesses += 1
        busy = self.busy
        if busy.again((oid, key), write):
            busy.give_way()
        code, offset = frame_code(frame), frame.f_lasti
        if code.co_filename in TRACED_FILES:  # inside ``statistics.mean``: the program's call of it
            code, offset, label = library_caller(frame, label)
        elif code.co_filename[:1] == "<" and not code.co_filename.startswith("<frozen"):
            code, offset = generated_caller(frame) or (code, offset)  # ``exec``'s code: its caller's
        # the location's words are made only for a report (``_report``): of an object held weakly,
        # its type (``race_shadow.named``), so that the report's words do not keep it alive
        site: Site = (tid, code, offset, (named(obj) if owner is None else owner, key, label), write)
        try:
            vc = self.clocks[tid]
            epoch = vc[tid]
        except IndexError:  # the thread's first access before any operation of its own
            vc = self._clock(tid)
            epoch = vc[tid]
        points = self.points
        if in_op:
            epoch -= 1
        elif points and (code, offset) in points:
            self._interleave(obj, key, write, label, owner)
            vc = self._clock(tid)
            # the access is part of the point's operation: at the epoch that operation published
            epoch = vc[tid] - 1
        shadow = self.shadow
        container = issubclass(type(obj), CONTAINERS) or subscripted(type(obj))
        loc = shadow.get((oid, key))
        if loc is None:
            loc = shadow[(oid, key)] = _Loc()
            if container and key is not ALL:
                self.keys.setdefault(oid, []).append(key)
            self.held.hold(obj, oid, key, holder)
        # the common case, the location's last write by this thread (or none) and no read of
        # another thread to overwrite, cannot conflict: no call
        if ((loc.w_tid != tid and loc.w_tid >= 0) or (write and loc.reads)) and self._conflict(
            loc, tid, vc, write, site
        ):
            return
        if container:
            # a key conflicts with the whole container; the whole container with every key
            if key is ALL:
                for k in self.keys.get(oid, ()):
                    keyed = shadow.get((oid, k))  # (None: ``race_shadow.WEAKLY``)
                    if keyed is not None and self._conflict(keyed, tid, vc, write, site):
                        return
            else:
                whole = shadow.get((oid, ALL))
                if whole is not None and self._conflict(whole, tid, vc, write, site):
                    return
        if oid in self.held.strong:  # (its sites hold it: ``Held.release_unheld`` looks again)
            self.held.touched.add(oid)
        if write:
            loc.w_tid, loc.w_epoch, loc.w_site = tid, epoch, site
            loc.reads.clear()
        else:
            loc.reads[tid] = (epoch, site)

    def _interleave(self, obj: object, key: object, write: bool, label: str, owner: type | None) -> None:
        """Announce the scheduling point of a racy site before its access runs: an operation on
        the location's cell (one cell per container: its keys and its whole conflict; one per
        attribute of an object and per global, as before they were their dicts' keys)."""
        named = owner is not None or label.startswith(("global ", "builtins."))
        where = (id(obj), ALL if issubclass(type(obj), CONTAINERS) and not named else key)
        cell = self.cells.get(where)
        if cell is None:
            label = label if named and label else describe(obj if owner is None else owner, where[1])
            made = self.ex.new_object(lambda oid: LocationState(oid, label))
            assert isinstance(made, LocationState)
            cell = self.cells[where] = made
            self.held.keep(obj)
        op = Op("write", cell) if write else Op("read", cell, read=True)
        with Untraced():
            self.ex.perform(op)

    def _conflict(self, loc: _Loc, tid: int, vc: list[int], write: bool, site: Site) -> bool:
        earlier = unordered(loc, tid, vc, write)
        if earlier is not None:
            self._report(earlier, site)
        return earlier is not None

    def _report(self, first: Site, second: Site) -> None:
        if self.found:  # the execution's first race is its report (and the sites interleaved next)
            return
        self.found = True
        if self.points is not None:
            self.racy = [*alike((first[1], first[2])), *alike((second[1], second[2]))]
        if self.ex.failure is None:
            self.ex.failure = race_failure(self.ex, first, second)


__all__ = ["ALL", "SUPPORTED", "Point", "RaceDetector"]
