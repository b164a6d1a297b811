""" "One drainer per lane", the check the lane-style designs' scenarios make on their scheduler's
trace events after every step that emitted some.

Compiled with the harness core (``setup.py``): on the standard scenario the watch runs after a
tenth of all steps, and in Python it was about 6% of an execution's instructions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from model_checks.harness.lane_programs import DrainOverlap

# the events whose order "one drainer per lane" constrains; the watch reads no others
DRAIN_EVENTS: Final = frozenset({"drain_begin", "drain_end", "invoke"})

Keep = Callable[[tuple[Any, ...]], None]


def drain_violation(draining: dict[int, str], lane: int, kind: str, who: str) -> str | None:
    """Why ``who``'s event ``kind`` (``drain_begin``, ``drain_end`` or ``invoke``; a design names
    its own drain's end ``drain_end`` here) on ``lane`` breaks "one drainer per lane", or None.
    ``draining`` (lane -> the worker draining it) is the past the check needs, updated here."""
    if kind == "drain_begin":
        if lane in draining:
            return f"lane {lane}: {who} began a drain while {draining[lane]} drains it"
        draining[lane] = who
    elif kind == "drain_end":
        if draining.pop(lane, None) != who:
            return f"lane {lane}: {who} ended a drain it did not begin"
    elif kind == "invoke" and draining.get(lane) != who:
        return f"lane {lane}: {who} invoked outside its own drain"
    return None


class DrainWatch:
    """Checks "one drainer per lane" on the records ``(thread, event, fields)`` a tracer appended
    to ``records`` since the last call (``check``, the scenario's invariant).

    It runs in the harness's scheduler, not in the workers emitting the events: its bookkeeping
    is then no shared state of the program under test. A failure shows up after the same step,
    with the same message, as a check inside the tracer's ``emit`` would give.

    With ``keep`` the records read are removed from ``records`` and handed to ``keep`` (e.g.
    ``lane_programs.ReportedTrace.keep``, for the failure report), so the program's state keeps
    no trace: what the check needs of the past is only who drains each lane now."""

    def __init__(self, records: list[Any], keep: Keep | None = None) -> None:
        self.records = records
        self._keep = keep
        self._seen = 0  # records already read (stays 0 when they are removed)
        self._draining: dict[int, str] = {}  # lane -> the worker draining it
        self.violation: str | None = None

    def check(self) -> bool:
        raw = self.records
        n = len(raw)
        if self.violation is None and n > self._seen:
            keep = self._keep
            if keep is None:
                first = self._seen
                self._seen = n
                for i in range(first, n):
                    if not self._read(raw[i]):
                        break
            else:
                batch = tuple(raw)
                raw.clear()  # in place: under the race detector the tracer's field holds this list
                keep(batch)
                for record in batch:
                    if not self._read(record):
                        break
        if self.violation is not None:
            raise DrainOverlap(self.violation)
        return True

    def _read(self, record: tuple[str, str, Any]) -> bool:
        """Read one record; False once it broke the rule."""
        thread, kind, fields = record
        if kind not in DRAIN_EVENTS:
            return True
        self.violation = drain_violation(self._draining, int(fields.get("lane") or 0), kind, thread)
        return self.violation is None
