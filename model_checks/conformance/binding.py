"""Binding a trace's threads to the Work Lane spec's processes (the generic engine's view).

* **Producers**: one spec producer per thread that posts, named by the thread;
  ``post_of(thread, k)`` is that thread's k-th ``post`` event (read ahead).
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

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from spec import work_lane as wl
from spec.language import Function

ANON = {"drain": "?drain", "discard": "?discard"}
ROLE_OF: dict[Callable[..., Any], str] = {
    wl.Producers: "producer",
    wl.Workers: "worker",
    wl.Stoppers: "stopper",
}


@dataclass(frozen=True, eq=False)
class TraceConstants(wl.Constants):
    """The spec's constants bound to one trace's threads and posts."""

    posts: Mapping[str, Sequence[tuple[int | None, Any]]] = field(default_factory=dict)
    modes: dict[str, str] = field(default_factory=lambda: {v: k for k, v in ANON.items()})

    def producer_names(self) -> tuple[str, ...]:
        return tuple(sorted(self.posts))

    def worker_names(self) -> tuple[str, ...]:
        return ()

    def stopper_names(self) -> tuple[str, ...]:
        return tuple(ANON.values())

    def post_of(self, producer: str, k: int) -> tuple[int | None, Any] | None:
        posts = self.posts[producer]
        return posts[k] if k < len(posts) else None

    def mode_of(self, stopper: str) -> str:
        return self.modes[stopper]


def _filtered(f: Function[Any, Any], keep: Callable[[Hashable, Any], bool]) -> Function[Any, Any]:
    items = [(k, v) for k, v in f.items() if keep(k, v)]
    return Function([k for k, _ in items], [v for _, v in items])


def with_entry(f: Function[Any, Any], key: Hashable, value: Any) -> Function[Any, Any]:
    """``f`` with ``key`` added (or set), keys kept sorted so that equal states compare equal."""
    d = f.as_dict()
    d[key] = value
    keys = sorted(d, key=str)
    return Function(keys, [d[k] for k in keys])


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
