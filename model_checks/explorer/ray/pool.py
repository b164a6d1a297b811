"""Explorer actors kept between checks, so that a run of checks starts its Ray workers once.

Starting an actor costs a Ray worker process and its imports, seconds on a busy machine, while a
small check takes a fraction of that. A ``Pool`` keeps its actors for check after check (each
``begin`` forgets the previous one) until it is closed; an actor that failed, or whose check
was abandoned mid-call, is not trusted again: ``discard`` ends the actors of that search and
the next check starts fresh ones. Each actor holds one Ray CPU while it lives, so a pool left open can keep a
small cluster from running anything else.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

from model_checks.explorer.ray.profile import summarize
from model_checks.explorer.ray.worker import Usage, Worker


class Pool:
    """``take(n)``: ``n`` explorer actors, those already running first; ``close`` ends them."""

    def __init__(self, ray: Any) -> None:
        self.ray = ray
        self.actors: list[Any] = []
        self.started = 0  # actors started over the pool's life (reuse shows as fewer than checks)
        self._remote = ray.remote(num_cpus=1, max_restarts=0)(Worker)

    def take(self, n: int) -> list[Any]:
        while len(self.actors) < n:
            self.actors.append(self._remote.remote())
            self.started += 1
        return self.actors[:n]

    def usage(self, n: int) -> list[Usage]:
        """The first ``n`` actors' shares of their last check and their peak memory, by rank."""
        if n > len(self.actors):
            raise ValueError(f"the pool has {len(self.actors)} actors; usage of {n} asked")
        return list(self.ray.get([a.usage.remote() for a in self.actors[:n]]))

    def profile(self, n: int) -> dict[str, Any]:
        """Where the first ``n`` actors' time went in their last check (``profile.summarize``)."""
        if n > len(self.actors):
            raise ValueError(f"the pool has {len(self.actors)} actors; a profile of {n} asked")
        answers = self.ray.get([a.profile.remote() for a in self.actors[:n]])
        return summarize([a[0] for a in answers], [a[1] for a in answers], [a[2] for a in answers])

    def discard(self, actors: list[Any] | None = None) -> None:
        """End ``actors`` (default: all of the pool's); the next ``take`` starts new ones."""
        gone = list(self.actors if actors is None else actors)
        self.actors = [a for a in self.actors if all(a is not g for g in gone)]
        for actor in gone:
            self.ray.kill(actor)

    def close(self) -> None:
        self.discard()

    def __enter__(self) -> Pool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
