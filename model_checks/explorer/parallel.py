"""Breadth-first search shared by several processes, layer by layer.

The calling process is rank 0; ranks 1..N-1 are forked from it (so they share
the spec's functions and the string-hash seed without pickling anything). A
state belongs to the process ``hash(state) % N`` (``partition.py``). Each
layer, every process expands the states it owns at that depth, then:

1. hands every other process the successors it owns, one batch per owner
   (``codec``: flat tuples through ``marshal``), sent from a thread so that
   two processes sending to each other at once cannot both block on a full
   pipe;
2. merges the batches it receives: new states join its next layer, and a
   state reached again at the same depth keeps the parent with the fewest
   context switches, as in one process;
3. tells every other process how its layer went (states, frontier, the best
   violation it found, a bound it hit); all processes take the same decision
   from the same facts: go on, or stop with a verdict.

The layers stay synchronous, so the first violation found is a shortest one,
exactly as with one process; among equally short ones the choice (fewest
context switches, then id) can differ from one process's. The path of a
counterexample is rebuilt by following parent links across processes.
No state graph is kept, so liveness is not checked here (``check`` says so).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import threading
import time
import traceback
from array import array
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from model_checks.explorer import ownership
from model_checks.explorer.outcome import HOLDS, INCOMPLETE, VIOLATED, Graph, Outcome, Stats, Violation
from model_checks.explorer.partition import Found, Partition
from spec.language import Instance

if TYPE_CHECKING:
    from model_checks.explorer.search import Options


class WorkerFailed(RuntimeError):
    """Another explorer process failed or vanished; the search cannot give a verdict."""


@dataclass
class Report:
    """What one process says about itself at the end of a layer (small: pickled)."""

    states: int
    frontier: int
    transitions: int
    constrained: int
    fired: list[int]
    best: tuple[tuple[int, int, int], str, str, str] | None  # (rank key, kind, name, reason)
    incomplete: str | None

    @classmethod
    def of(cls, part: Partition, frontier: int, found: list[Found], incomplete: str | None) -> Report:
        """A partition's report: its counts, and the first of ``found`` in rank order."""
        best = None
        if found:
            first = min(found, key=part.rank_of)
            _, kind, name, reason = first
            best = (part.rank_of(first), kind, name, reason)
        return cls(
            states=len(part.states),
            frontier=frontier,
            transitions=part.transitions,
            constrained=part.constrained,
            fired=list(part.fired),
            best=best,
            incomplete=incomplete,
        )


def search_parallel(inst: Instance, options: Options) -> Outcome:
    """``search`` with ``options.workers`` processes; no graph is kept (no liveness)."""
    size = options.workers
    canon = inst.spec.symmetry_fn if options.symmetry else None
    owner_fields = ownership.owner_fields(inst, canon, size)
    ctx = multiprocessing.get_context("fork")
    pipes: dict[tuple[int, int], Connection] = {}
    for a in range(size):
        for b in range(a + 1, size):
            pipes[(a, b)], pipes[(b, a)] = ctx.Pipe(duplex=True)
    children = []
    for rank in range(1, size):
        child = ctx.Process(target=_child, args=(inst, options, rank, size, owner_fields, pipes), daemon=True)
        child.start()
        children.append(child)
    for (a, _), conn in pipes.items():
        if a != 0:
            conn.close()  # rank 0 keeps its own ends only, so a dead child reads as end of file
    peers = {b: conn for (a, b), conn in pipes.items() if a == 0}
    try:
        return _Driver(inst, options, 0, size, owner_fields, peers).run()
    finally:
        for conn in peers.values():
            conn.close()
        for child in children:
            child.join(timeout=5)
            if child.is_alive():
                child.terminate()
                child.join()


def _child(
    inst: Instance,
    options: Options,
    rank: int,
    size: int,
    owner_fields: tuple[int, ...] | None,
    pipes: dict[tuple[int, int], Connection],
) -> None:
    for (a, _), conn in pipes.items():
        if a != rank:
            conn.close()
    peers = {b: conn for (a, b), conn in pipes.items() if a == rank}
    try:
        _Driver(inst, options, rank, size, owner_fields, peers).run()
    except WorkerFailed:
        pass  # rank 0 reports what went wrong
    except BaseException:
        message = b"e" + f"explorer process {rank} failed:\n{traceback.format_exc()}".encode()
        for conn in peers.values():
            with contextlib.suppress(OSError):  # that process is gone already
                conn.send_bytes(message)


