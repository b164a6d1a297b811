"""The Work Lane's traces judged by its spec engine, as a ``streamed.DesignFormat``: the design's
``spec_trace_format``, what the review site's state coverage of real runs reads.

``lanecheck validate`` keeps ``validate.FORMAT`` (the fast engine by default); this format judges
the same traces with ``SpecEngine`` under the same rules (its own well-formedness check of each
event, a thread that owes a submission logs it next, no item id accepted twice while in flight:
``conformance.item_ids``), so it accepts and refuses what ``FORMAT`` with ``engine="spec"`` does.
Its checker is observable: ``observe`` reports the engine's ``states`` and constants ``c`` before
the first event and after each one, as ``TraceSearch.observe`` does; without an observer the cost
is one ``None`` test per event. The engine's constants are its own (lanes join as the trace names
them, processes are the trace's threads), never an explorer configuration's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from model_checks.conformance.item_ids import ITEM_EVENTS, ItemIds
from model_checks.conformance.reader import MAX_INDEXED
from model_checks.conformance.streamed import FieldCheck
from model_checks.conformance.verdict import Malformed, Rejected
from model_checks.designs.work_lane.trace.binding import TraceConstants
from model_checks.designs.work_lane.trace.parse import HEADER, Config, Event, EventChecker
from model_checks.designs.work_lane.trace.rules import RULES
from model_checks.designs.work_lane.trace.spec_engine import DEFERRED, SpecEngine
from model_checks.designs.work_lane.trace.validate import DESIGN, owes_problem, pending_phrases
from spec import work_lane as wl

Observer = Callable[["SpecChecker"], None]


class SpecChecker:
    """One trace: ``SpecEngine`` stepped event by event, with the format's rules around it."""

    def __init__(
        self, config: Mapping[str, Any], *, deferred: Mapping[str, frozenset[str]] = DEFERRED
    ) -> None:
        """``deferred``: the steps the engine defers (``{}``: every one taken at once)."""
        bound = Config(**{k: config[k] for k in Config.__dataclass_fields__})
        self.well_formed = EventChecker(bound)
        self.engine = SpecEngine(bound, deferred=deferred)
        self.owes: dict[str, int] = {}  # thread -> the lane whose submission it must log next
        self.ids = ItemIds()  # the item ids in flight (rule 4: an id is unique per trace)
        self.complete = False  # the trace showed stop_end
        self.observer: Observer | None = None

    @property
    def states(self) -> set[wl.Vars]:
        return self.engine.states

    @property
    def c(self) -> TraceConstants:
        return self.engine.c

    def observe(self, observer: Observer | None) -> None:
        """Report the states held now (before any event) and after every event taken; None: stop."""
        self.observer = observer
        if observer is not None:
            observer(self)

    def step(self, ev: Event) -> None:
        if not self.well_formed.ok(ev):
            # the streamed driver checked seq continuity from line 2: an event's line is seq + 1
            line = ev["seq"] + 1
            raise Malformed(line, f"line {line}: {self.well_formed.problem(ev)}")
        thread, kind = ev["thread"], ev["event"]
        owed = self.owes.get(thread)
        if owed is not None:
            if kind != "submit" or ev["lane"] != owed:
                raise Rejected(2, owes_problem(ev, owed))
            del self.owes[thread]
        if kind in ITEM_EVENTS:
            self.ids.see(ev)
        self.engine.step(ev)
        if kind == "post":
            if ev["submit"]:
                self.owes[thread] = ev["lane"]
        elif kind == "drain_end":
            if ev["outcome"] == "resubmit":
                self.owes[thread] = ev["lane"]
        elif kind == "stop_end":
            self.complete = True
        if self.observer is not None:
            self.observer(self)

    def finish(self, complete: bool) -> None:
        if complete and not self.complete:
            raise Rejected(8, "the trace ends before stop_end, which shows that a work-lane run is over")

    def pending(self) -> tuple[dict[str, Any], list[str]]:
        pending = self.engine.pending()
        return pending, pending_phrases(pending)

    def describe(self) -> list[dict[str, Any]]:
        return self.engine.describe()


Fields = dict[str, tuple[tuple[str, FieldCheck], ...]]


def _fields() -> tuple[Fields, Fields]:
    """Each event's required and optional fields for the driver's first check (lanes bounded by the
    header's ``lanes`` there); a post's lane may be null, so it is checked, bounded, by the checker."""
    checks = EventChecker(Config(MAX_INDEXED, 1, 1, 1, 1)).fields
    required = dict(checks)
    required["post"] = tuple((name, check) for name, check in checks["post"] if name != "lane")
    optional = {"post": tuple((name, check) for name, check in checks["post"] if name == "lane")}
    return required, optional


_REQUIRED, _OPTIONAL = _fields()

FORMAT = HEADER.format(
    DESIGN, __package__, _REQUIRED, optional=_OPTIONAL, make=SpecChecker, rules=RULES, completion="stop_end"
)
