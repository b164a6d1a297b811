"""Parking for both work-stealing pools: a worker with nothing to do sleeps, and whoever makes work
visible wakes one (``PoolBase`` in ``reference.work_stealing_base`` is the pool around it).

A worker registers as a sleeper, re-checks every queue (``_recheck``, the pool's), and only then
sleeps; whoever makes work visible (push, submit) and then sees a registered sleeper wakes one.
Registering before the re-check and publishing before the sleeper check is Dekker's pattern on
sequentially consistent atomics, so no worker sleeps while work it could see exists (the lost
wakeup). Registration, re-check and the park happen under the park lock; the sleep itself is on
the worker's own semaphore, released once by the waker that unregisters it, so a wake costs no
second park-lock round trip. A worker that parks in a join registers as the joined task's
``joiner`` too: the task's completer wakes it (``PoolBase._complete``).

Mutant seam: ``_park`` (``reference_mutants``' park without the re-check).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from .runtime import AtomicInt, ConditionLike, LockLike, Runtime, SemaphoreLike
from .work_stealing_task import TaskHandle


class Parking(ABC):
    """Who is registered to park, who sleeps, and the wakes (the park lock guards them).

    An ABC so that a pool which forgets ``_recheck`` cannot be built: without it every worker would
    park without re-checking, the lost wakeup this class exists to prevent."""

    workers: int

    def _init_parking(self, rt: Runtime, workers: int) -> None:
        self._park_lock: LockLike = rt.lock(name="park")
        # A parked worker sleeps on its own semaphore, released once by the waker that unregisters
        # it (``_unpark``, under the park lock): waking needs no second round trip of the park
        # lock, which three threads (both wakers and the sleeper) would otherwise meet again.
        self._wakeups: list[SemaphoreLike] = [rt.semaphore(0, name=f"park[{w}]") for w in range(workers)]
        self._idle: ConditionLike = rt.condition(self._park_lock, name="idle")  # Stop and external joiners
        # Under _park_lock: registered to park (cleared by a waker), and actually asleep.
        self._sleeping = [False] * workers
        self._parked = [False] * workers
        self._shutdown = False
        self._sleepers: AtomicInt = rt.atomic_int(
            0, name="sleepers"
        )  # registered sleepers (a waker's cheap test)
        # Threads registered to wait for a completion: parked and external joiners, and a Stop
        # waiting for the pool to go quiet (a completer's cheap test).
        self._joiners: AtomicInt = rt.atomic_int(0, name="joiners")

    @abstractmethod
    def _recheck(self, w: int) -> bool:
        """Is any work visible to ``w``? Called registered as a sleeper, under the park lock."""

    @abstractmethod
    def _pending_task(self, task: TaskHandle) -> bool: ...

    @abstractmethod
    def _emit(self, event: str, fields: dict[str, Any]) -> None: ...

    def _park(self, w: int, joining: TaskHandle | None) -> bool:
        """Sleep until woken, unless a re-check after registering finds work (or ``joining`` done).
        False: the worker must exit (shutdown or failure)."""
        with self._park_lock:
            if self._shutdown:
                return False
            if joining is not None:
                joining.joiner = w
                self._joiners.fetch_add(1)
            self._sleeping[w] = True
            self._sleepers.fetch_add(1)  # register first, then look again: Dekker with _notify_work
            try:
                if (joining is not None and not self._pending_task(joining)) or self._recheck(w):
                    self._unregister(w, joining)
                    return True
                self._parked[w] = True
                self._emit("park", {"worker": w})
            except BaseException:
                # A re-check or a tracer that raised: undone while the lock is still held, so no
                # waker has seen this worker parked, and none will spend a wake on it later.
                self._unregister(w, joining)
                raise
        # Registered and parked: exactly one waker unregisters it (under the park lock, so after
        # the registration above) and releases this semaphore once.
        self._wakeups[w].acquire()
        self._unjoin(joining)
        return not self._shutdown  # declared GIL-atomic: written under the park lock before the release

    def _unregister(self, w: int, joining: TaskHandle | None) -> None:
        # Under the park lock, by the worker itself: nobody unregistered it, nobody released it.
        self._sleeping[w] = False
        self._parked[w] = False
        self._sleepers.fetch_add(-1)
        self._unjoin(joining)

    def _unjoin(self, joining: TaskHandle | None) -> None:
        if joining is not None:
            # Not always under the park lock: a completer that still reads this worker as the
            # joiner finds it unregistered (``_sleeping``, cleared by the waker) and wakes nobody.
            joining.joiner = None
            self._joiners.fetch_add(-1)

    def _notify_work(self) -> None:
        """After making a task visible: wake one registered sleeper, if any (a parked one first)."""
        if self._sleepers.load():
            self._wake_one()

    def _wake_one(self) -> None:
        """Wake one registered sleeper, if any is still registered (a parked one first)."""
        with self._park_lock:
            registered = [v for v in range(self.workers) if self._sleeping[v]]
            if registered:
                parked = [v for v in registered if self._parked[v]]
                self._unpark((parked or registered)[0])

    def _unpark(self, v: int) -> None:
        # Under the park lock: unregister ``v`` and, if it sleeps, release it (once: it is no longer
        # registered, so no other waker picks it until it registers again).
        self._sleeping[v] = False
        self._sleepers.fetch_add(-1)
        if self._parked[v]:
            self._parked[v] = False
            self._emit("unpark", {"worker": v})
            self._wakeups[v].release()

    def _wake_all(self, shutdown: bool) -> None:
        with self._park_lock:
            self._shutdown = self._shutdown or shutdown
            for v in range(self.workers):
                if self._sleeping[v]:
                    self._unpark(v)
            self._idle.notify_all()


__all__ = ["Parking"]
