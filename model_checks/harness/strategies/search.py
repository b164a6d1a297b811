"""Stateless exhaustive search: depth-first over scheduling choices, with DPOR and sleep sets.

Each execution re-runs the test from the start, following the choices on ``stack`` (one frame
per step of the current path) and then taking new ones. After it ends, the deepest frame with an
unexplored action in its backtrack set becomes the branch point of the next execution.

* ``dfs``: the backtrack set of a frame is every enabled action (within the preemption bound).
* ``dpor``: Flanagan & Godefroid's dynamic partial-order reduction (POPL 2005) with sleep sets
  (Godefroid 1996). After every step, for every thread p with next operation o: find every
  step i (of another thread) that races with o: dependent with it, may be co-enabled with it, and
  happens before neither p (vector clocks) nor a later such step (the last one alone is not
  enough: two reads of an object are independent, and a write races with each); at the state
  before i, schedule an initial of the steps after i that do not happen after it, followed by o
  (source sets, see ``_add_backtrack``). A step that replaces another thread's pending operation
  (a notify turning a timed wait into a reacquire) races with the operation it took away.
  Operations are dependent when they touch a common object (two pure reads are not);
  yield points are dependent with everything. A thread's timeout/spurious alternatives are
  explored whenever the thread is. Sound for deadlocks, assertion failures and final states of
  terminating programs, with no preemption bound (see docs/harness.md).
* ``dpor`` with ``ordered=True`` (``strategy="dpor-ipb"``, ``lanecheck explore``'s default):
  the same DPOR, its pending backtrack points explored in order of preemptions (iterative
  preemption bounding, as CHESS does, with DPOR inside each bound). Every node with pending work
  stays in a tree (a ``Frame`` keeps its parent); the next execution replays the path to the
  pending point of fewest preemptions (the first queued of them first) and takes the new branch.
  A point beyond the current bound waits in its bucket, never dropped, so when every bucket is
  empty the search has explored every backtrack point any execution's race analysis added, as
  depth-first DPOR has when its stack empties (the same traces on the tests' programs). Sleep
  sets stay sound: a node's sleep set is fixed when the node is first reached, from the siblings
  *started* before it (depth-first: finished before it), and every started sibling's subtree is
  finished by the time the search ends.
"""

from __future__ import annotations

from model_checks.harness.rt.objects import GLOBAL, NEVER, Action, Op, dependent
from model_checks.harness.rt.records import NativeChooser, check_replayed
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.strategies.dependency import (
    NO_THREADS,
    Clock,
    ClockReaders,
    as_global,
    clock_conflict,
    coenabled,
    ident_op,
    join_clocks,
    may_go_on,
)
from model_checks.harness.strategies.observed import IDENTS_READ, LIFETIMES, Observed
from model_checks.harness.strategies.search_tree import Frame

# The bound a DPOR search reports when a program ends with a daemon thread able to run.
DAEMON_CUT = "daemon threads able to run at exit (DPOR cannot interleave their later steps: --strategy dfs)"


