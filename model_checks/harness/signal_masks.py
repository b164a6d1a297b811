"""Which controlled thread a signal goes to, as Linux decides it: per-thread signal masks, the
signals pending for a thread or for the process, and the threads parked in ``sigwait``.

On the greenlet back end every controlled thread runs on the process's main OS thread, so a real
``pthread_sigmask`` in one would block the signal for all of them (and for lanecheck): the masks
are kept here instead, one per controlled thread, a thread's first one its starter's at its
``start()`` (as ``pthread_create`` copies it). A signal sent to a thread (``pthread_kill``,
``raise_signal``) that the thread blocks stays pending for it; one sent to the process
(``os.kill(os.getpid(), sig)``) goes to the main thread if it does not block it (Linux's
``complete_signal`` tries the thread group's leader first), else to a thread that does not,
else stays pending for the process. A thread in ``sigwait`` for the signal takes it (the kernel
unblocks the waited set for the wait); a blocked signal is delivered when its thread unblocks it.
"""

from __future__ import annotations

import signal
from typing import Any

from model_checks.harness.rt.objects import AtomicState, EventState
from model_checks.harness.rt.scheduler import UsageError

# the kernel ignores these in a mask (sigprocmask(2))
_UNBLOCKABLE = frozenset({signal.SIGKILL, signal.SIGSTOP})
_RTMIN = getattr(signal, "SIGRTMIN", 10**6)


def name_of(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return str(signum)


def names_of(signals: frozenset[int]) -> str:
    return ", ".join(name_of(s) for s in sorted(signals)) or "no signal"


class SignalMasks:
    """One execution's masks, pending signals and ``sigwait`` waiters. A signal pending twice is
    pending once (a standard signal is not queued); a real-time one is queued."""

    def __init__(self, ex: Any, state: AtomicState, initial: frozenset[int]) -> None:
        self.ex = ex
        self.state = state
        self.masks: dict[int, frozenset[int]] = {0: initial}
        self.thread_pending: dict[int, list[int]] = {}
        self.process_pending: list[int] = []
        self.waiting: dict[int, frozenset[int]] = {}  # a thread in ``sigwait``: the set it waits for
        self.events: dict[int, EventState] = {}  # a ``sigwait`` waiter's flag: "a signal came"
        self.plain_sigwait: set[int] = set()  # in ``sigwait`` (which a handler does not interrupt)

    # ------------------------------------------------------------------------------ masks
    def mask(self, tid: int) -> frozenset[int]:
        found = self.masks.get(tid)
        if found is not None:
            return found
        parent = self._starter(tid)
        return frozenset() if parent is None else self.mask(parent)

    def _starter(self, tid: int) -> int | None:
        for step in self.ex.steps:
            if step.op.kind == "spawn" and getattr(step.op.obj, "tid", None) == tid:
                return int(step.tid)
        return None

    def set_mask(self, tid: int, mask: frozenset[int]) -> list[int]:
        """``tid``'s mask becomes ``mask``; returns the pending signals it now takes (by number)."""
        # the threads started so far keep the mask they inherited (only later ones inherit this)
        inherited = {t.tid: self.mask(t.tid) for t in self.ex.threads if t.born and t.tid not in self.masks}
        self.masks.update(inherited)
        self.masks[tid] = mask - _UNBLOCKABLE
        taken: list[int] = []
        for queue in (self.thread_pending.get(tid, []), self.process_pending):
            for signum in list(queue):
                if signum not in self.masks[tid]:
                    queue.remove(signum)
                    taken.append(signum)
        self.note()
        return sorted(taken)

    # ------------------------------------------------------------------------------ sending
    def _wants(self, tid: int, signum: int) -> bool:
        return signum not in self.mask(tid) or signum in self.waiting.get(tid, frozenset())

    def send(self, signum: int, target: int | None, ignored: bool, call: str) -> int | None:
        """``signum`` sent to thread ``target`` (None: to the process). Returns the thread it is
        delivered to (its action is then taken), or None: dropped, pending, or handed to a
        ``sigwait``."""
        try:
            return self._send(signum, target, ignored, call)
        finally:
            self.note()

    def _send(self, signum: int, target: int | None, ignored: bool, call: str) -> int | None:
        if target is not None:
            blocked = signum in self.mask(target)
            if ignored and not blocked:
                return None  # (an ignored signal is dropped when sent, unless blocked)
            if signum in self.waiting.get(target, frozenset()):
                self._hold(self.thread_pending.setdefault(target, []), signum)
                self._wake(target)
                return None
            if blocked:
                self._hold(self.thread_pending.setdefault(target, []), signum)
                return None
            return target
        if ignored and signum not in self.mask(0):
            return None
        wanters: list[int] = [
            t.tid for t in self.ex.threads if t.born and not t.finished and self._wants(t.tid, signum)
        ]
        if not wanters:
            self._hold(self.process_pending, signum)
            return None
        if 0 in wanters:
            wanters = [0]
        waiters = [tid for tid in wanters if signum in self.waiting.get(tid, frozenset())]
        if waiters and len(waiters) < len(wanters):
            raise UsageError(
                f"{call} while threads that do not block {name_of(signum)} and threads in sigwait "
                "for it could each take it: which one does is the kernel's choice (not modelled)"
            )
        if not waiters:
            return wanters[0]
        self._hold(self.process_pending, signum)
        for tid in waiters:
            self._wake(tid)
        return None

    @staticmethod
    def _hold(queue: list[int], signum: int) -> None:
        if signum >= _RTMIN or signum not in queue:
            queue.append(signum)

    def _wake(self, tid: int) -> None:
        event = self.events.get(tid)
        if event is not None:
            event.flag = True

    # ------------------------------------------------------------------------------ sigwait
    def take(self, tid: int, wanted: frozenset[int]) -> tuple[int, bool] | None:
        """The lowest signal of ``wanted`` pending for ``tid`` (its own first, then the
        process's), taken, and whether it was sent to the thread; None if there is none."""
        for queue in (self.thread_pending.get(tid, []), self.process_pending):
            found = sorted(s for s in queue if s in wanted)
            if found:
                queue.remove(found[0])
                self.note()
                return found[0], queue is not self.process_pending
        return None

    def pending_for(self, tid: int) -> frozenset[int]:
        return frozenset(self.thread_pending.get(tid, [])) | frozenset(self.process_pending)

    def event(self, tid: int, wanted: frozenset[int], call: str) -> EventState:
        made = self.events.get(tid)
        if made is None:
            name = f"signals of {self.ex.thread_label(tid)} ({call})"
            made = self.ex.new_object(lambda oid: EventState(oid, name))
            assert isinstance(made, EventState)
            self.events[tid] = made
        made.name = f"signal {names_of(wanted)} ({call})"
        return made

    def note(self) -> None:
        """The model's state where the state fingerprint reads it (the signals object's value)."""
        self.state.value = (
            tuple(sorted(self.masks.items())),
            tuple(sorted((t, tuple(q)) for t, q in self.thread_pending.items() if q)),
            tuple(self.process_pending),
            tuple(sorted(self.waiting.items())),
        )
