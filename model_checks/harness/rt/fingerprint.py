"""The abstract state of an execution at a scheduling point, as one hashable value (issue 16).

State-hash pruning (``strategies/stateful.py``) stops an execution at a state it has already
explored, so two states with equal fingerprints must have the same futures. The fingerprint is
generic, computed by the harness (no promise asked of the program), and *refuses* rather than
guesses: ``fingerprint`` returns None — "do not prune here" — whenever it meets something whose
state Python does not show.

What it holds:

* the model of every controlled object (lock owner and count, condition waiters, queue items,
  event flag, atomic value, ...), its fields read generically; the virtual clock and each
  thread's spurious/timeout counters (they bound its future alternatives);
* per thread: born/finished, its pending operation (kind, object, arguments, timeout, deadline),
  and every frame of the code under test on its stack, outermost first: code object, instruction
  offset, fast locals (with cells) and **value stack** (``rt/frames.py``: loop iterators, ``with``
  exits and call arguments live only there);
* the data of the modules of code under test that those frames run in or that the walk reaches
  (a function's ``__globals__``, a module object: their globals, except ``__dunder__`` names),
  and the test's hooks (invariants, final checks, pending-work predicates: their closures reach
  what the test records);
* everything reachable from the above, as a graph numbered in visiting order (``_Canon``): equal
  fingerprints mean isomorphic reachable heaps, so object identity (``is``, aliasing) is kept.

The frames of the harness's *machinery* (``own_code.py``, named file by file: the harness
package also holds programs under test) are skipped: a controlled thread's harness-side state is
its pending operation (the primitives keep none across a scheduling point but ``wait_for``'s deadline, which
the pending wait's deadline carries), and compiled, they have no frames at all.

Refused (the state is not fingerprinted): generators and coroutines, iterators and other C
objects whose state is hidden (``random.Random``, files, sockets, real locks), instances of
classes with such a base, and any frame whose value stack cannot be read. Not seen (documented
limit): state kept in standard-library or third-party *modules*' globals, and the traceback of
an exception object.

How it is computed (issues 16 and 17: the per-state cost, not the state count, kept the Work
Lane's stop-drain scenario and the two-worker pools bounded): ``fingerprint`` hands what it
reads to the C pickler (``_Encoder``, ``encoder.py``) and keeps a 32-byte BLAKE2b digest of
the bytes; the objects that existed before the search and that no step changes are written by
reference, their readings checked at C speed between dumps (``seeds.py``). The walk in
Python that it replaced, ``walk_fingerprint`` (``_Canon``), reads exactly the same things; it is
the encoder's reference in the tests and its fallback for a heap nested deeper than the C
pickler may recurse. Profile of the walk (``work-lane/stop-drain-races-posts``): ~500 objects a
state, over half of them functions, classes and module data no step writes, at ~3.5 Python calls
each; of the encoder: ~90 reducer calls a state (the execution's own objects), the static
section's checks, the frames' slots.

The parts, one module each: ``under_test.py`` (which code is under test), ``object_kinds.py``
(atoms, hidden C state, the types read whole), ``heap_walk.py`` (the walk), ``reducers.py`` (what
the encoder writes of each object), ``dict_versions.py`` (PEP 509 views, module data),
``seeds.py`` (the pre-existing objects written by reference and their checks), ``encoder.py``
(the pickler, the static section, ``encode``), ``thread_frames.py`` (a thread's frames, walked by
one C call a thread where ``native.py`` says the C module is built; ``stacks.py`` and ``frames.py``
read the same for the walk in Python);
this module assembles a state from them. Where it is built, the hottest paths of the reducers,
the seeds' check and the section's check run in C (``_fingerprint_hot.c``: session 19, about
0.7x the CPU of the stop-drain proof, docs/performance.md).
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from typing import TYPE_CHECKING

from model_checks.harness.rt import frames, under_test
from model_checks.harness.rt.clock import READ_QUANTUM
from model_checks.harness.rt.dict_versions import _module_data
from model_checks.harness.rt.encoder import encode as encode
from model_checks.harness.rt.heap_walk import _Canon as _Canon
from model_checks.harness.rt.native import NATIVE
from model_checks.harness.rt.object_kinds import Opaque as Opaque
from model_checks.harness.rt.object_kinds import _atom
from model_checks.harness.rt.objects import ObjState
from model_checks.harness.rt.reducers import _CLASSES, _CODE_HEADS, _fields_of
from model_checks.harness.rt.seeds import _SEEDS
from model_checks.harness.rt.seeds import _Seeds as _Seeds
from model_checks.harness.rt.seeds import begin_search as begin_search
from model_checks.harness.rt.seeds import end_search as end_search
from model_checks.harness.rt.stacks import _below_chooser, _stack_of
from model_checks.harness.rt.thread_frames import TABLE as _FRAME_TABLE
from model_checks.harness.rt.thread_frames import thread_frames
from model_checks.harness.rt.under_test import _PROGRAM_FILES
from model_checks.harness.rt.under_test import _machinery as _machinery
from model_checks.harness.rt.under_test import _program_file as _program_file

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution

# every frame of every thread is read at each state: by one C call a frame where it is built
_contents = frames.contents if NATIVE is None else frames.native_contents(NATIVE.frame_contents)


def _times_seen(ex: Execution) -> tuple[tuple[str, int, str], ...]:
    """What the threads and objects have seen of the clock past it (``clock.read_clock``):
    a thread's next read depends on it; a time before the clock no longer does."""
    clock = ex.clock
    return tuple(
        (kind, key, float.hex(time))
        for kind, seen in (("thread", ex.seen), ("object", ex.seen_by_object))
        for key, time in sorted(seen.items())
        if time + READ_QUANTUM > clock
    )


