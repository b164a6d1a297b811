"""A Ray explorer actor: one worker's share of a search, kept for check after check.

An actor is started once (a Ray worker process, Ray and the designs imported: seconds) and then
told ``start`` for each check, which forgets the previous check entirely; so a caller that runs
many checks (the tests, a notebook) pays the start-up once (``pool.py``).
"""

from __future__ import annotations

import gc
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from model_checks.explorer.layers import Report
from model_checks.explorer.partition import Found
from model_checks.explorer.ray import fingerprint, portable
from model_checks.explorer.ray.lookahead import LookAheadPartition
from model_checks.explorer.ray.profile import Row
from model_checks.explorer.search import Options
from spec.language import Instance, Spec

# A picklable callable giving the spec and constants: every worker builds its own ``Instance``
# from it (a spec holds functions; rebuilding it from importable names is cheaper and safer
# than shipping it).
Loader = Callable[[], tuple[Spec, Any]]


@dataclass(frozen=True)
class Usage:
    """One worker's share and its cost: the states it owns (its part of the seen-set) and its
    process's peak resident memory so far (start-up and earlier checks included)."""

    states: int
    peak_rss_bytes: int


def peak_rss_bytes() -> int:
    """This process's peak resident set size (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


class Worker:
    """One Ray actor's side: its partition, its frontier, the violations of its current layer."""

    def __init__(self) -> None:
        portable.install()
        gc.disable()  # as in one process: states are acyclic, the collector only rescans them
        self.part: LookAheadPartition | None = None
        self.rank, self.size = 0, 1
        self.start = 0  # the first state of the frontier
        self.found: list[Found] = []
        self.cut: str | None = None
        self._forget_times()

    def _forget_times(self) -> None:
        # One row per level (``profile.PHASES``); ``mark``: when this worker's last call returned.
        self.rows: list[Row] = []
        self.cpu_rows: list[Row] = []  # the same phases' CPU seconds (this thread's; waits: 0)
        self.level: list[float] = []
        self.level_cpu: list[float] = []
        self.ahead_cpu = 0.0
        self.ahead = 0.0  # seconds spent looking ahead since the last expansion
        self.mark = 0.0
        self.cpu_from = self.cpu_to = time.process_time()

    def begin(
        self, load: Loader, options: Options, rank: int, size: int, owner_fields: tuple[int, ...] | None
    ) -> bool:
        """Forget the previous check, if any, and take this one's spec and share."""
        self.part = None
        self.found, self.cut, self.start = [], None, 0
        self._forget_times()
        gc.collect()  # the previous check's cycles (its spec, its instance): the collector is off
        spec, constants = load()
        part = LookAheadPartition(Instance(spec, constants), options, rank, size, owner_fields)
        if size > 1:
            part.project = fingerprint.Owner(owner_fields, size)
        self.part, self.rank, self.size = part, rank, size
        return True

    def _part(self) -> LookAheadPartition:
        if self.part is None:
            raise RuntimeError("this explorer worker has no check: the driver must call begin first")
        return self.part

    def seed(self) -> Report:
        part = self._part()
        found = part.seed()
        report = self._report(len(part.states), found, None)
        self.cpu_from = self.cpu_to = time.process_time()
        self.mark = time.perf_counter()
        return report

    def expand(self, depth: int) -> list[bytes] | bytes:
        """Expand the frontier; this layer's batches, one per worker (``b""`` for itself)."""
        part = self._part()
        t0, c0 = time.perf_counter(), time.thread_time()
        end = len(part.states)
        self.found, self.cut = part.expand(self.start, end, depth)
        self.start = end
        t1, c1 = time.perf_counter(), time.thread_time()
        if self.size == 1:
            batches: list[bytes] | bytes = b""
        else:
            batches = [part.batch_for(peer) if peer != self.rank else b"" for peer in range(self.size)]
        t2, c2 = time.perf_counter(), time.thread_time()
        # wait_barrier (since the last call returned), expand, encode
        self.level = [t0 - self.mark, t1 - t0, t2 - t1]
        self.level_cpu = [c1 - c0, c2 - c1]
        self.mark = t2
        self.ahead = self.ahead_cpu = 0.0
        return batches

    def look_ahead(self, seconds: float) -> bool:
        """While other workers still expand this layer, generate the next one's successors for
        about ``seconds`` (``lookahead.py``); whether there is more to look at."""
        t0, c0 = time.perf_counter(), time.thread_time()
        more = self._part().look_ahead(self.start, seconds)
        self.ahead += time.perf_counter() - t0
        self.ahead_cpu += time.thread_time() - c0
        return more

    def merge(self, d1: int, *batches: bytes) -> Report:
        """Take the successors the other workers found for this one; report the layer."""
        part = self._part()
        t0, c0 = time.perf_counter(), time.thread_time()
        found = self.found
        entries = [part.decode_batch(batch) for batch in batches]
        t1, c1 = time.perf_counter(), time.thread_time()
        for decoded in entries:
            found.extend(part.merge_batch(decoded, d1))
        self.found = []
        report = self._report(len(part.states) - self.start, found, self.cut)
        t2, c2 = time.perf_counter(), time.thread_time()
        barrier, expand, encode = self.level or [0.0, 0.0, 0.0]
        self.rows.append((expand, encode, self.ahead, t0 - self.mark - self.ahead, t1 - t0, t2 - t1, barrier))
        expand_cpu, encode_cpu = self.level_cpu or [0.0, 0.0]
        self.cpu_rows.append((expand_cpu, encode_cpu, self.ahead_cpu, 0.0, c1 - c0, c2 - c1, 0.0))
        self.mark = t2
        self.cpu_to = time.process_time()
        return report

    def profile(self) -> tuple[list[Row], list[Row], float]:
        """This worker's rows of its last check (``profile.PHASES``, one per level): wall
        seconds, and its thread's CPU seconds; and its process's CPU seconds in the search
        (Ray's threads in it included)."""
        return self.rows, self.cpu_rows, self.cpu_to - self.cpu_from

    def node(self, local: int) -> tuple[Any, int]:
        return self._part().node(local)

    def usage(self) -> Usage:
        """What this worker holds of the current check, and its peak memory: how memory grows
        per worker (docs/scale-out.md, Memory)."""
        return Usage(len(self._part().states), peak_rss_bytes())

    def _report(self, frontier: int, found: list[Found], incomplete: str | None) -> Report:
        return Report.of(self._part(), frontier, found, incomplete)
