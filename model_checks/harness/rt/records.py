"""The records of one execution: its threads, steps and hooks, and the interfaces the scheduler
calls (``Chooser``, ``SyncObserver``). Split from ``scheduler.py``, which runs the steps; compiled
with it (``setup.py``)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, NamedTuple, Protocol

from model_checks.harness.rt.backends import Abort
from model_checks.harness.rt.ending import ExecFailure, UsageError
from model_checks.harness.rt.objects import NORMAL, Action, Op, ThreadState

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution


class Chooser(Protocol):
    """Decides every step. A chooser whose ``after_step`` does nothing may say so with a class
    attribute ``needs_after_step = False``: the execution then skips the call. One that only
    ever returns an element of ``enabled`` (or None) may say ``trusted = True``: its choice is
    then not checked. One that re-runs a prefix of an earlier execution on its way to a new
    branch may hand it to the execution with a method ``replay_prefix()`` (``Replay``): the
    execution runs those steps itself, without calling ``choose``, and calls ``after_step`` only
    from step ``quiet`` on."""

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        """Pick the next action among ``enabled`` (ordered: running thread first); None abandons."""
        ...

    def after_step(self, ex: Execution) -> None:
        """Called after every step (DPOR's race analysis hooks in here)."""
        ...


class Replay(NamedTuple):
    """A prefix of choices replayed (``Chooser.replay_prefix``): at step ``d < len(chosen)`` the
    enabled actions must be ``enabled[d]`` (``check_replayed``) and ``chosen[d]`` runs; the
    chooser's ``after_step`` is not called after the steps before ``quiet``."""

    enabled: list[list[Action]]
    chosen: list[Action]
    quiet: int


NO_REPLAY: Final = Replay([], [], 0)


def check_replayed(step: int, before: list[Action], now: list[Action]) -> None:
    """A step replayed on the way to a new branch must find the actions it found when it was
    first run: a search that re-runs the test relies on the test being deterministic."""
    # (the same list as a rule: a replayed step's actions come in the same order)
    if before != now and set(before) != set(now):
        raise UsageError(
            f"the test is not deterministic: at step {step} the same schedule enabled "
            f"{sorted(before)} before and {sorted(now)} now (does it use time, "
            "randomness, or real threads / locks the harness does not control?)"
        )


class NativeChooser:
    """Base of the built-in choosers, compiled with the scheduler, which calls their methods
    directly (a native call) rather than looking ``choose`` up by name at every step. Any other
    object with ``Chooser``'s two methods still works; it just takes the generic call."""

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        raise NotImplementedError

    def after_step(self, ex: Execution) -> None:
        return None

    def replay_prefix(self) -> Replay:
        """``Chooser``'s optional ``replay_prefix``: none of the built-in choosers replays a prefix
        itself. (Declared here so that the execution asks natively: ``getattr`` with a default
        made and dropped an ``AttributeError`` for every execution of a built-in chooser.)"""
        return NO_REPLAY

    def keep(self, ex: Execution, t: ThreadInfo) -> bool:
        """May ``t``, whose step just ended, run the next step without the enabled set being
        computed? True only where ``choose`` would certainly pick ``(t.tid, NORMAL)``, and after
        consuming whatever ``choose`` would have consumed to pick it (random draws): the
        execution is then exactly the one ``choose`` gives. False: ask ``choose``."""
        return False


class SyncObserver(Protocol):
    """Sees every operation the scheduler runs (the data-race detector, ``races.py``)."""

    def sync(self, tid: int, op: Op) -> None: ...

    def enter_thread(self) -> None: ...


class _Crash:
    """Message to the driver: the scheduler failed on a controlled thread's stack; re-raise."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class ThreadInfo:
    """One controlled thread and its pending operation."""

    __slots__ = (
        "action",
        "body",
        "born",
        "daemon",
        "finished",
        "name",
        "pending",
        "rank",
        "run",
        "state",
        "tid",
    )

    def __init__(
        self, tid: int, name: str, state: ThreadState, body: Callable[[], object], daemon: bool = False
    ) -> None:
        self.tid = tid
        self.name = name
        self.state = state
        self.body = body
        self.pending: Op | None = None
        self.finished = False
        self.born = False  # spawned (its ``spawn`` operation ran); until then it has no pending op
        # as ``threading``'s daemon threads: the program ends once every other thread has finished,
        # wherever its daemon threads are then
        self.daemon = daemon
        self.run: Action = (tid, NORMAL)  # the action offered at most steps
        # ``run`` as one tuple, built once, for the scheduler's per-step reads: the compiled core
        # stores an ``Action`` attribute unboxed, and every read of ``run`` builds a new tuple
        self.action: Any = self.run
        # the chooser's priority of the thread (PCT's, ``strategies/randomized.py``), -1.0 until it
        # gives one: a float attribute of a compiled class is read unboxed, where a chooser's own
        # list of floats cost a bounds check and an unboxing per live thread at every step
        self.rank = -1.0


def _by_tid(t: ThreadInfo) -> int:
    return t.tid


class Step:
    """One scheduling step of an execution (slotted: one is built per step)."""

    __slots__ = ("alt", "op", "preemption", "result", "tid")

    def __init__(self, tid: int, alt: int, op: Op, preemption: bool, result: object = None) -> None:
        self.tid = tid
        self.alt = alt
        self.op = op
        self.preemption = preemption
        self.result = result


class Watched:
    """An invariant that reads only what a list records (``rt.invariant(check, watch=records)``):
    after a step that left the list's length as ``check`` last left it, it would only say True
    again, so the scheduler does not call it (a length test, natively, instead of a Python call
    at every step, which for a trace-reading check is most of what it costs).
    ``check`` may empty the list (a reader that drops what it read); the length it leaves is the
    one compared. Called directly (a report, the fingerprint's walk), it always runs ``check``.

    ``kinds``: the list holds records ``(thread, kind, fields)`` (a tracer's) and ``check`` can
    only fail on a record whose kind is one of these, and reads no other state: a step that
    added only records of other kinds then skips it too (they stay in the list, read by the next
    call). Not for a ``check`` that empties the list: that would change what it keeps per step."""

    __slots__ = ("check", "kinds", "seen", "watched")

    def __init__(
        self, check: Callable[[], object], watched: list[Any], kinds: frozenset[str] | None = None
    ) -> None:
        self.check = check
        self.watched = watched
        self.kinds = kinds
        self.seen = -1  # no length yet: the first check always runs

    def due(self) -> bool:
        """Has the list changed length since ``check`` last ran (with ``kinds``: by a record of one
        of those kinds)?"""
        watched = self.watched
        n = len(watched)
        seen = self.seen
        if n == seen:
            return False
        kinds = self.kinds
        if kinds is None or seen < 0 or n < seen:
            return True
        for i in range(seen, n):
            if watched[i][1] in kinds:
                return True
        self.seen = n  # only records ``check`` passes over: it would say True again
        return False

    def __call__(self) -> object:
        out = self.check()
        self.seen = len(self.watched)
        return out


class Hooks:
    """What the test registered on its runtime for this execution. (A plain class: a dataclass's
    generated ``__init__`` would run as Python, twice an execution.)"""

    def __init__(self) -> None:
        self.invariants: list[tuple[str, Callable[[], object]]] = []
        self.pending_work: list[Callable[[], bool]] = []
        self.final: list[Callable[[], object]] = []
        self.trace: list[Callable[[], list[object]]] = []


def check_invariants(ex: Execution) -> None:
    """The test's invariants on the state the last step left: the first that fails is the
    execution's failure."""
    for name, check in ex.hooks.invariants:
        if isinstance(check, Watched) and not check.due():
            continue  # nothing it reads changed: it would say True again
        try:
            ok = check()
        except Abort:
            raise
        except BaseException as exc:  # an invariant that raises is a violated invariant
            ex.failure = ExecFailure(
                "invariant",
                f"invariant {name} raised {type(exc).__name__}: {exc}",
                traceback.format_exc(),
            )
            return
        if ok is False:
            ex.failure = ExecFailure("invariant", f"invariant {name} violated after step {len(ex.steps)}")
            return
