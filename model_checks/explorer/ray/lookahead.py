"""A Ray worker's partition that works ahead while it waits for the other workers' batches.

The layers are synchronous (a global barrier keeps the first violation a shortest one), and
their shares are uneven level by level even when the totals are not: owner fields keep most
successors with the worker that found them, so a level's states bunch on one worker
(``docs/scale-out.md``, Where the time goes). A worker that has expanded its share of level
``d`` then waits for the slowest one. Most of its level ``d + 1`` is already known by then (the
successors it owns itself), so it can do the costly part of expanding them: running the
actions, canonicalising and hashing the successors (``look_ahead``).

Nothing it finds that way is taken into the search yet: it does not know the rest of level
``d + 1`` (the other workers' batches, some of them with fewer context switches), and the
search may stop at level ``d + 1`` (a violation, a bound). When the driver asks for level
``d + 1``, ``expand`` first takes the successors generated ahead, state by state in frontier
order, exactly as the loop of ``Partition.expand`` would have (the same seen-set lookups,
parents, counts, invariant and deadlock checks, in the same order), then expands the rest of
the layer as usual. So the states, their numbering and every answer are those of a worker
that did not look ahead; only when the work was done differs. If the search stops instead, the
work ahead is dropped with the actor's check.
"""

from __future__ import annotations

import time
from typing import Any

from model_checks.explorer.partition import CHECK_EVERY, Found, Partition
from spec.language import Emitted

# What looking ahead at one state gave: ``None`` when the state constraint keeps it from being
# expanded, else its successors as (action index, canonical successor, its hash, process).
Ahead = list[tuple[int, Any, int, int]] | None


class LookAheadPartition(Partition):
    """A partition whose next layer can be partly expanded before the current one is closed."""

    # A Ray worker's fingerprints stay in its process: a received state is hashed here.
    rehash_received = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        assert not self.keep_graph, "a Ray worker keeps no state graph"
        self.ahead: list[Ahead] = []  # for states ``ahead_from``, ``ahead_from + 1``, ...
        self.ahead_from = 0
        self.ahead_failed = False  # a state of this layer raised when looked at ahead

    def look_ahead(self, start: int, seconds: float) -> bool:
        """Generate the successors of the states from ``start`` on (the next layer's, as known so
        far) for about ``seconds``; whether any known state is left to look at."""
        if self.ahead_from != start:  # a new layer: what was generated before has been taken
            self.ahead, self.ahead_from, self.ahead_failed = [], start, False
        if self.ahead_failed:
            return False
        c = self.inst.constants
        canon = self.canon
        constraint = self.inst.spec.constraint_fn
        counters = self.dispatch.counters
        plan = self.dispatch.plan
        all_calls = self.dispatch.all_calls
        states, ahead = self.states, self.ahead
        end = len(states)
        i = start + len(ahead)
        until = time.perf_counter() + seconds
        while i < end:
            state = states[i]
            try:
                if constraint is not None and not constraint(c, state):
                    ahead.append(None)
                else:
                    out: list[tuple[int, Any, int, int]] = []
                    calls = plan(tuple([pc(c, state, p) for pc, p in counters])) if counters else all_calls
                    for a_index, fn, args, pid in calls:
                        result = fn(c, state, *args)
                        if result is None:
                            continue
                        if type(result) is Emitted:
                            result = result.state
                        key = canon(c, result) if canon else result
                        out.append((a_index, key, hash(key), pid))
                    ahead.append(out)
            except Exception:
                # A spec that raises here may never be asked to: the search can stop at this
                # layer (a violation, a bound) before the state is expanded. Stop looking ahead;
                # ``expand`` runs this state the usual way, and raises then if it is reached.
                self.ahead_failed = True
                return False
            i += 1
            if i % 64 == 0 and time.perf_counter() > until:
                break
        return i < end

    def expand(self, start: int, end: int, current_depth: int) -> tuple[list[Found], str | None]:
        """``Partition.expand``, taking first what ``look_ahead`` generated for this layer."""
        found: list[Found] = []
        taken = 0
        if self.ahead_from == start and self.ahead:
            taken = min(len(self.ahead), end - start)
            incomplete = self._take(start, start + taken, found)
            self.ahead = []
            if incomplete is not None:
                return found, incomplete
        self.ahead_from = -1
        more, incomplete = super().expand(start + taken, end, current_depth)
        found.extend(more)
        return found, incomplete

    def _take(self, start: int, stop: int, found: list[Found]) -> str | None:
        """The loop of ``Partition.expand`` over states ``start .. stop-1``, their successors
        already generated (``ahead``): every step in the same order, so the same outcome."""
        c = self.inst.constants
        options = self.options
        terminal = self.inst.spec.terminal_fn
        assert self.checker is not None
        violated = self.checker.first_violated
        states, seen, clash = self.states, self.seen, self.clash
        parent, depth, switches, last_proc = self.parent, self.depth, self.switches, self.last_proc
        fired = self.fired
        size, rank = self.size, self.rank
        outgoing, overflow, sent = self.outgoing, self.overflow, self.sent
        project = self.project
        fields_of = self.fields_of if size > 1 else None
        mine: Any = None
        assert self.codec is not None
        intern = self.codec.intern if size > 1 else None
        ahead, base = self.ahead, self.ahead_from
        incomplete: str | None = None
        transitions = 0
        for i in range(start, stop):
            out = ahead[i - base]
            state = states[i]
            if out is None:
                self.constrained += 1
                continue
            d1 = depth[i] + 1
            sw_i = switches[i]
            lp_i = last_proc[i]
            gid_i = i * size + rank
            if fields_of is not None:
                mine = fields_of(state)
            for a_index, key, h, pid in out:
                fired[a_index] += 1
                sw = sw_i + (1 if lp_i >= 0 and lp_i != pid else 0)
                if size > 1 and (fields_of is None or fields_of(key) != mine):
                    owner = (h if project is None else hash(project(key))) % size
                    if owner != rank:
                        known = sent.get(h)
                        if known is not None and known == key:
                            continue
                        box = outgoing[owner]
                        entry = box.get(h)
                        if entry is None:
                            box[h] = [key, gid_i, sw, pid]
                        elif entry[0] == key:
                            if sw < entry[2]:
                                entry[1], entry[2], entry[3] = gid_i, sw, pid
                        else:
                            overflow[owner].append([key, gid_i, sw, pid])
                        continue
                j = seen.get(h)
                if j is not None and states[j] != key:
                    j = clash.get(key)
                if j is None:
                    j = len(states)
                    if intern is not None:
                        key = intern(key)
                    if h in seen:
                        clash[key] = j
                    else:
                        seen[h] = j
                    states.append(key)
                    parent.append(gid_i)
                    depth.append(d1)
                    switches.append(sw)
                    last_proc.append(pid)
                    bad = violated(key, state)
                    if bad is not None:
                        found.append((j, "invariant", bad[0], bad[1]))
                elif depth[j] == d1 and sw < switches[j]:
                    parent[j] = gid_i
                    switches[j] = sw
                    last_proc[j] = pid
            transitions += len(out)
            if not out and options.deadlock and not (terminal is not None and terminal(c, state)):
                found.append((i, "deadlock", "Deadlock", "no action is enabled and the system is not done"))
            if i % CHECK_EVERY == 0:
                if options.time_limit is not None and time.perf_counter() - self.started > options.time_limit:
                    incomplete = f"time limit {options.time_limit:g}s reached"
                if options.max_states is not None and len(states) > options.max_states:
                    incomplete = f"state bound {options.max_states} reached"
                if incomplete:
                    break
        self.transitions += transitions
        return incomplete
