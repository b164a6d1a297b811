"""The work-stealing reference's deliberate GIL-atomic fields, declared for the race detector.

A task's completion is published through plain fields of its ``TaskHandle``: the completer
writes ``state`` (after ``value``/``error``) and joiners read it without a lock, in Dekker's
pattern with the pool's ``joiners`` count (``_complete`` in reference/work_stealing_base.py,
``_park`` in reference/work_stealing_park.py). Declared, each load and store of ``state`` is a
scheduling point while race detection runs, and the value/error written before it are ordered
by it. Imported by the modules that build the design's harness programs, so the declaration is
in force whenever they run.
"""

from __future__ import annotations

from model_checks.harness import declare_atomic

declare_atomic(
    "reference.work_stealing_task:TaskHandle",
    "state",
    "written once by the task's completer, read by joiners without a lock; Dekker's pattern with "
    "the pool's joiners count (_complete in reference/work_stealing_base.py, _park in "
    "reference/work_stealing_park.py)",
)

declare_atomic(
    "reference.work_stealing_task:TaskHandle",
    "joiner",
    "set under the park lock by a joiner that registers to park; cleared by a joining worker "
    "after it wakes, without the lock; read first without it by the completer, as a filter after "
    "the joiners count (Dekker's pattern), then again under the lock",
)

declare_atomic(
    "reference.work_stealing_deque:ChaseLevDeque",
    "_buf",
    "the owner's reference to the circular array, whose slots are plain list items atomic under "
    "the GIL (Chase-Lev's benign race: a thief's read of a slot may meet the owner's write of "
    "another; a stale read loses its CAS). Declared, the array is exempt from race reports; the "
    "explorer still orders every slot write against every slot read through the deque's "
    "'slots' cell (reference/work_stealing_deque.py)",
)

declare_atomic(
    "reference.work_stealing_base:PoolBase",
    "_shutdown",
    "written under the park lock by Stop or a failure before it releases every parked worker's "
    "semaphore; read without the lock by a worker that wakes from its semaphore: a wake for "
    "shutdown comes after the write, and a stale False after a wake for work only sends the "
    "worker round its loop to _park, which reads it again under the lock",
)
