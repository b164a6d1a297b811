"""One controlled execution: threads, their pending operations, the step log, failure detection.

The scheduler is the only clever part: at every state it computes the exact set of enabled
actions (a thread whose pending operation would block is parked here, never in the OS), asks a
``Chooser`` (DFS/DPOR, random, PCT, Hypothesis, replay) which one to run, runs it, and checks
the user's invariants. Exploration strategies never touch threads; primitives never decide.

The decisions are made on the stack of the thread that announced an operation (``perform``), so
a thread chosen again goes on without a context switch and a switch goes straight to the chosen
thread; the driver (the caller of ``run``) only starts the execution, relays a finished thread's
handoff and takes the execution back at its end (docs/harness.md, "How a step runs").
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

from model_checks.harness.rt.backends import ABORT, Abort, Backend, Done
from model_checks.harness.rt.clock import MONOTONIC_ORIGIN, note_timing, now, pass_time
from model_checks.harness.rt.enabled import able_besides, enabled_actions
from model_checks.harness.rt.ending import (
    SKIP_PREFIXES,
    ExecFailure,
    UsageError,
    deadlock,
    finish,
    livelock_words,
    source_of,
    teardown,
    thread_completed,
)
from model_checks.harness.rt.fairness import Fairness
from model_checks.harness.rt.inspection import RENDERING_FOR, lock_op_for_rendering
from model_checks.harness.rt.objects import (
    NORMAL,
    SPURIOUS,
    TIMEOUT,
    Action,
    ObjState,
    Op,
    Park,
    Raise,
    Resume,
    ThreadState,
)
from model_checks.harness.rt.records import (
    NO_REPLAY,
    Chooser,
    Hooks,
    NativeChooser,
    Replay,
    Step,
    SyncObserver,
    ThreadInfo,
    _by_tid,
    _Crash,
    check_invariants,
    check_replayed,
)
from model_checks.harness.rt.repr_lists import DETACHED, hand_over

# ``ABORT`` as a static of the compiled core (an imported name is a dictionary look-up per use,
# and ``perform`` tests it at every step)
_ABORT: Final = ABORT


class Execution:
    """Runs the test once from the start under ``chooser``."""

    def __init__(
        self,
        backend: Backend,
        chooser: Chooser,
        *,
        max_steps: int,
        spurious_wakeups: bool,
        virtual_timeouts: bool,
    ) -> None:
        self.backend = backend
        self._ids = backend.ids
        self._whoami = backend.whoami
        self.chooser = chooser
        self.max_steps = max_steps
        self.spurious_wakeups = spurious_wakeups
        self.virtual_timeouts = virtual_timeouts
        self.threads: list[ThreadInfo] = []
        self.objects: list[ObjState] = []
        self.steps: list[Step] = []
        self.hooks = Hooks()
        self.failure: ExecFailure | None = None
        self.abandoned = False
        self.aborting = False
        # virtual time: advances only when a timeout expires or a thread sleeps
        self.clock = MONOTONIC_ORIGIN
        # the latest time each thread has seen (``read_clock``), and each object has been handed
        # by a thread's operation on it (what a later operation on it passes on)
        self.seen: dict[int, float] = {}
        self.seen_by_object: dict[int, float] = {}
        # a read came out past a time its thread had seen, not at the clock: the program measured
        # time across code with no sleep or timeout between (compute time, not modelled: a note)
        self.compute_time = False
        # (for a failure's report, with ``sources``) each timeout and sleep: its step, the other
        # threads able to run then, and those whose timed operation had an earlier deadline
        self.timing: list[tuple[int, list[int], list[int]]] = []
        # Did the step running now read the virtual clock (the program's ``monotonic``), start a
        # timed operation (its deadline reads the clock), or move the clock (a timeout past it)?
        # DPOR takes such steps as dependent (``strategies/search.py``): a read before or after
        # another thread's timeout sees another time. Reset when a step starts; its thread's code
        # up to its next operation belongs to it.
        self.clock_read = False
        self.deadline_read = False
        self.clock_moved = False
        self.collected = False  # the step began ``gc.collect()`` (``patch_local.collected``): global
        # What the step that just ended changed of the process's state (the C locale, a library
        # module's names, ...: ``process_watch``), or None: DPOR takes such a step as dependent
        # with every step; after an execution that did, it is put back. ``watch`` is
        # ``process_watch.changed`` (set by ``execution.execute``), asked at every step's end.
        self.watch: Callable[[], str | None] | None = None
        self.process_written: str | None = None
        self.process_dirty = False  # some step of this execution changed it
        self.current: int | None = None  # the thread whose code runs; None in the scheduler
        self.idle = False  # the execution ended because no thread could run
        # record each operation's source line (off while exploring; on to replay for a report)
        self.sources = True
        self.preemptions = 0
        self.outcome: object = None
        self.spurious_limit = 1
        self.timeout_limit = 2
        self.spurious_used: dict[int, int] = {}
        self.timeouts_used: dict[int, int] = {}
        self.limit_cut: set[str] = set()  # modelling limits that excluded some choice
        # after a failure, run on to the end (DPOR needs maximal executions to see every race)
        self.keep_going = False
        self.last: int | None = None  # thread of the last step (None before the first)
        self.prev_enabled = False  # is ``last`` in the latest enabled set
        # choosers that ignore ``after_step`` say so (``needs_after_step = False``): one call
        # less per step
        self.after_step_hook = getattr(chooser, "needs_after_step", True)
        # the steps a search re-runs on its way to a new branch, run here without asking the
        # chooser (``Chooser.replay_prefix``)
        native = chooser if isinstance(chooser, NativeChooser) else None
        if native is not None:
            replay: Replay = native.replay_prefix()
        else:
            prefix = getattr(chooser, "replay_prefix", None)
            replay = NO_REPLAY if prefix is None else prefix()
        self.replay_enabled: list[list[Action]] = replay.enabled
        self.replay_chosen: list[Action] = replay.chosen
        self.quiet = replay.quiet
        self.live: list[ThreadInfo] = []  # spawned and not finished, by thread id
        self.daemons = False  # has a daemon thread been created (``new_thread_state``)
        self.only_daemons = False  # every thread still running is a daemon: the program is over
        # the built-in choosers only ever pick from ``enabled`` (``trusted = True``); anyone
        # else's choice is checked
        self.trusted = getattr(chooser, "trusted", False)
        # a built-in chooser is called natively, and may let the running thread go on without the
        # enabled set (``NativeChooser.keep``)
        self.native: NativeChooser | None = native
        # fairness at sleeps (``rt/fairness.py``): a sleeper gives way to the threads able to run
        self.fair_sleeps = False
        self.fairness = Fairness()
        # the data-race detector, when on: told of every operation run (one test per step when off)
        self.race: SyncObserver | None = None
        self._value: object = None  # what the thread ``_next`` chose goes on with
        # a back end's threads that switch to themselves (``Backend.direct``: greenlets), or None
        self._direct: dict[int, Any] | None = getattr(backend, "direct", None)
        self.reprs = DETACHED  # its threads' repr lists kept apart (``repr_guard.on_execution``)

    # ----------------------------------------------------------------- objects and threads
    def new_object(self, factory: Callable[[int], ObjState]) -> ObjState:
        obj = factory(len(self.objects))
        self.objects.append(obj)
        return obj

    def add_object(self, obj: ObjState) -> None:
        """Register ``obj``, made with ``len(objects)`` as its id: ``new_object`` without the
        factory (the compiled primitives' constructors; a factory is a closure made and called
        through Python's call protocol for every object of every execution)."""
        assert obj.oid == len(self.objects)
        self.objects.append(obj)

    def new_thread_state(self, name: str, body: Callable[[], object], daemon: bool = False) -> ThreadState:
        # The thread takes its place in ``threads`` now, so that ``threads[tid]`` is it even when
        # threads created later are spawned first; it has no pending operation until its spawn.
        tid = len(self.threads)
        st = ThreadState(len(self.objects), name or f"t{tid}", tid)
        self.add_object(st)
        self.threads.append(ThreadInfo(tid, st.name, st, body, daemon))
        self.daemons = self.daemons or daemon
        return st

    def add_thread(self, st: ThreadState) -> None:
        info = self.threads[st.tid]
        info.born = True
        info.pending = Op("begin", st)
        live = self.live
        live.append(info)
        if len(live) > 1 and live[-2].tid > info.tid:  # spawned after a later-created thread
            live.sort(key=_by_tid)
        body = info.body
        tid = info.tid
        self.backend.spawn(tid, lambda first: self._thread_main(tid, body, first))

    def release(self) -> None:
        """Drop what the finished execution refers to; call only once nothing reads it again.

        The program under test refers back to the execution (every primitive, the runtime, the
        threads' bodies), so an execution is a reference cycle: left alone, its steps and
        operations wait for the cyclic collector, which by then has promoted them to an older
        generation, and the standard scenario spent about a fifth of its time in those
        collections. Cleared, most of it is freed by reference counting at once."""
        self.steps = []
        self._value = None
        self.threads = []
        self.objects = []
        self.live = []
        self.hooks = Hooks()
        self.backend.close()

    def thread_label(self, tid: int | None) -> str:
        if tid is None or tid >= len(self.threads):
            return "?"
        return self.threads[tid].name

    # ----------------------------------------------------------------- called by controlled threads
    def perform(self, op: Op) -> object:
        """Announce ``op`` from the running controlled thread; return its result.

        The announcing thread makes the next scheduling decisions itself (on its own stack), so
        when it is chosen again, as it is at most steps, the operation returns without any
        context switch; otherwise control goes straight to the chosen thread.
        """
        if self.aborting:
            raise Abort()
        tid = self.current
        # (``caller`` narrowed to an int before the comparison: an optional int compared with an int
        # boxes both and calls Python's rich comparison, at every step)
        caller = None if tid is None else self._ids.get(self._whoami())
        if tid is None or caller is None or caller != tid:
            if op.read:  # invariants and final checks may read controlled objects directly
                out = op.obj.apply(self, op, -1, NORMAL)
                assert isinstance(out, Resume)
                return out.value
            if RENDERING_FOR:  # a repr in a failure's message (``rt/inspection.py``)
                return lock_op_for_rendering(self, op)
            raise UsageError(
                f"{op.kind} on {op.obj.name} outside a controlled thread: start threads with "
                "rt.start_thread and only read controlled objects from invariants"
            )
        if self.sources:
            # from this frame, not the caller's: under the compiled core the harness's own
            # functions have no frames, and ``source_of`` skips those that do
            op.source = source_of(sys._getframe(0))
        if op.timeout is not None:
            op.deadline = now(self, tid) + max(op.timeout, 0.0)
            self.deadline_read = True
        self.threads[tid].pending = op
        self.current = None
        crash: _Crash | None = None
        try:
            # the step that just ended: inline ``_after_step`` (this runs at every step)
            if self.watch is not None:
                self._watch_step(self.watch)
            if self.failure is None and self.hooks.invariants:
                check_invariants(self)
            if self.after_step_hook and len(self.steps) > self.quiet:
                self._chooser_after_step()
            nxt = self._next()
        except BaseException as exc:  # the scheduler's own error: the driver re-raises it
            crash = _Crash(exc)
            nxt = -1
        if nxt == tid:  # chosen again: go on without any switch
            answer = self._value
        elif nxt < 0:  # over (or broken): the driver takes it from here
            answer = self.backend.suspend(crash)
        elif self._direct is not None:  # greenlets, switched to directly (``Backend.direct``)
            answer = hand_over(self.reprs, tid, self._direct[nxt], self._value)
        else:
            answer = self.backend.switch(nxt, self._value)
        self.current = tid
        if answer is _ABORT:
            raise Abort()
        if type(answer) is Raise:  # the operation raises in its thread
            raise answer.error
        return answer

    def running_thread(self) -> int | None:
        """The controlled thread whose code runs here; None in the scheduler and its hooks
        (invariants, final checks) and in threads the harness does not control."""
        tid = self.current
        if tid is None:
            return None
        caller = self._ids.get(self._whoami())
        if caller is None or caller != tid:
            return None
        return tid

    def _thread_main(self, tid: int, body: Callable[[], object], first: object) -> object:
        """A controlled thread's whole life. Returns the message for the driver: a handoff to
        the next thread (a finished thread cannot switch and stay behind), the end, or ``Done``
        while the execution is being torn down."""
        if first is ABORT:
            return Done(Abort())
        self.current = tid
        if self.race is not None:
            self.race.enter_thread()
        try:
            done = Done(None, body())
        except BaseException as exc:  # every failure of a controlled thread is reported, never lost
            done = Done(exc)
        self.current = None
        if self.aborting:  # (a new ``Abort``: an idle greenlet keeps this, not the frames)
            return done if done.error is None else Done(Abort())
        try:
            thread_completed(self, self.threads[tid], done)
            self._after_step()
            return self._advance()
        except BaseException as exc:  # the scheduler's own error: the driver re-raises it
            return _Crash(exc)

    # ----------------------------------------------------------------- the loop
    def run(self, main: Callable[[], object]) -> None:
        st = self.new_thread_state("main", main)
        self.add_thread(st)
        try:
            self._drive()
        finally:
            teardown(self)

    def _drive(self) -> None:
        """The driver (the caller of ``run``): starts the first step, takes control back when the
        execution is over, and relays a finished thread's handoff."""
        nxt: object = self._advance()
        while nxt is not None:
            if isinstance(nxt, _Crash):
                raise nxt.error
            if not isinstance(nxt, tuple):
                raise AssertionError(f"unexpected message from a controlled thread: {nxt!r}")
            direct = self._direct  # greenlets: switched to directly (``Backend.direct``)
            nxt = direct[nxt[0]].switch(nxt[1]) if direct is not None else self.backend.resume(nxt[0], nxt[1])
            self.current = None
        if self.idle:
            if all(t.finished or not t.born or t.daemon for t in self.threads):
                finish(self)  # daemon threads still parked are left there, as at interpreter exit
            else:
                deadlock(self)

    def _after_step(self) -> None:
        """The running step ended (its thread finished, or its operation parked it)."""
        if self.watch is not None:
            self._watch_step(self.watch)
        if self.failure is None and self.hooks.invariants:
            check_invariants(self)
        if self.after_step_hook and len(self.steps) > self.quiet:
            self._chooser_after_step()

    def _watch_step(self, watch: Callable[[], str | None]) -> None:
        written = self.process_written = watch()
        self.process_dirty = self.process_dirty or written is not None

    def _chooser_after_step(self) -> None:
        native = self.native
        if native is not None:
            native.after_step(self)
        else:
            self.chooser.after_step(self)

    def _advance(self) -> tuple[int, object] | None:
        """``_next`` as a message for the driver: (thread, value), or None when it is over."""
        tid = self._next()
        if tid < 0:
            return None
        value, self._value = self._value, None
        return tid, value

    def _next(self) -> int:
        """Run scheduling steps until one hands a thread a value to continue with: return that
        thread, with the value in ``_value`` (not a tuple: this runs at every step); -1 when the
        execution is over (``idle`` says if no thread could run)."""
        steps = self.steps
        chooser = self.chooser
        native = self.native
        threads = self.threads
        # (abandoned: a wait outside the check passed the time limit, ``patch_io_outside``)
        while (self.failure is None or self.keep_going) and not self.abandoned:
            last = self.last
            action: Action | None
            if (
                native is not None
                and last is not None
                and len(self.replay_chosen) <= len(steps) < self.max_steps
                and not self.fairness.waits_for
                and native.keep(self, threads[last])
            ):
                # the chooser picks the running thread again: no enabled set to build
                self.prev_enabled = True
                action = threads[last].action
            else:
                enabled = enabled_actions(self)
                if not enabled:
                    self.idle = True
                    return -1
                if len(steps) >= self.max_steps:
                    self.failure = self.failure or ExecFailure("livelock", livelock_words(self))
                    return -1
                d = len(steps)
                if d < len(self.replay_chosen):
                    check_replayed(d, self.replay_enabled[d], enabled)
                    action = self.replay_chosen[d]
                elif native is not None:
                    action = native.choose(self, enabled)
                else:
                    action = chooser.choose(self, enabled)
                if action is None:
                    self.abandoned = True
                    return -1
                if not self.trusted and action not in enabled:
                    raise UsageError(f"strategy chose {action} which is not enabled")
            resumed = self._execute(action)
            if resumed >= 0:
                return resumed
            self._after_step()
            if self.only_daemons:
                self.idle = True  # what is left are daemon threads: the program is over
                return -1
        return -1

    def _execute(self, action: Action) -> int:
        """Run ``action``'s operation; return its thread if it now goes on (with ``_value``), else -1."""
        tid, alt = action
        t = self.threads[tid]
        op = t.pending
        assert op is not None
        prev = self.last
        # could the previous thread have gone on? (worked out with the enabled set)
        preempt = prev is not None and prev != tid and self.prev_enabled
        if preempt:
            self.preemptions += 1
        step = Step(tid, alt, op, preempt)
        self.steps.append(step)
        if self.sources and (alt == TIMEOUT or op.kind == "sleep"):
            note_timing(self, tid, op)
        self.clock_read = False
        self.deadline_read = False
        self.clock_moved = self.collected = False
        self.last = tid
        fairness = self.fairness
        if fairness.waits_for or fairness.owed:
            fairness.ran(tid)
        if alt:
            if alt == TIMEOUT:
                if op.deadline > self.clock:
                    self.clock = op.deadline
                    self.clock_moved = True
                self.timeouts_used[tid] = self.timeouts_used.get(tid, 0) + 1
            elif alt == SPURIOUS:
                self.spurious_used[tid] = self.spurious_used.get(tid, 0) + 1
        if self.race is not None:
            self.race.sync(tid, op)
        if self.seen:  # some thread has read the clock
            if op.kind == "sleep":  # from the time the thread is at (its reads may be ahead)
                self.clock = now(self, tid)
            else:
                pass_time(self, tid, op)
        out = op.obj.apply(self, op, tid, alt)
        if self.fair_sleeps and op.kind == "sleep":
            fairness.slept(tid, able_besides(self, tid))
        if type(out) is Park:
            t.pending = out.op
            return -1
        if op.kind == "exit":
            t.finished = True
            t.pending = None
            live = self.live
            live.remove(t)
            if self.daemons and live and all(x.daemon for x in live):
                self.only_daemons = True
            return -1
        if type(out) is Resume:
            step.result = self._value = out.value
            return tid
        assert isinstance(out, Raise)
        step.result = out.error
        self._value = out
        return tid


__all__ = [
    "SKIP_PREFIXES",
    "Chooser",
    "ExecFailure",
    "Execution",
    "Hooks",
    "Step",
    "SyncObserver",
    "ThreadInfo",
    "UsageError",
]
