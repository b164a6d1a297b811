"""The handoff, as a spec: a one-slot box under one lock, a producer and a consumer.

Each action is one critical section. The consumer checks the box and, finding it
empty, waits on the condition in the same critical section, so the producer's
notify cannot fall between its check and its wait.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from spec.language import WF, EventuallyAlways, SpecBuilder, emit


@dataclass(frozen=True)
class Constants:
    items: int = 2  # how many items the producer hands over

    def header(self) -> dict[str, int]:
        """The ``config`` of a trace header: what `lanecheck traces export` writes, and what the
        trace binding (``trace.py``) rebuilds these constants from."""
        return {"items": self.items}


class Vars(NamedTuple):
    box: int | None  # the slot: the item in it, or empty
    sent: int  # items the producer has put
    got: int  # items the consumer has taken
    consumer: str  # check | waiting | done


Handoff = SpecBuilder("handoff", __doc__ or "")
Producer = lambda c: ("p",)  # noqa: E731 - a parameter domain, as in TLA+ `Producer == {"p"}`
Consumer = lambda c: ("c",)  # noqa: E731


@Handoff.init
def Init(c: Constants) -> list[Vars]:
    return [Vars(box=None, sent=0, got=0, consumer="check")]


@Handoff.action(Producer, event="put")
def Put(c: Constants, s: Vars, p: str) -> object:
    """Under the lock: put the next item in an empty box and wake a waiting consumer."""
    if s.sent == c.items or s.box is not None:
        return None
    woken = "check" if s.consumer == "waiting" else s.consumer
    return emit(s._replace(box=s.sent, sent=s.sent + 1, consumer=woken), item=s.sent)


@Handoff.action(Consumer, event="take")
def Take(c: Constants, s: Vars, w: str) -> object:
    """Under the lock: take the item from a full box."""
    if s.consumer != "check" or s.box is None:
        return None
    done = "done" if s.got + 1 == c.items else "check"
    return emit(s._replace(box=None, got=s.got + 1, consumer=done), item=s.box)


@Handoff.action(Consumer)
def Wait(c: Constants, s: Vars, w: str) -> object:
    """Under the lock: find the box empty and wait on the condition (releasing the lock)."""
    if s.consumer != "check" or s.box is not None:
        return None
    return s._replace(consumer="waiting")


@Handoff.invariant
def InOrder(c: Constants, s: Vars) -> str | None:
    """The consumer never gets ahead of the producer."""
    return None if s.got <= s.sent else f"took {s.got} items but only {s.sent} were put"


@Handoff.terminal
def Done(c: Constants, s: Vars) -> bool:
    return s.consumer == "done"


Handoff.fairness(WF(Producer), WF(Consumer))
Handoff.property(
    EventuallyAlways("EveryItemArrives", lambda c, s: s.got == c.items, "every item has arrived")
)

SPEC = Handoff.spec
