"""Breadth-first exploration shared by Ray workers, layer by layer, with the answers of one process.

The protocol is ``parallel.py``'s, with Ray as the transport: each worker is an actor holding one
``Partition`` (the states it owns: its share of the seen-set); the driver (this process) holds no
states. Per BFS layer:

1. every worker expands its frontier and returns one batch per other worker: the successors that
   worker owns (``codec``: one bytes object per batch, distinct field values and indexes), as separate
   Ray objects, so a batch goes from worker to worker through the object store, not through
   the driver;
   while the others are still at it, a worker that is done looks ahead at the next layer
   (``lookahead.py``), in short calls, so that the uneven shares of a layer cost less waiting;
2. every worker merges the batches addressed to it and reports its layer (``layers.Report``);
3. the driver takes the decision all processes take in ``parallel.py`` (``layers.Layers``): go on,
   or stop with a verdict. The barrier keeps the layers synchronous, so the first violation is a
   shortest one.

What differs from forked processes: Ray workers do not share a string-hash seed, so the owner of a
state is a digest of its owner fields (``fingerprint.py``), a received state is hashed again by
its owner, and functions are pickled by value (``portable.py``). The counterexample's path is
rebuilt by asking each state's owner for it, then replayed as in one process.

Liveness needs the whole state graph in one process: not supported here (``check_ray`` refuses).
The actors' side is ``worker.py``; ``pool.py`` keeps them from one check to the next; the result
is built by ``explorer/check.py`` from this engine's outcome, as for one process.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import replace
from typing import Any

from model_checks.explorer import codec as wire
from model_checks.explorer import ownership
from model_checks.explorer.check import CheckResult, Engine, NotSupported, check
from model_checks.explorer.layers import Layers, Report
from model_checks.explorer.outcome import Outcome
from model_checks.explorer.parallel import WorkerFailed
from model_checks.explorer.ray import fingerprint, portable
from model_checks.explorer.ray.pool import Pool
from model_checks.explorer.ray.session import connect
from model_checks.explorer.ray.worker import Loader
from model_checks.explorer.search import Options
from spec.language import Instance, Spec, SpecError

__all__ = ["LIVENESS_UNSUPPORTED", "Loader", "NotSupported", "Pool", "check_ray", "search_ray"]

LIVENESS_UNSUPPORTED = (
    "liveness is not supported on the ray engine yet: it needs the whole state graph in one process;"
    " rerun with --no-liveness (safety and deadlock on Ray) or without --engine ray"
)


def search_ray(pool: Pool, load: Loader, inst: Instance, options: Options, workers: int) -> Outcome:
    """``search`` on ``workers`` actors of ``pool``; no graph is kept (no liveness).

    Whatever ends the search early (a worker failed, an interrupt) discards the actors it used:
    one may still be running a call of this search.
    """
    portable.install()
    canon = inst.spec.symmetry_fn if options.symmetry else None
    try:
        owner_fields = ownership.owner_fields(inst, canon, workers, fingerprint.digest)
    except TypeError as problem:  # a state value without a canonical encoding (``fingerprint.py``)
        raise SpecError(str(problem)) from None
    actors = pool.take(workers)
    try:
        return _Driver(pool.ray, actors, inst, options).run(load, owner_fields)
    except BaseException:
        pool.discard(actors)
        raise


# One look-ahead call's work: long enough that Ray's round trip (about a millisecond) is small
# beside it, short enough that the merge waiting behind the last one is hardly delayed.
LOOK_AHEAD_SECONDS = 0.02


class _Driver:
    def __init__(self, ray: Any, actors: list[Any], inst: Instance, options: Options) -> None:
        self.ray, self.actors, self.inst, self.options = ray, actors, inst, options
        self.size = len(actors)

    def _get(self, refs: Any) -> Any:
        try:
            return self.ray.get(refs)
        except self.ray.exceptions.RayError as problem:
            raise WorkerFailed(f"a ray explorer worker failed: {problem}") from None

    def _layer(self, depth: int) -> list[Report]:
        actors, size = self.actors, self.size
        if size == 1:
            # An actor runs its calls in order, so merge follows expand; both are awaited, so
            # that an expand that failed is reported, not merged over.
            expanded = actors[0].expand.remote(depth)
            return self._get([expanded, actors[0].merge.remote(depth + 1)])[1:]  # type: ignore[no-any-return]
        batches = [actor.expand.options(num_returns=size).remote(depth) for actor in actors]
        if LOOK_AHEAD_SECONDS > 0:
            self._look_ahead([b[0] for b in batches])
        merged = [
            actors[r].merge.remote(depth + 1, *(batches[s][r] for s in range(size) if s != r))
            for r in range(size)
        ]
        return self._get(merged)  # type: ignore[no-any-return]

    def _look_ahead(self, expanded: list[Any]) -> None:
        """Until every worker has expanded the layer (``expanded``: one of each one's batches),
        let those that have look ahead at the next one in short calls (``lookahead.py``): the
        merge called next waits for at most one of them."""
        ray, actors = self.ray, self.actors
        expanding = {ref: r for r, ref in enumerate(expanded)}
        ahead: dict[Any, int] = {}  # a look-ahead call in flight -> its worker
        while expanding:
            ready, _ = ray.wait([*expanding, *ahead], num_returns=1)
            for ref in ready:
                if ref in expanding:
                    rank = expanding.pop(ref)
                else:
                    rank = ahead.pop(ref)
                    if not self._get(ref):
                        continue  # nothing known is left to look at
                if expanding:
                    ahead[actors[rank].look_ahead.remote(LOOK_AHEAD_SECONDS)] = rank

    def run(self, load: Loader, owner_fields: tuple[int, ...] | None) -> Outcome:
        sent = replace(self.options, progress=None, liveness=False)
        self._get([a.begin.remote(load, sent, r, self.size, owner_fields) for r, a in enumerate(self.actors)])
        started = time.perf_counter()  # the search, without the workers' start-up
        layers = Layers(self.options, timed_from=started)
        reports: list[Report] = self._get([actor.seed.remote() for actor in self.actors])
        while layers.go_on(reports):
            reports = self._layer(layers.depth)
            layers.depth += 1
        names = [action.name for action, _ in self.inst.bound]
        return layers.outcome(reports, names, started, self._path)

    def _path(self, gid: int) -> list[Any]:
        """The states from an initial state to ``gid``, asking each state's owner for it."""
        inst = self.inst
        canon = inst.spec.symmetry_fn if self.options.symmetry else None
        first = inst.initial_states()[0]
        codec = wire.Codec(canon(inst.constants, first) if canon else first)
        states: list[Any] = []
        while gid >= 0:
            encoded, gid = self._get(self.actors[gid % self.size].node.remote(gid // self.size))
            states.append(codec.decode(encoded))
        states.reverse()
        return states


def check_ray(
    spec: Spec,
    constants: Any,
    load: Loader,
    options: Options | None = None,
    config: str = "custom",
    *,
    workers: int = 2,
    address: str | None = None,
    pool: Pool | None = None,
) -> CheckResult:
    """``check`` on Ray: safety and deadlock by ``workers`` actors, joined to the cluster at
    ``address`` (or a local Ray). ``load()`` must give ``(spec, constants)`` again in a worker.
    ``pool``: take the actors from it and leave them running (default: start them for this
    check and end them after).

    ``NotSupported`` for liveness (run with ``liveness=False``), ``SpecError`` for a broken spec,
    ``session.RayUnavailable`` when Ray is missing or too small, ``WorkerFailed`` when a worker fails.
    """

    def search(inst: Instance, options: Options) -> Outcome:
        ray = connect(address, workers)
        with contextlib.nullcontext(pool) if pool is not None else Pool(ray) as actors:
            return search_ray(actors, load, inst, options, workers)

    engine = Engine(
        search=search,
        workers=workers,
        note=f"explored on Ray by {workers} worker{'s' if workers > 1 else ''}",
        liveness_refusal=LIVENESS_UNSUPPORTED,
    )
    return check(spec, constants, options, config, engine=engine)
