"""The handoff's trace binding: how `lanecheck validate` judges a handoff trace.

A trace is a header line ``{"trace": "lanecheck", "version": 1, "design": "handoff", "config":
{"items": N}}`` and one line per ``put`` and ``take`` (``{"seq", "thread", "event", "item"}``),
in the order the steps took effect. The checker is the streaming search over the spec: the set
of spec states some behaviour could be in, advanced by each event (internal steps, here
``Wait``, are taken as needed between events).
"""

from __future__ import annotations

from typing import Any

from model_checks.conformance.search import NoMatch, TraceSearch
from model_checks.conformance.streamed import DesignFormat, Event, is_item
from model_checks.conformance.verdict import Rejected
from model_checks.conformance.wording import cannot_stop

from .spec import SPEC, Constants, Done, Init

PROCESS = {"put": "p", "take": "c"}  # each event's spec process (the first action parameter)
RULES = {
    1: "one producer thread logs every put, one consumer thread every take",
    2: "put only into an empty box, the items in order",
    3: "take the box's item",
    # The largest rule number is the prefix rule: a trace that stops early is an allowed prefix
    # with this rule's words, and with --complete it is rejected under it.
    4: "a complete trace ends with every item taken",
}
RULE_OF = {"put": 2, "take": 3}


class HandoffChecker:
    """The ``Checker`` protocol (model_checks/conformance/streamed.py) for one trace."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.c = Constants(items=int(config["items"]))
        self.search = TraceSearch(SPEC, self.c, Init(self.c))
        self.threads: dict[str, str] = {}  # process -> the thread that logs its events
        self.complete = False

    def step(self, ev: Event) -> None:
        kind, thread = ev["event"], ev["thread"]
        proc = PROCESS[kind]
        bound = self.threads.setdefault(proc, thread)
        if bound != thread:
            raise Rejected(
                1, f"{thread} logs {kind}, but {bound} is the {'producer' if proc == 'p' else 'consumer'}"
            )
        try:
            self.search.step(ev, [proc])
        except NoMatch:
            raise Rejected(RULE_OF[kind], f"{thread} {kind} {ev['item']}: no behaviour takes it") from None
        self.complete = all(Done(self.c, s) for s in self.search.states)

    def finish(self, complete: bool) -> None:
        if complete and not any(Done(self.c, s) for s in self.search.states):
            raise cannot_stop(max(RULES), self.pending()[1])

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        got = min(s.got for s in self.search.states)
        return {"got": got}, [f"{self.c.items - got} of {self.c.items} items not yet taken"]

    def describe(self) -> list[dict[str, Any]]:
        return [s._asdict() for s in sorted(self.search.states, key=repr)[:4]]


FORMAT = DesignFormat(
    design="handoff",
    schema_file="trace-schema.json",
    schema_package=__package__ or "lanecheck_handoff",  # the schema lives beside this module
    fields={"put": (("item", is_item),), "take": (("item", is_item),)},
    index="",  # no event names an indexed unit (a lane, an actor)
    bound="items",
    make=HandoffChecker,
    rules=RULES,
    completion="the consumer's last take",
)


def header(config: dict[str, int]) -> dict[str, Any]:
    """The header a traced reference writes (``RecordingTracer(make_header=header)``)."""
    return {"trace": "lanecheck", "version": 1, "design": "handoff", "config": dict(config)}
