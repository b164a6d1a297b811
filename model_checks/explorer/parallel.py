"""Breadth-first search shared by several processes, layer by layer.

The calling process is rank 0; ranks 1..N-1 are forked from it (so they share
the spec's functions and the string-hash seed without pickling anything). A
state belongs to the process ``hash(state) % N`` (``partition.py``). Each
layer, every process expands the states it owns at that depth, then:

1. hands every other process the successors it owns, one batch per owner
   (``codec``: distinct field values and indexes), sent from a thread so that
   two processes sending to each other at once cannot both block on a full
   pipe;
2. merges the batches it receives: new states join its next layer, and a
   state reached again at the same depth keeps the parent with the fewest
   context switches, as in one process;
3. tells every other process how its layer went (states, frontier, the best
   violation it found, a bound it hit: ``layers.Report``); all processes take
   the same decision from the same facts (``layers.Layers``): go on, or stop
   with a verdict.

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
import traceback
from multiprocessing.connection import Connection
from typing import TYPE_CHECKING, Any

from model_checks.explorer import ownership
from model_checks.explorer.layers import Layers, Report, path_graph
from model_checks.explorer.outcome import HOLDS, Outcome, Stats
from model_checks.explorer.partition import Found, Partition
from spec.language import Instance

if TYPE_CHECKING:
    from model_checks.explorer.search import Options


class WorkerFailed(RuntimeError):
    """Another explorer process failed or vanished; the search cannot give a verdict."""


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
        part = self.part
        layers = Layers(self.options, progress=self.rank == 0)
        found = part.seed()
        reports = self._everyone(self._report(len(part.states), found, None))
        frontier_start = 0
        while layers.go_on(reports):
            frontier_end = len(part.states)
            found, cut = part.expand(frontier_start, frontier_end, layers.depth)
            found.extend(self._exchange_states(layers.depth + 1))
            frontier_start = frontier_end
            layers.depth += 1
            reports = self._everyone(self._report(len(part.states) - frontier_start, found, cut))
        if self.rank != 0:
            self._serve()
            return Outcome(layers.verdict or HOLDS, Stats(), None, path_graph([], []))
        try:
            return layers.outcome(reports, part.dispatch.names, part.started, self._path)
        finally:
            for peer in self.peers:
                self._send_object(peer, ("bye",))

    def _path(self, gid: int) -> list[Any]:
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
        return states

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
