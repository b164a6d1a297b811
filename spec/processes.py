"""The processes specs share: workers ``w<i>`` (the lane and the job specs) and, in the lane specs
(``spec/work_lane_state.py`` and the lock-free lane that extends it, ``spec/schedule_gate_state.py``,
``spec/akka_mailbox_state.py``), producers ``p<i>``, each posting along its line of the
constants' ``script``.

A spec's ``Constants`` inherits ``Scripted`` for the names and each producer's k-th post; a trace
validator overrides these methods to bind the spec's processes to a trace's threads and posts,
and the domains below follow it because they ask the constants.
"""

from __future__ import annotations

from typing import Any, ClassVar, Generic, Protocol, TypeVar

T = TypeVar("T")


class Scripted(Generic[T]):
    """Methods for a frozen ``Constants`` dataclass with ``workers`` and ``script`` fields."""

    workers: int
    script: tuple[tuple[T, ...], ...]  # script[i]: what producer p<i> posts to, in order
    # The fields a trace header's ``config`` object carries, in its order.
    HEADER: ClassVar[tuple[str, ...]] = ()

    def producer_names(self) -> tuple[str, ...]:
        return tuple(f"p{i}" for i in range(len(self.script)))

    def worker_names(self) -> tuple[str, ...]:
        return tuple(f"w{i}" for i in range(self.workers))

    def post_of(self, producer: str, k: int) -> tuple[T, str] | None:
        """The k-th post of ``producer``: (target, item), or None when its script is done."""
        targets = self.script[int(producer[1:])]
        if k >= len(targets):
            return None
        return targets[k], f"{producer}.{k}"

    def header(self) -> dict[str, int]:
        """The ``config`` object of a trace header for this model."""
        fields: dict[str, Any] = {name: getattr(self, name) for name in self.HEADER}
        return fields


class HasWorkers(Protocol):
    def worker_names(self) -> tuple[str, ...]: ...


def Workers(c: HasWorkers) -> tuple[str, ...]:
    return c.worker_names()


def Producers(c: Scripted[Any]) -> tuple[str, ...]:
    return c.producer_names()


def PostAt(c: Scripted[T], s: Any, p: str, pc: str) -> tuple[int, T, str] | None:
    """The post producer ``p`` is making, when it is at ``pc`` (``s.producer[p]`` is (pc, posts
    done, ...)): (posts done, target, item), or None."""
    here, k, _ = s.producer[p]
    if here != pc:  # before the script is read: most calls are a step tried at another pc
        return None
    post = c.post_of(p, k)
    if post is None:
        return None
    return k, post[0], post[1]
