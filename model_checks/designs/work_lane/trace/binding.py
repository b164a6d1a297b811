"""Binding a trace's threads to the Work Lane spec's processes (the generic engine's view).

* **Producers**: one spec producer per thread that posts, ``p:<thread>``, added at its first
  ``post``. Its script is learned as it goes: ``post_of(p, k)`` is the k-th ``post`` once the
  trace has shown it, and before that ``UNKNOWN_POST`` — *some* post to a valid lane — so that
  the producer's ``Admit`` (the stop-state check, unlogged) may happen any time after its
  previous event, as with a script read ahead. When the post shows up with no lane
  (``invalid_argument``), states that admitted it are dropped; a thread first seen while Stop is
  closing admission may have been admitted before it.
* **Workers**: one spec worker per thread that takes, ``w:<thread>``, added at its first
  ``take``. The spec's workers are interchangeable and an idle one holds nothing, so threads may
  come and go (a pool that replaces a thread): what bounds them is that at most ``workers`` of
  them hold a work item at once (``WithinPool``, checked on every step the trace shows).
* **Stoppers**: a Stop call takes effect (``StopCall``) before anyone logs it, so two anonymous
  stoppers ``?drain`` and ``?discard`` may make it; the thread that logs ``stop_begin`` owns it,
  and its ``discard``/``stop_end`` must come from that thread. Each
  ``stop_rejected``/``stop_in_progress`` is a Stop call of its own, ``s:<thread>@<seq>``.

In words (verdicts, pending items, the states shown) a state is ``plain``: its processes named by
their threads, and idle workers and Stop calls that can no longer act left out.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from model_checks.conformance.trace_processes import TraceProcesses
from spec import work_lane as wl
from spec.language import Function

ANON = {"drain": "?drain", "discard": "?discard"}
UNKNOWN_LANE = -1  # never a lane: only Admit reads a post before the trace shows it
UNKNOWN_POST: tuple[int | None, Any] = (UNKNOWN_LANE, None)


@dataclass(frozen=True, eq=False)
class TraceConstants(TraceProcesses, wl.Constants):
    """The spec's constants bound to one trace: processes and scripts grow as the trace shows them."""

    stoppers: list[str] = field(default_factory=lambda: list(ANON.values()))
    posts: dict[str, dict[int, tuple[int | None, Any]]] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=lambda: {v: k for k, v in ANON.items()})

    def stopper_names(self) -> tuple[str, ...]:
        return tuple(self.stoppers)

    def post_of(self, producer: str, k: int) -> tuple[int | None, Any] | None:
        post: tuple[int | None, Any] = self.posts[producer].get(k, UNKNOWN_POST)
        return post

    def mode_of(self, stopper: str) -> str:
        return self.modes[stopper]


def drained_lane(s: wl.Vars, process: Hashable) -> int | None:
    """The unit a process's deferred steps are about (the search's ``unit``): a drainer's pops are
    about its lane; every other deferred step (``None``) may depend on any lane."""
    name = str(process)
    if name.startswith("w:"):
        pc, lane, _, _ = s.worker[name]
        return lane if pc == wl.W_DRAIN else None
    return None


def WithinPool(c: wl.Constants, s: wl.Vars) -> str | None:
    """At most ``workers`` threads hold a work item at once (the pool's size)."""
    busy = sum(1 for pc, _, _, _ in s.worker.values() if pc != wl.W_IDLE)
    return None if busy <= c.workers else f"{busy} workers hold work items; the pool has {c.workers}"


def _thread(process: Hashable) -> str:
    name = str(process)
    return name[2:] if name[:2] in ("p:", "w:", "s:") else name


def plain(s: wl.Vars, owners: dict[str, str]) -> wl.Vars:
    """``s`` in the trace's words: processes named by their threads (an anonymous Stop call by the
    ``<thread>@<seq>`` of its ``stop_begin``, ``owners``), without idle workers, finished Stop calls,
    anonymous ones that can no longer act, or a refused one before its ``stop_rejected``."""
    running = s.phase == wl.RUNNING
    producer = Function([_thread(p) for p in s.producer.domain()], s.producer.values())
    workers = [(_thread(w), v) for w, v in s.worker.items() if v[0] != wl.W_IDLE]
    stoppers = [
        (owners.get(t, _thread(t)), v)
        for t, v in s.stopper.items()
        if v != "done" and (v != wl.S_IDLE or (running and t in ANON.values()))
    ]
    return s._replace(
        producer=producer,
        worker=Function([w for w, _ in workers], [v for _, v in workers]),
        stopper=Function([t for t, _ in stoppers], [v for _, v in stoppers]),
    )
