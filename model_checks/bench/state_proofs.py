"""Proofs of small programs: DPOR against state-hash pruning, plain and with sleep sets (issue 16).

The program is issue 16's: two producers and a consumer around one ``Lock`` + ``Condition``
bounded buffer, plain ``threading`` under patch mode (``harness_plain.run_two_producers``),
races off (patch mode's detector is the same in all three and would only add its cost). Each
search runs in this process, one after another, with the same time limit; seconds are CPU
seconds of this process, so a neighbour's load slows them less than wall time would.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from model_checks.bench import harness_plain
from model_checks.harness import Options, Result, check, patched
from model_checks.harness.runtime import ControlledRuntime

# (items per producer, buffer capacity): the program is the middle one
PROGRAMS = ((2, 1), (3, 1), (3, 2))
SEARCHES = ("dpor", "states", "states+sleep")


def producer_consumer(
    items: int, capacity: int, buggy: bool = False
) -> Callable[[ControlledRuntime], object]:
    """The issue's program as a harness test: its outcome is the order the consumer took the items
    in. Run it under ``patched(harness_plain)``."""

    def program(rt: ControlledRuntime) -> object:
        got = harness_plain.run_two_producers(items, capacity, buggy)
        return lambda: tuple(got)

    return program


def _search(name: str, items: int, capacity: int, time_limit: float) -> Result:
    options = Options(races=False, minimize=False, time_limit=time_limit)
    program = producer_consumer(items, capacity)
    if name == "dpor":
        return check(program, options.with_(strategy="dpor"))
    from model_checks.harness.stateful import check_states  # brings the heap fingerprint

    return check_states(program, options, sleep_sets=name == "states+sleep")


def proofs(time_limit: float = 60.0) -> dict[str, Any]:
    """Each program under each search: verdict, executions, states, outcomes, CPU seconds."""
    out: dict[str, Any] = {}
    with patched(harness_plain):
        for items, capacity in PROGRAMS:
            row: dict[str, Any] = {}
            for name in SEARCHES:
                started = time.process_time()
                result = _search(name, items, capacity, time_limit)
                row[name] = {
                    "verdict": result.verdict,
                    "executions": result.executions,
                    "states": getattr(result, "states", None),
                    "outcomes": len(result.outcomes),
                    "cpu_s": round(time.process_time() - started, 2),
                }
            out[f"{items} items each, capacity {capacity}"] = row
    return {"time_limit_s": time_limit, "programs": out}


def table(figures: dict[str, Any]) -> str:
    """The docs' table: one row per program, one column per search."""
    lines = [
        "| program | " + " | ".join(f"`{s}`" for s in SEARCHES) + " |",
        "|---|" + "---|" * len(SEARCHES),
    ]
    for program, row in figures["programs"].items():
        cells = []
        for name in SEARCHES:
            r = row[name]
            states = "" if r["states"] is None else f", {r['states']:,} states"
            cells.append(
                f"{r['verdict']}, {r['executions']:,} executions{states}, {r['outcomes']} outcomes, "
                f"{r['cpu_s']} s"
            )
        lines.append(f"| {program} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    limit = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
    print(table(proofs(limit)))
