"""The harness's own rows of `lanecheck verify`: its classic programs, which belong to no design.

Correct ones must be proved ("exhaustive"), buggy ones "caught" with the expected failure
kind. Every row runs the data-race detector, so a proof is one for a data-race-free program and
an unsynchronised plain access is caught; one row also interleaves the race it finds
(``interleave_races``) and must show its consequence. Each design's scenarios have rows of
their own (``design_rows.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

from model_checks.harness.api import check
from model_checks.harness.examples import PROGRAMS
from model_checks.harness.options import Options, Result
from model_checks.verify import VerifyRow

# program -> failure kind it must be caught with (None: it must be proved correct)
EXPECTED: dict[str, str | None] = {
    "counter-racy": "assertion",
    "counter-locked": None,
    "counter-plain": "data_race",
    "counter-plain-locked": None,
    "cas-counter": None,
    "lock-order-inversion": "deadlock",
    "lock-order-consistent": None,
    "handoff-while": None,
    "handoff-missing-notify": "lost_wakeup",
    "timed-wait": None,
    "independent": None,
}


def _actual(result: Result, kind: str | None) -> str:
    if kind is None:
        return result.verdict
    if result.failure is None:
        return "missed"
    return "caught" if result.failure.kind == kind else "caught-differently"


# program -> failure kind it must be caught with when its races are interleaved
INTERLEAVED: dict[str, str] = {"counter-plain": "assertion"}


def _row(subject: str, result: Result, kind: str | None) -> VerifyRow:
    return VerifyRow(
        "harness",
        subject,
        "exhaustive" if kind is None else "caught",
        _actual(result, kind),
        result.figures() + (f"; {result.failure.kind}" if result.failure else ""),
        result.elapsed,
    )


def rows(quick: bool) -> Iterator[VerifyRow]:
    for name, kind in EXPECTED.items():
        yield _row(f"program {name}", check(PROGRAMS[name](), Options(strategy="dpor", races=True)), kind)
    for name, kind in INTERLEAVED.items():
        result = check(PROGRAMS[name](), Options(strategy="dpor", interleave_races=True))
        yield _row(f"program {name} --interleave-races", result, kind)
