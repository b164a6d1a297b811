"""Binding a trace's threads to the Work Lane spec's processes (the generic engine's view).

* **Producers**: one spec producer per thread that posts, named by the thread,
  added at its first ``post``. Its script is learned as it goes: ``post_of(thread,
  k)`` is the k-th ``post`` once the trace has shown it, and before that
  ``UNKNOWN_POST`` — *some* post to a valid lane — so that the producer's
  ``Admit`` (the stop-state check, unlogged) may happen any time after its
  previous event, as with a script read ahead. When the post shows up with no
  lane (``invalid_argument``), states that admitted it are dropped; a thread
  first seen while Stop is closing admission may have been admitted before it.
* **Workers**: the spec's ``workers`` interchangeable worker processes are
  named after the thread that currently holds each one: a thread gets a worker
  at its ``take`` (if fewer than ``workers`` threads hold one) and lets it go
  when the worker is idle again (``drain_end`` idle, its resubmit ``submit``,
  or ``GiveUpDrain``). Idle workers are left out of the state.
* **Stoppers**: a Stop call takes effect (``StopCall``) before anyone logs it,
  so two anonymous stoppers ``?drain`` and ``?discard`` may do it; the thread
  that logs ``stop_begin`` takes over the active one. Each
  ``stop_rejected``/``stop_in_progress`` is a Stop call of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from spec import work_lane as wl
from spec.language import Function

ANON = {"drain": "?drain", "discard": "?discard"}
UNKNOWN_LANE = -1  # never a lane: only Admit reads a post before the trace shows it
UNKNOWN_POST: tuple[int | None, Any] = (UNKNOWN_LANE, None)
ROLE_OF: dict[Callable[..., Any], str] = {
    wl.Producers: "producer",
    wl.Workers: "worker",
    wl.Stoppers: "stopper",
}


@dataclass(frozen=True, eq=False)
class TraceConstants(wl.Constants):
    """The spec's constants bound to one trace's threads and posts."""

    posts: dict[str, dict[int, tuple[int | None, Any]]] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=lambda: {v: k for k, v in ANON.items()})

    def producer_names(self) -> tuple[str, ...]:
        return tuple(sorted(self.posts))

    def worker_names(self) -> tuple[str, ...]:
        return ()

    def stopper_names(self) -> tuple[str, ...]:
        return tuple(ANON.values())

    def post_of(self, producer: str, k: int) -> tuple[int | None, Any] | None:
        post: tuple[int | None, Any] = self.posts[producer].get(k, UNKNOWN_POST)
        return post

    def mode_of(self, stopper: str) -> str:
        return self.modes[stopper]


def _filtered(f: Function[Any, Any], keep: Callable[[Hashable, Any], bool]) -> Function[Any, Any]:
    items = [(k, v) for k, v in f.items() if keep(k, v)]
    return Function([k for k, _ in items], [v for _, v in items])


def normalize(s: wl.Vars) -> wl.Vars:
    """Drop idle workers, finished Stop calls, and anonymous stoppers that can no longer act."""
    worker = s.worker
    if any(v[0] == wl.W_IDLE for v in worker.values()):
        worker = _filtered(worker, lambda _k, v: v[0] != wl.W_IDLE)
    stopper = s.stopper
    running = s.phase == wl.RUNNING
    if any(v == "done" or (not running and k in ANON.values() and v == "idle") for k, v in stopper.items()):
        stopper = _filtered(
            stopper, lambda k, v: v != "done" and (running or k not in ANON.values() or v != "idle")
        )
    if worker is s.worker and stopper is s.stopper:
        return s
    return s._replace(worker=worker, stopper=stopper)