class SearchChooser(NativeChooser):
    """One instance drives a whole exhaustive search (many executions)."""

    trusted = True  # chooses only from ``enabled`` (a replayed prefix is checked against it)
    needs_after_step = True  # the race analysis

    def __init__(
        self, dpor: bool, preemption_bound: int | None, ordered: bool = False, sleep_only: bool = False
    ) -> None:
        self.dpor = dpor and preemption_bound is None
        # sleep sets alone (every allowed action a backtrack point, no race analysis): sound with
        # no help from the race analysis, so the tests' reference for DPOR's traces where plain
        # DFS cannot finish (far fewer executions than DFS, far more than DPOR)
        self.sleep_only = sleep_only and self.dpor and not ordered
        self.bound = preemption_bound
        # iterative preemption bounding: pending points explored fewest preemptions first
        self.ordered = ordered and preemption_bound is None
        self.stack: list[Frame] = []
        self.replay_len = 0
        self.cut = False  # the preemption bound excluded some action
        self.pruned = 0
        self.sleep_blocked = 0
        # ordered: buckets[k] holds nodes that may have a pending action of k preemptions, in the
        # order they were queued (taken from ``heads[k]`` on: first queued, first taken, which
        # found the bugs of the first-bug bench in 1.4-3.4x fewer executions than the deepest
        # first); an entry whose action was taken meanwhile is skipped
        self.buckets: list[list[Frame]] = []
        self.heads: list[int] = []
        self.bound_now = 0  # the bucket the last branch came from: the bound being explored
        self.clock_readers = ClockReaders()
        # what the steps that changed the process's state changed, and how many did (a note)
        self.process_writes: dict[str, int] = {}
        self.observed = Observed()  # idents read: spawns and exits ordered (``observed``)
        self.idents = self.lifetimes = False  # (its figures, as native fields: read at every step)

    # ---------------------------------------------------------------- per execution
    def start_execution(self) -> None:
        self.thread_clock: dict[int, Clock] = {0: []}
        self.obj_write: dict[int, Clock] = {}
        self.obj_reads: dict[int, Clock] = {}
        self.global_clock: Clock = []
        self.all_clock: Clock = []
        # the virtual clock as a location: the join of the steps that read it, and of those that
        # moved it (two moves commute: ``max``; two reads too)
        self.clock_reads: Clock = []
        self.clock_moves: Clock = []
        self.step_clocks: list[Clock] = []
        self.next_sleep: set[Action] = set()

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        d = len(ex.steps)
        if d < self.replay_len:
            f = self.stack[d]
            check_replayed(d, f.enabled, enabled)
            return f.chosen
        prev = ex.steps[-1].tid if ex.steps else None
        prev_enabled = prev is not None and any(a[0] == prev for a in enabled)
        # within the preemption bound: every action, or only the running thread's once the bound
        # is spent (no nested function here: the compiled core would allocate its closure per step)
        bound = self.bound
        if bound is None or not prev_enabled or ex.preemptions < bound:
            allowed = list(enabled)
        else:
            allowed = [a for a in enabled if a[0] == prev]
        if len(allowed) < len(enabled):
            self.cut = True
        ops = {t.tid: t.pending for t in ex.threads if t.pending is not None and not t.finished}
        f = Frame(enabled, ops, allowed, self.next_sleep if self.dpor else set())
        awake = [a for a in allowed if a not in f.sleep]
        if not awake:
            self.sleep_blocked += 1
            self.pruned += len(allowed)
            return None
        f.chosen = awake[0]
        if self.dpor and not self.sleep_only:
            f.backtrack = {a for a in awake if a[0] == f.chosen[0]}
        else:
            f.backtrack = set(allowed)
        if self.ordered:
            self._grow(ex, f, prev_enabled)
        self.stack.append(f)
        self.replay_len = len(self.stack)
        return f.chosen

    def _grow(self, ex: Execution, f: Frame, prev_enabled: bool) -> None:
        """A new node of the ordered search's tree: its place, its first action taken, the rest
        of its backtrack set queued by preemptions."""
        if self.stack:
            parent = self.stack[-1]
            f.parent = parent
            f.via = parent.chosen
        f.pre = ex.preemptions
        if prev_enabled and ex.steps:
            f.prev = ex.steps[-1].tid
        f.done.add(f.chosen)
        # the actions never taken here, counted as the depth-first search counts them when it
        # leaves a frame; each one taken later is taken off
        self.pruned += len(f.allowed) - 1
        for a in f.backtrack:
            if a not in f.done:
                self._queue(f, a)

    def _queue(self, f: Frame, a: Action) -> None:
        cost = f.pre + (1 if f.prev >= 0 and a[0] != f.prev else 0)
        while len(self.buckets) <= cost:
            self.buckets.append([])
            self.heads.append(0)
        bucket = self.buckets[cost]
        if len(bucket) == self.heads[cost] or bucket[-1] is not f:
            bucket.append(f)

    def after_step(self, ex: Execution) -> None:
        d = len(ex.steps) - 1
        step = ex.steps[d]
        f = self.stack[d]
        op = ident_op(step.op) if self.idents else step.op
        written = ex.process_written
        # (a full garbage collection: what it frees depends on every other thread's garbage)
        global_step = written is not None or ex.collected or self.lifetimes
        if global_step:
            # the step's code changed the process's state, which no operation or traced access
            # shows another thread reading: dependent with every step (``process_watch``)
            op = as_global(op)
            f.wrote_process.add(f.chosen)
        wider = op is not step.op
        if written is not None:
            self.process_writes[written] = self.process_writes.get(written, 0) + 1
        f.tid, f.op = step.tid, op
        f.raised = isinstance(step.result, BaseException)
        f.reads_clock, f.moves_clock = self.clock_readers.saw(ex, step.tid), ex.clock_moved
        if not self.dpor:
            return
        fresh = d == len(self.stack) - 1
        if fresh and f.reads_clock and not self.sleep_only:
            # only now is it known that the step's code read the clock: its races with other
            # threads' timeouts, analysed as of the state before it (the thread's clock not yet
            # advanced by it)
            self._clock_races(d, step.tid, op)
        if fresh and wider and not self.sleep_only:
            # only now is it known that the step wrote the process's state (or the pool of
            # idents): its races with every earlier step of another thread, as of the state
            # before it (as for the clock)
            self._races_of(d - 1, step.tid, op)
        self._clock(step.tid, op, d, f.reads_clock, f.moves_clock)
        if not fresh:
            return  # a replayed prefix: its races were analysed when it was first run
        # sleep set of the next state: what slept here (or was explored here) and is independent
        asleep = f.sleep | f.done
        readers = self.clock_readers.threads() if f.moves_clock else NO_THREADS
        self.next_sleep = {
            b
            for b in asleep
            if b[0] != step.tid
            and b[0] in f.ops
            and b not in f.wrote_process
            and not dependent(ident_op(f.ops[b[0]]) if self.idents else f.ops[b[0]], op)
            and not clock_conflict(f.reads_clock, f.moves_clock, b[0], f.ops[b[0]], readers)
        }
        if not self.sleep_only:
            self._races(ex, d)

    def _clock(self, tid: int, op: Op, d: int, reads_clock: bool, moves_clock: bool) -> Clock:
        c = list(self.thread_clock.get(tid, []))
        if op.objs is GLOBAL:
            c = join_clocks(c, self.all_clock)
        else:
            c = join_clocks(c, self.global_clock)
            for o in op.objs:
                c = join_clocks(c, self.obj_write.get(o, []))
                if not op.read:
                    c = join_clocks(c, self.obj_reads.get(o, []))
        if reads_clock:
            c = join_clocks(c, self.clock_moves)
        if moves_clock:
            c = join_clocks(c, self.clock_reads)
        while len(c) <= tid:
            c.append(0)
        c[tid] = d + 1
        self.thread_clock[tid] = c
        self.step_clocks.append(c)
        self.all_clock = join_clocks(self.all_clock, c)
        if reads_clock:
            self.clock_reads = join_clocks(self.clock_reads, c)
        if moves_clock:
            self.clock_moves = join_clocks(self.clock_moves, c)
        if op.objs is GLOBAL:
            self.global_clock = c
        else:
            for o in op.objs:
                if op.read:
                    self.obj_reads[o] = join_clocks(self.obj_reads.get(o, []), c)
                else:
                    self.obj_write[o] = c
                    self.obj_reads[o] = c
        if op.kind == "spawn":
            child = getattr(op.obj, "tid", None)
            if isinstance(child, int):
                self.thread_clock[child] = list(c)
        return c

    def _hb(self, i: int, tid_i: int, p: int) -> bool:
        """Does step ``i`` (run by ``tid_i``) happen before the current state of thread ``p``?"""
        c = self.thread_clock.get(p, [])
        return tid_i < len(c) and c[tid_i] >= i + 1

    def _races(self, ex: Execution, d: int) -> None:
        f = self.stack[d]
        last = f.op  # (the step's operation, or its global stand-in: ``process_writes``)
        assert last is not None
        for t in ex.threads:
            if t.finished or t.pending is None:
                continue
            p, nxt = t.tid, t.pending
            if ex.only_daemons and t.daemon and may_go_on(ex, p):
                # The program ended at this step with this daemon thread able to run: the
                # execution stops it here, so what it would do next is never seen, and no race
                # analysis can say where it should have run earlier (a daemon that has not started
                # yet touches nothing). Treating its unknown next step as racing with every step
                # finds such bugs, but then a daemon that runs for ever (a heartbeat) is run ahead
                # of the main thread until ``max_steps``: a livelock no fair scheduler would show.
                # Until the search is fair, this is a bound, named, never an exhaustive verdict
                # (docs/harness.md, "Daemon threads"); ``dfs`` interleaves daemons step by step.
                ex.limit_cut.add(DAEMON_CUT)
                continue
            old = f.ops.get(p)
            if p != f.tid and old is not None and old is not nxt and any(a[0] == p for a in f.enabled):
                # The step replaced p's pending operation without p running (a notify turns a
                # waiter's timed wake into a reacquire): the operation it took away, enabled
                # before the step (a timeout), races with the step itself, so p must also be
                # tried here. The analysis below sees only the new operation and would put the
                # race at an earlier lock step; sleep sets then prune the order "that lock step,
                # p's timeout, this step" (seed 179 of test_order_ipb: 20 of 198 traces missed).
                self._add_backtrack(f, d, p, d, old)
            if p != f.tid and not dependent(last, nxt) and not (f.reads_clock and nxt.timeout is not None):
                continue  # nothing new to race with since the last analysis of p (nor its clock)
            if nxt.gate == NEVER and nxt.timeout is None and not ex.spurious_wakeups:
                # a parked condition wait with no timeout or spurious alternative never runs as
                # it is: a notify replaces it with a reacquire, whose races are analysed then
                continue
            self._races_of(d, p, nxt)

    def _races_of(self, d: int, p: int, nxt: Op) -> None:
        """Every step that races with ``p``'s next operation ``nxt``, latest first: dependent with
        it, may be co-enabled with it, not happening before ``p``, and not happening before a
        later such step (that one is the race; reversing it reaches this one in turn). Not just
        the latest: two reads of an object are independent, so a write races with each of them
        (``fetch_add`` after two loads: depth-first order reaches "load, fetch_add, load" only
        from the earlier load's race). Steps before every object of ``nxt`` is covered by a
        racing write (or before a global step) all happen before one, so the scan stops there."""
        uncovered = set(nxt.objs)
        # a timed operation may time out and move the clock: it races with every read of the
        # clock not ordered before it (reads do not cover each other), so no early stop then
        timed = nxt.timeout is not None and bool(self.clock_reads)
        found: list[int] = []
        for i in range(d, -1, -1):
            fi = self.stack[i]
            if fi.tid == p or fi.op is None:
                continue
            op = fi.op
            if not (dependent(op, nxt) or (timed and fi.reads_clock)) or not coenabled(op, nxt, fi.raised):
                continue
            if not self._hb(i, fi.tid, p):
                if any(self._before(i, fi.tid, j) for j in found):
                    continue
                self._add_backtrack(fi, i, p, d, nxt)
                found.append(i)
            # a step happening before p, or the race just recorded: every earlier step dependent
            # with it through the objects it writes happens before it, so none of them races
            if op.objs is GLOBAL:
                break
            if not op.read:
                uncovered -= op.objs
                if not uncovered and not timed:
                    break

    def _clock_races(self, d: int, p: int, op: Op) -> None:
        """Step ``d`` of ``p`` read the virtual clock: every timeout of another thread that moved
        the clock, not ordered before ``p``, races with it (a read before it would have seen the
        earlier time). The analysis ``_races_of`` would have made as ``p``'s next operation had
        it been known to read the clock; timeouts do not cover each other, so no early stop."""
        found: list[int] = []
        for i in range(d - 1, -1, -1):
            fi = self.stack[i]
            if fi.tid == p or not fi.moves_clock or fi.op is None:
                continue
            if not self._hb(i, fi.tid, p):
                if any(self._before(i, fi.tid, j) for j in found):
                    continue
                self._add_backtrack(fi, i, p, d - 1, op, True)
                found.append(i)

    def _dep(self, k: int, nxt: Op, nxt_reads_clock: bool) -> bool:
        fk = self.stack[k]
        op = fk.op
        if op is None:
            return False
        if dependent(op, nxt):
            return True
        return (fk.reads_clock and nxt.timeout is not None) or (fk.moves_clock and nxt_reads_clock)

    def _before(self, i: int, tid_i: int, j: int) -> bool:
        """Does step ``i`` (run by ``tid_i``) happen before step ``j``?"""
        c = self.step_clocks[j]
        return tid_i < len(c) and c[tid_i] >= i + 1

    def _add_backtrack(
        self, fi: Frame, i: int, p: int, d: int, nxt: Op, nxt_reads_clock: bool = False
    ) -> None:
        """Step ``i`` races with ``p``'s next operation: make sure the state before ``i`` explores
        some way of running that operation first.

        Source sets (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014): with ``v`` the steps after
        ``i`` that do not happen after it, followed by ``p``'s next operation, any thread whose
        first event in ``v`` has no predecessor in ``v`` (an *initial* of ``v``) starts an
        execution that reverses the race. If the backtrack set (explored threads included)
        already holds an initial, nothing is added; otherwise one initial, ``p`` by preference.
        Adding ``p`` itself, or every enabled thread when ``p`` is not enabled there (the
        persistent-set rule of Flanagan-Godefroid), would explore more."""
        enabled_tids = {a[0] for a in fi.enabled}
        initials = self._initials(i, p, d, nxt, nxt_reads_clock)
        if any(a[0] in initials for a in fi.backtrack):
            return
        before = set(fi.backtrack) if self.ordered else fi.backtrack
        awake = [q for q in sorted(initials) if q in enabled_tids and all(a[0] != q for a in fi.sleep)]
        chosen = [q for q in sorted(initials) if q in enabled_tids]
        if p in awake or (not awake and p in chosen):
            pick = p
        elif awake or chosen:
            pick = (awake or chosen)[0]
        else:  # cannot happen for a sound dependency relation: stay safe, explore everything
            pick = -1
        fi.backtrack.update(a for a in fi.enabled if a[0] == pick or pick < 0)
        if self.ordered:
            for a in fi.backtrack:
                if a not in before and a not in fi.sleep:
                    self._queue(fi, a)

    def _initials(self, i: int, p: int, d: int, nxt: Op, nxt_reads_clock: bool) -> set[int]:
        """The initials of ``notdep(step i) . next(p)`` (see ``_add_backtrack``): ``nxt`` has a
        predecessor in ``v`` when a step of ``v`` happens before ``p`` or is dependent with it."""
        ti = self.stack[i].tid
        clocks = self.step_clocks
        v: list[int] = []  # steps after i that do not happen after i
        for j in range(i + 1, d + 1):
            cj = clocks[j]
            if not (ti < len(cj) and cj[ti] >= i + 1):
                v.append(j)
        initials: set[int] = set()
        seen: set[int] = set()
        for n, j in enumerate(v):
            q = self.stack[j].tid
            if q in seen:
                continue
            seen.add(q)
            cj = clocks[j]
            if not any(self.stack[k].tid < len(cj) and cj[self.stack[k].tid] >= k + 1 for k in v[:n]):
                initials.add(q)
        if p not in seen:
            cp = self.thread_clock.get(p, [])
            if not any(
                (self.stack[k].tid < len(cp) and cp[self.stack[k].tid] >= k + 1)
                or self._dep(k, nxt, nxt_reads_clock)
                for k in v
            ):
                initials.add(p)
        return initials

    # ---------------------------------------------------------------- between executions
    def advance(self) -> bool:
        """Move to the next unexplored branch; False when the search is complete."""
        if self.dpor and (IDENTS_READ[0] or LIFETIMES[0]) and self.observed.switched():
            self.idents, self.lifetimes = self.observed.idents, self.observed.lifetimes  # start again
            self.stack, self.buckets, self.heads, self.replay_len, self.pruned = [], [], [], 0, 0
            return True
        if self.ordered:
            return self._advance_ordered()
        while self.stack:
            f = self.stack[-1]
            f.done.add(f.chosen)
            allowed = set(f.allowed)
            todo = sorted(
                (a for a in f.backtrack if a not in f.done and a not in f.sleep and a in allowed),
                key=lambda a: (a[0] != f.chosen[0], a),
            )
            if todo:
                f.chosen = todo[0]
                self.replay_len = len(self.stack)
                return True
            self.pruned += len([a for a in f.allowed if a not in f.done])
            self.stack.pop()
        return False

    def _advance_ordered(self) -> bool:
        """The pending action of fewest preemptions (the one queued first among equals): replay
        the path to its node and take it."""
        for cost, bucket in enumerate(self.buckets):
            head = self.heads[cost]
            while head < len(bucket):
                f = bucket[head]
                extra = 0 if f.prev < 0 else 1
                todo = sorted(
                    (
                        a
                        for a in f.backtrack
                        if a not in f.done
                        and a not in f.sleep
                        and f.pre + (extra if a[0] != f.prev else 0) == cost
                    ),
                    key=lambda a: (a[0] != f.chosen[0], a),
                )
                if len(todo) <= 1:
                    head += 1
                if not todo:
                    continue
                if head > 4096 and head * 2 > len(bucket):
                    del bucket[:head]
                    head = 0
                self.heads[cost] = head
                a = todo[0]
                f.done.add(a)
                f.chosen = a
                self.pruned -= 1
                self.bound_now = cost
                path: list[Frame] = []
                node: Frame | None = f
                while node is not None:
                    path.append(node)
                    node = node.parent
                path.reverse()
                for i in range(len(path) - 1):
                    path[i].chosen = path[i + 1].via
                self.stack = path
                self.replay_len = len(path)
                return True
            del bucket[:]
            self.heads[cost] = 0
        return False