class _Driver:
    """One process's side of the layer-synchronous protocol."""

    def __init__(
        self,
        inst: Instance,
        options: Options,
        rank: int,
        size: int,
        owner_fields: tuple[int, ...] | None,
        peers: dict[int, Connection],
    ) -> None:
        self.inst, self.options = inst, options
        self.rank, self.size = rank, size
        self.peers = dict(sorted(peers.items()))
        self.part = Partition(inst, options, rank, size, owner_fields)

    # ------------------------------------------------------------------ messages
    # Every message is bytes with a one-byte tag: b"s" a batch of states, b"o" a pickled
    # object (a report, a question, an answer), b"e" another process's failure.

    def _recv(self, peer: int, tag: bytes) -> bytes:
        try:
            data = self.peers[peer].recv_bytes()
        except (EOFError, OSError) as problem:
            raise WorkerFailed(f"explorer process {peer} vanished") from problem
        if data[:1] == b"e":
            raise WorkerFailed(data[1:].decode())
        if data[:1] != tag:
            raise WorkerFailed(f"explorer process {peer} is out of step: sent {data[:1]!r}, not {tag!r}")
        return data[1:]

    def _send_object(self, peer: int, value: Any) -> None:
        self.peers[peer].send_bytes(b"o" + pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))

    def _recv_object(self, peer: int) -> Any:
        return pickle.loads(self._recv(peer, b"o"))

    def _exchange_states(self, d1: int) -> list[Found]:
        failures: list[BaseException] = []

        def send(peer: int, data: bytes) -> None:
            try:
                self.peers[peer].send_bytes(data)
            except BaseException as problem:  # reported below, in the main thread
                failures.append(problem)

        # One sending thread per peer: a send blocks until that peer reads, and every
        # process reads its peers in rank order while its own batches are in flight.
        senders = [
            threading.Thread(target=send, args=(peer, b"s" + self.part.batch_for(peer)), daemon=True)
            for peer in self.peers
        ]
        for sender in senders:
            sender.start()
        found = []
        for peer in self.peers:
            found.extend(self.part.receive(self._recv(peer, b"s"), d1))
        for sender in senders:
            sender.join()
        if failures:
            raise WorkerFailed(f"explorer process {self.rank} could not send: {failures[0]}")
        return found

    def _report(self, frontier: int, found: list[Found], incomplete: str | None) -> Report:
        return Report.of(self.part, frontier, found, incomplete)

    def _everyone(self, mine: Report) -> list[Report]:
        """Every process's report, in rank order (the same list in every process)."""
        for peer in self.peers:
            self._send_object(peer, mine)
        reports = {self.rank: mine}
        for peer in self.peers:
            reports[peer] = self._recv_object(peer)
        return [reports[r] for r in range(self.size)]

    # ------------------------------------------------------------------ the search

    def run(self) -> Outcome:
        part, options = self.part, self.options
        started = part.started
        found = part.seed()
        reports = self._everyone(self._report(len(part.states), found, None))
        frontier_start = 0
        current_depth = 0
        deepest = 0  # the last layer that had states
        verdict: str | None = None
        reason: str | None = None
        while True:
            frontier = sum(r.frontier for r in reports)
            if frontier:
                deepest = current_depth
            best = min((r.best for r in reports if r.best is not None), default=None)
            if best is not None:
                verdict = VIOLATED
                break
            reason = next((r.incomplete for r in reports if r.incomplete), None)
            if reason is None and options.max_states is not None:
                total = sum(r.states for r in reports)
                if total > options.max_states:
                    reason = f"state bound {options.max_states} reached"
            if reason is not None:
                verdict = INCOMPLETE
                break
            if frontier == 0:
                break
            if self.rank == 0 and options.progress is not None:
                options.progress(
                    sum(r.states for r in reports), sum(r.transitions for r in reports), current_depth
                )
            if options.max_depth is not None and current_depth >= options.max_depth:
                reason = f"depth bound {options.max_depth} reached with {frontier} states unexpanded"
                verdict = INCOMPLETE
                break
            frontier_end = len(part.states)
            found, cut = part.expand(frontier_start, frontier_end, current_depth)
            found.extend(self._exchange_states(current_depth + 1))
            frontier_start = frontier_end
            current_depth += 1
            reports = self._everyone(self._report(len(part.states) - frontier_start, found, cut))
        if self.rank != 0:
            self._serve()
            return Outcome(verdict or HOLDS, Stats(), None, path_graph([], []))
        stats = Stats(
            states=sum(r.states for r in reports),
            transitions=sum(r.transitions for r in reports),
            depth=deepest,
            action_names=part.dispatch.names,
            fired=[sum(counts) for counts in zip(*(r.fired for r in reports), strict=True)],
            constrained=sum(r.constrained for r in reports),
        )
        if verdict is None and stats.constrained:
            verdict, reason = (
                INCOMPLETE,
                f"the state constraint kept {stats.constrained} states from being expanded",
            )
        try:
            if verdict == VIOLATED:
                assert best is not None
                (depth, _, gid), kind, name, why = best
                states, parents = self._path(gid)
                stats.depth = depth
                stats.seconds = time.perf_counter() - started
                graph = path_graph(states, parents)
                violation = Violation(kind, name, why, list(range(len(states))))
                return Outcome(VIOLATED, stats, violation, graph)
        finally:
            for peer in self.peers:
                self._send_object(peer, ("bye",))
        stats.seconds = time.perf_counter() - started
        graph = path_graph([], [])
        if verdict == INCOMPLETE:
            return Outcome(INCOMPLETE, stats, None, graph, incomplete_reason=reason)
        return Outcome(HOLDS, stats, None, graph)

    def _path(self, gid: int) -> tuple[list[Any], list[int]]:
        """The states from an initial state to ``gid``, following parents across processes."""
        part = self.part
        assert part.codec is not None
        states: list[Any] = []
        while gid >= 0:
            owner, local = gid % self.size, gid // self.size
            if owner == self.rank:
                states.append(part.states[local])
                gid = part.parent[local]
            else:
                self._send_object(owner, ("node", local))
                encoded, gid = self._recv_object(owner)
                states.append(part.codec.decode(encoded))
        states.reverse()
        return states, list(range(-1, len(states) - 1))

    def _serve(self) -> None:
        """After the search: answer rank 0's questions about this process's states until it is done."""
        if 0 not in self.peers:
            return
        while True:
            message = self._recv_object(0)
            if message[0] == "bye":
                return
            _, local = message
            self._send_object(0, self.part.node(local))


def path_graph(states: list[Any], parents: list[int]) -> Graph:
    """A graph holding only a counterexample's path (the processes keep no full graph)."""
    n = len(states)
    return Graph(
        states=states,
        parent=array("q", parents),
        depth=array("i", range(n)),
        switches=array("i", [0] * n),
        last_proc=array("i", [-1] * n),
        offsets=None,
        dst=None,
        proc=None,
        enabled=None,
        processes=[],
    )
