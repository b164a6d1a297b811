"""The states one explorer process owns, and the expansion of its share of a BFS layer.

With one process, a partition owns every state. With ``size`` processes, a
state belongs to one of them (``ownership.py``: the hash of some of its
fields, or of all of it, modulo ``size``); a process
expands the states it owns and, for a successor it does not own, records it
for its owner with the parent and context-switch count that reached it, at
most once per owner and layer (keeping the fewest switches) and never again
once sent. The driver hands those batches over at the end of each layer.

States are numbered in discovery order per process; a *global* id is
``local * size + rank``, so parent links can point into another process.

The seen-set is keyed by fingerprint (the state's hash, an int: hashing and
comparing it costs far less than hashing a record of ``Function`` objects
twice), and every hit is confirmed by comparing the states themselves, so a
fingerprint collision can never merge two states: the second state of a
colliding pair is looked up by value in a small side table instead.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from model_checks.explorer import codec as wire
from model_checks.explorer.dispatch import Dispatch
from model_checks.explorer.invariants import InvariantChecker
from spec.language import Emitted, Instance

if TYPE_CHECKING:
    from model_checks.explorer.search import Options

Found = tuple[int, str, str, str]  # (local id, kind, property name, reason)
CHECK_EVERY = 2048  # states between two looks at the clock and the state bound
# One state's successors (``Partition.generator``): None when the state constraint keeps it from
# being expanded, else (action index, canonical successor, its fingerprint, process) per action.
Successors = list[tuple[int, Any, int, int]] | None


class Partition:
    """Seen-set, BFS bookkeeping and (with one process and liveness) the state graph."""

    # Whether the owner hashes a received state again rather than trust the sender's fingerprint
    # (``batch_for``): processes that do not share one hash seed must (Ray's, ``ray/worker.py``).
    rehash_received = False

    def __init__(
        self,
        inst: Instance,
        options: Options,
        rank: int = 0,
        size: int = 1,
        owner_fields: tuple[int, ...] | None = None,
    ) -> None:
        spec = inst.spec
        # The owner of a state is the hash of these fields (``ownership.py``), or of it all.
        self.project: Callable[[Any], Any] | None = itemgetter(*owner_fields) if owner_fields else None
        # The owner fields themselves (``project`` may map them to an owner instead, as on Ray): a
        # successor whose owner fields equal those of the state it came from has the same owner,
        # this process, which is settled without hashing them (most steps leave them alone).
        self.fields_of: Callable[[Any], Any] | None = itemgetter(*owner_fields) if owner_fields else None
        self.inst = inst
        self.options = options
        self.rank, self.size = rank, size
        self.canon = spec.symmetry_fn if options.symmetry else None
        self.checker: InvariantChecker | None = None  # made from the first initial state
        self.dispatch = Dispatch(inst, options.pc_hints)
        self.keep_graph = size == 1 and options.liveness and not options.symmetry and bool(spec.properties)
        self.started = time.perf_counter()
        self.states: list[Any] = []
        self.seen: dict[int, int] = {}
        self.clash: dict[Any, int] = {}
        self.parent = array("q")  # global ids
        self.depth = array("i")
        self.switches = array("i")
        self.last_proc = array("i")
        self.offsets = array("q", [0]) if self.keep_graph else None
        self.dst = array("q") if self.keep_graph else None
        self.proc = array("i") if self.keep_graph else None
        self.enabled: list[int] | None = [] if self.keep_graph else None
        self.fired = [0] * len(self.dispatch.names)
        self.transitions = 0
        self.constrained = 0
        # Successors owned by another process: per owner, fingerprint -> [state, parent gid, switches, pid].
        self.outgoing: list[dict[int, list[Any]]] = [{} for _ in range(size)]
        self.overflow: list[list[list[Any]]] = [[] for _ in range(size)]  # fingerprint collisions
        self.sent: dict[int, Any] = {}  # fingerprint -> a state already handed to its owner
        self.codec: wire.Codec | None = None
        self.progress: Callable[[int, int, int], None] | None = options.progress if size == 1 else None

    # ----------------------------------------------------------------------- the seen-set

    def gid(self, local: int) -> int:
        return local * self.size + self.rank

    def owner(self, key: Any, h: int) -> int:
        return (h if self.project is None else hash(self.project(key))) % self.size

    def find(self, key: Any, h: int) -> int | None:
        j = self.seen.get(h)
        if j is not None and self.states[j] != key:
            j = self.clash.get(key)
        return j

    def add(self, key: Any, h: int, parent: int, depth: int, switches: int, last_proc: int) -> int:
        j = len(self.states)
        if h in self.seen:
            self.clash[key] = j
        else:
            self.seen[h] = j
        self.states.append(key)
        self.parent.append(parent)
        self.depth.append(depth)
        self.switches.append(switches)
        self.last_proc.append(last_proc)
        return j

    def violated(self, state: Any) -> tuple[str, str] | None:
        assert self.checker is not None
        return self.checker.first_violated(state)

    def rank_of(self, found: Found) -> tuple[int, int, int]:
        """Shortest first, then the fewest context switches, then discovery order."""
        j = found[0]
        return (self.depth[j], self.switches[j], self.gid(j))

    # ----------------------------------------------------------------------- the search

    def seed(self) -> list[Found]:
        """Take this process's share of the initial states; the ones that violate an invariant."""
        c = self.inst.constants
        canon = self.canon
        found: list[Found] = []
        for s0 in self.inst.initial_states():
            key = canon(c, s0) if canon else s0
            if self.codec is None:
                self.codec = wire.Codec(key)
                self.checker = InvariantChecker(self.inst.spec.invariants, c, key)
            h = hash(key)
            if self.owner(key, h) != self.rank or self.find(key, h) is not None:
                continue
            j = self.add(self.codec.intern(key) if self.size > 1 else key, h, -1, 0, 0, -1)
            bad = self.violated(key)
            if bad:
                found.append((j, "invariant", bad[0], bad[1]))
        return found

    def generator(self) -> Callable[[Any], Successors]:
        """The successors of one state, as ``Successors``: each enabled action's canonical
        successor with its fingerprint, in dispatch order, or ``None`` when the state constraint
        keeps the state from being expanded. Runs the spec's actions; touches no bookkeeping."""
        c = self.inst.constants
        canon = self.canon
        constraint = self.inst.spec.constraint_fn
        counters = self.dispatch.counters
        plan = self.dispatch.plan
        all_calls = self.dispatch.all_calls

        def successors(state: Any) -> Successors:
            if constraint is not None and not constraint(c, state):
                return None
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
            return out

        return successors

    def placer(self, found: list[Found]) -> Callable[[int, Successors], int]:
        """Take local state ``i``'s successors into the search: seen-set, parents, depths and
        context switches, the batches for other owners, the state graph, invariant and deadlock
        checks (violations appended to ``found``); the number of transitions taken.

        The one loop every search runs per successor (``expand``, and a Ray worker taking what
        it generated ahead); its locals are bound once per layer, not once per state."""
        c = self.inst.constants
        options = self.options
        terminal = self.inst.spec.terminal_fn
        assert self.checker is not None
        violated = self.checker.first_violated
        states, seen, clash = self.states, self.seen, self.clash
        parent, depth, switches, last_proc = self.parent, self.depth, self.switches, self.last_proc
        offsets, dst, proc, enabled = self.offsets, self.dst, self.proc, self.enabled
        fired = self.fired
        size, rank = self.size, self.rank
        outgoing, overflow, sent = self.outgoing, self.overflow, self.sent
        project = self.project
        fields_of = self.fields_of if size > 1 else None
        assert self.codec is not None
        # With several processes, stored states share interned fields with the states other
        # processes send (``codec``), so that confirming a fingerprint hit rarely calls
        # ``Function.__eq__``; one process gains nothing from it (measured: ±1%).
        # Every stored state is interned, so a successor needs only its new fields looked up.
        intern = self.codec.intern_step if size > 1 else None

        def place(i: int, out: Successors) -> int:
            if out is None:
                self.constrained += 1
                if offsets is not None:
                    offsets.append(len(dst))  # type: ignore[arg-type]
                    enabled.append(0)  # type: ignore[union-attr]
                return 0
            state = states[i]
            d1 = depth[i] + 1
            sw_i = switches[i]
            lp_i = last_proc[i]
            gid_i = i * size + rank
            mine = fields_of(state) if fields_of is not None else None
            mask = 0
            for a_index, key, h, pid in out:
                fired[a_index] += 1
                sw = sw_i + (1 if lp_i >= 0 and lp_i != pid else 0)
                if size > 1 and (fields_of is None or fields_of(key) != mine):
                    owner = (h if project is None else hash(project(key))) % size
                    if owner != rank:
                        known = sent.get(h)
                        if known is not None and known == key:
                            continue  # its owner has it already, at this depth or less
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
                        key = intern(key, state)
                    if h in seen:
                        clash[key] = j
                    else:
                        seen[h] = j
                    states.append(key)
                    parent.append(gid_i)
                    depth.append(d1)
                    switches.append(sw)
                    last_proc.append(pid)
                    bad = violated(key, state)  # ``state`` is expanded, so it violates nothing
                    if bad is not None:
                        found.append((j, "invariant", bad[0], bad[1]))
                elif depth[j] == d1 and sw < switches[j]:
                    parent[j] = gid_i
                    switches[j] = sw
                    last_proc[j] = pid
                if j != i:
                    # A step that changes nothing is stuttering: it neither enables nor
                    # discharges weak fairness (WF_vars needs a vars-changing step).
                    mask |= 1 << pid
                    if dst is not None:
                        dst.append(j)
                        proc.append(pid)  # type: ignore[union-attr]
            if offsets is not None:
                offsets.append(len(dst))  # type: ignore[arg-type]
                enabled.append(mask)  # type: ignore[union-attr]
            if not out and options.deadlock and not (terminal is not None and terminal(c, state)):
                found.append((i, "deadlock", "Deadlock", "no action is enabled and the system is not done"))
            return len(out)

        return place

    def bound_reached(self, transitions: int, current_depth: int) -> str | None:
        """Looked at every ``CHECK_EVERY`` states: progress, and why to stop short, if a bound says so."""
        options = self.options
        if self.progress is not None:
            self.progress(len(self.states), self.transitions + transitions, current_depth)
        # Both bounds reached: the state bound is named, as it always was.
        if options.max_states is not None and len(self.states) > options.max_states:
            return f"state bound {options.max_states} reached"
        if options.time_limit is not None and time.perf_counter() - self.started > options.time_limit:
            return f"time limit {options.time_limit:g}s reached"
        return None

    def expand(self, start: int, end: int, current_depth: int) -> tuple[list[Found], str | None]:
        """Expand local states ``start .. end-1`` (one BFS layer): the violations found, and why
        the layer was cut short (a bound), if it was."""
        found: list[Found] = []
        successors = self.generator()
        place = self.placer(found)
        states = self.states
        incomplete: str | None = None
        transitions = 0
        for i in range(start, end):
            transitions += place(i, successors(states[i]))
            if i % CHECK_EVERY == 0:
                incomplete = self.bound_reached(transitions, current_depth)
                if incomplete:
                    break
        self.transitions += transitions
        return found, incomplete

    # ----------------------------------------------------------------------- between processes

    def batch_for(self, owner: int) -> bytes:
        """This layer's successors owned by ``owner``, encoded; they count as sent from now on."""
        assert self.codec is not None or not self.outgoing[owner]
        out, extra = self.outgoing[owner], self.overflow[owner]
        self.outgoing[owner], self.overflow[owner] = {}, []
        if self.codec is None:
            return wire.dumps([])
        entries = [*out.values(), *extra]
        # The fingerprint travels with the state when the processes share one hash seed (equal
        # values hash alike), so the owner need not hash the decoded state again.
        hashes = None if self.rehash_received else [*out, *(hash(e[0]) for e in extra)]
        data, interned = self.codec.dump_batch(entries, hashes)
        sent = self.sent
        # ``interned`` lists ``out``'s states first; ``extra`` (fingerprint collisions) is not remembered.
        for h, state in zip(out, interned, strict=False):
            if h not in sent:
                sent[h] = state
        return data

    def receive(self, data: bytes, d1: int) -> list[Found]:
        """Merge successors another process found for states this one owns (all at depth ``d1``)."""
        return self.merge_batch(self.decode_batch(data), d1)

    def decode_batch(self, data: bytes) -> list[tuple[int, Any, int, int, int]]:
        """A batch's entries as ``(fingerprint, state, parent gid, switches, pid)``, the states
        decoded (and hashed again where the sender's hashes mean nothing here)."""
        assert self.codec is not None
        return self.codec.load_batch(data, self.rehash_received)

    def merge_batch(self, entries: list[tuple[int, Any, int, int, int]], d1: int) -> list[Found]:
        """Add decoded entries (``decode_batch``) at depth ``d1``: the invariant violations found."""
        depth, switches = self.depth, self.switches
        found: list[Found] = []
        for h, key, parent, sw, pid in entries:
            j = self.find(key, h)
            if j is None:
                j = self.add(key, h, parent, d1, sw, pid)
                bad = self.violated(key)
                if bad is not None:
                    found.append((j, "invariant", bad[0], bad[1]))
            elif depth[j] == d1 and sw < switches[j]:
                self.parent[j] = parent
                switches[j] = sw
                self.last_proc[j] = pid
        return found

    def node(self, local: int) -> tuple[Any, int]:
        """A state this process owns, encoded, and its parent's global id."""
        assert self.codec is not None
        return self.codec.encode(self.states[local]), self.parent[local]