def fingerprint(ex: Execution, timeless: bool = False) -> Hashable | None:
    """The abstract state of ``ex`` now (at a scheduling point), as a digest; None if it cannot
    be taken. Reads what ``walk_fingerprint`` reads (the module's docstring), serialised by the C
    pickler (``_Encoder``). ``timeless``: without the virtual clock, the pending operations'
    deadlines and the timeout counters (``timeless_fingerprint``)."""
    if not frames.readable():
        return None
    _forget_if_machinery_changed()
    limit = sys.getrecursionlimit()
    # the C pickler recurses on the C stack (a few calls a level of the heap): deeper than this
    # the state is walked in Python instead (``walk_fingerprint``)
    sys.setrecursionlimit(max(limit, 4_000))
    try:
        parts: list[object] = [
            None if timeless else float.hex(ex.clock),
            _times_seen(ex),
            sorted(ex.spurious_used.items()),
            None if timeless else sorted(ex.timeouts_used.items()),
            # who a sleeper still gives way to decides what may run next (``fair_sleeps``)
            ex.fairness.state(),
            [(obj.oid, _atom(type(obj)), _fields_of(obj)) for obj in ex.objects],
        ]
        modules: dict[str, dict[str, object]] = {}
        current = ex.backend.current()
        for t in ex.threads:
            tid = t.tid
            frame_parts, module_data = thread_frames(
                _below_chooser(ex) if tid == current else ex.backend.frame(tid)
            )
            for g in module_data:
                modules.setdefault(str(g.get("__name__", "?")), g)
            op = t.pending
            pending = (
                None
                if op is None
                else (
                    op.kind,
                    op.obj.oid if isinstance(op.obj, ObjState) else -1,
                    op.args,
                    op.timeout,
                    None if timeless else op.deadline,
                    op.result,
                )
            )
            parts.append((tid, t.born, t.finished, pending, frame_parts))
        parts.extend((name, _module_data(modules[name])) for name in sorted(modules))
        hooks = ex.hooks
        parts.append(([fn for _, fn in hooks.invariants], hooks.final, hooks.pending_work))
        return encode(parts)
    except (Opaque, frames.Unreadable):
        return None
    except RecursionError:
        pass
    finally:
        sys.setrecursionlimit(limit)
    walked = walk_fingerprint(ex, timeless)
    return None if walked is None else ("walk", walked)


def timeless_fingerprint(ex: Execution) -> Hashable | None:
    """``fingerprint`` without what only time decides: the clock, the deadlines and how many
    timeouts each thread has taken (session 48, ``strategies/stateful.py``'s timeout cuts).

    Equal values, equal futures *of the unbounded model* — every blocked timed wait may time out
    at any point, any number of times — as long as no thread reads the clock: that model enables
    a timeout whatever its deadline, a timeout's outcome does not depend on when it comes, and a
    sleep only moves the clock; what the clock is shows only through a read (``read_clock``). The
    state search uses it only while no execution has read the clock, and starts again with
    ``fingerprint`` at the first that does. Not the future of the search's own model, where
    ``timeout_limit`` makes the counters matter: the search makes up for that itself."""
    return fingerprint(ex, timeless=True)


_MACHINERY_SEEN: list[object] = [under_test._machinery]


def _forget_if_machinery_changed() -> None:
    # what is machinery decides what is code under test (a test swaps ``under_test._machinery``)
    if _MACHINERY_SEEN[0] is not under_test._machinery:
        _MACHINERY_SEEN[0] = under_test._machinery
        _PROGRAM_FILES.clear()
        _CLASSES.clear()
        _CODE_HEADS.clear()
        _FRAME_TABLE.clear()
        _SEEDS[0] = None


def walk_fingerprint(ex: Execution, timeless: bool = False) -> Hashable | None:
    """``fingerprint`` computed by a walk in Python (``_Canon``): the encoder's reference in the
    tests, and its fallback for a heap deeper than the C pickler may recurse."""
    _forget_if_machinery_changed()
    if not frames.readable():
        return None
    c = _Canon()
    limit = sys.getrecursionlimit()
    # the walk recurses once per level of the heap (Python-to-Python calls: no C stack)
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        parts: list[Hashable] = [
            ("clock", None if timeless else float.hex(ex.clock)),
            ("seen", _times_seen(ex)),
            ("spurious", tuple(sorted(ex.spurious_used.items()))),
            ("timeouts", None if timeless else tuple(sorted(ex.timeouts_used.items()))),
            ("gives way", tuple((t, tuple(w), tuple(o)) for t, w, o in ex.fairness.state())),
        ]
        parts.extend(c.model(obj) for obj in ex.objects)
        modules: dict[str, dict[str, object]] = {}
        for t in ex.threads:
            frame_parts: list[Hashable] = []
            for f in _stack_of(ex, t.tid):
                local, stack = _contents(f)
                frame_parts.append(
                    (_atom(f.f_code), frames.position(f), c.value(tuple(local)), c.value(tuple(stack)))
                )
                if _program_file(f.f_code.co_filename):
                    name = str(f.f_globals.get("__name__", "?"))
                    modules.setdefault(name, f.f_globals)
            op = c.op(t.pending)
            if timeless and isinstance(op, tuple):  # (its deadline)
                op = (*op[:4], None, *op[5:])
            parts.append((t.tid, t.born, t.finished, op, tuple(frame_parts)))
        for name in sorted(modules):
            parts.append((name, c.module_data(modules[name])))
        hooks = ex.hooks
        parts.append(c.value(([fn for _, fn in hooks.invariants], hooks.final, hooks.pending_work)))
    except (Opaque, frames.Unreadable, RecursionError):
        return None
    finally:
        sys.setrecursionlimit(limit)
    return tuple(parts)
