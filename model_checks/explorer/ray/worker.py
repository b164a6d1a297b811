"""A Ray explorer actor: one worker's share of a search, kept for check after check.

An actor is started once (a Ray worker process, Ray and the designs imported: seconds) and then
told ``start`` for each check, which forgets the previous check entirely; so a caller that runs
many checks (the tests, a notebook) pays the start-up once (``pool.py``).
"""

from __future__ import annotations

import gc
import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from model_checks.explorer.layers import Report
from model_checks.explorer.partition import Found, Partition
from model_checks.explorer.ray import fingerprint, portable
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


class RayPartition(Partition):
    """A partition whose fingerprints stay in its process: a received state is hashed here."""

    rehash_received = True


class Worker:
    """One Ray actor's side: its partition, its frontier, the violations of its current layer."""

    def __init__(self) -> None:
        portable.install()
        gc.disable()  # as in one process: states are acyclic, the collector only rescans them
        self.part: RayPartition | None = None
        self.rank, self.size = 0, 1
        self.start = 0  # the first state of the frontier
        self.found: list[Found] = []
        self.cut: str | None = None

    def begin(
        self, load: Loader, options: Options, rank: int, size: int, owner_fields: tuple[int, ...] | None
    ) -> bool:
        """Forget the previous check, if any, and take this one's spec and share."""
        self.part = None
        self.found, self.cut, self.start = [], None, 0
        gc.collect()  # the previous check's cycles (its spec, its instance): the collector is off
        spec, constants = load()
        part = RayPartition(Instance(spec, constants), options, rank, size, owner_fields)
        if size > 1:
            part.project = fingerprint.Owner(owner_fields, size)
        self.part, self.rank, self.size = part, rank, size
        return True

    def _part(self) -> RayPartition:
        if self.part is None:
            raise RuntimeError("this explorer worker has no check: the driver must call begin first")
        return self.part

    def seed(self) -> Report:
        part = self._part()
        found = part.seed()
        return self._report(len(part.states), found, None)

    def expand(self, depth: int) -> list[bytes] | bytes:
        """Expand the frontier; this layer's batches, one per worker (``b""`` for itself)."""
        part = self._part()
        end = len(part.states)
        self.found, self.cut = part.expand(self.start, end, depth)
        self.start = end
        if self.size == 1:
            return b""
        return [part.batch_for(peer) if peer != self.rank else b"" for peer in range(self.size)]

    def merge(self, d1: int, *batches: bytes) -> Report:
        """Take the successors the other workers found for this one; report the layer."""
        part = self._part()
        found = self.found
        for batch in batches:
            found.extend(part.receive(batch, d1))
        self.found = []
        return self._report(len(part.states) - self.start, found, self.cut)

    def node(self, local: int) -> tuple[Any, int]:
        return self._part().node(local)

    def usage(self) -> Usage:
        """What this worker holds of the current check, and its peak memory: how memory grows
        per worker (docs/scale-out.md, Memory)."""
        return Usage(len(self._part().states), peak_rss_bytes())

    def _report(self, frontier: int, found: list[Found], incomplete: str | None) -> Report:
        return Report.of(self._part(), frontier, found, incomplete)
