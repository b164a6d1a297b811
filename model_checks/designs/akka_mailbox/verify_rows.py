"""The akka-mailbox design's rows of ``lanecheck verify``: the reference under the harness, each
reference mutant's failure, and the validator's verdict on that failure's trace (rejected).
``trace.rows`` is this (the registry names it there)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

# Judges a failing run's trace: (config, events, complete) -> None when the validator allows
# it, else its rejection's words (``trace.rows`` hands in the akka validator).
Judge = Callable[[dict[str, Any], list[dict[str, Any]], bool], "str | None"]

# The harness failures of ``reference_mutants.program`` found when the run is over, so that
# their trace is whole (``complete``): a lost wakeup (everyone waits), and the final check
# (the program's only assertion, after shutdown joined every thread).
WHOLE_RUN_FAILURES = ("lost_wakeup", "assertion")


def rows(quick: bool, judge: Judge) -> Iterator[Any]:
    """Rows of ``lanecheck verify`` for this design's reference: harness runs and trace conformance.

    A provider in the sense of ``model_checks.verify`` (``rows(quick) -> Iterator[VerifyRow]``).
    """
    import time

    from model_checks.designs.akka_mailbox.harness import SUPERVISED
    from model_checks.designs.akka_mailbox.reference_mutants import REFERENCE_MUTANTS, program
    from model_checks.harness import Options, check
    from model_checks.verify import VerifyRow
    from reference.akka_mailbox import Dispatcher

    started = time.perf_counter()
    # Bounded by counts, not by a time limit, so a rerun (or a certificate's check) explores the
    # same executions on any machine: --quick every schedule with at most one preemption (3,837
    # executions), the full run the first 6,000 of depth-first order with at most two (what 120 s
    # reached before the race tracer was native).
    result = check(
        program(SUPERVISED, Dispatcher),
        Options(preemption_bound=1, races=True)
        if quick
        else Options(preemption_bound=2, max_executions=6_000, races=True),
    )
    # A bounded search that found nothing is "no failure (bounded)", never a plain pass.
    bound = "" if result.verdict == "exhaustive" else f" ({result.verdict})"
    yield VerifyRow(
        "harness",
        "akka-mailbox reference",
        "no failure" + bound,
        ("no failure" if result.failure is None else result.failure.kind) + bound,
        result.summary(),
        time.perf_counter() - started,
    )
    for m in REFERENCE_MUTANTS.values():
        started = time.perf_counter()
        r = check(program(m.constants, m.build), Options(time_limit=60))
        kind = r.failure.kind if r.failure is not None else "no failure"
        yield VerifyRow(
            "harness-mutant",
            f"akka-mailbox reference {m.name}",
            m.expect,
            kind,
            r.summary(),
            time.perf_counter() - started,
        )
        if r.failure is None:
            continue
        events = [e for e in r.failure.trace_events if isinstance(e, dict)]
        config = {"workers": m.constants.workers, "throughput": m.constants.throughput, "logs_append": True}
        refusal = judge(config, events, r.failure.kind in WHOLE_RUN_FAILURES)
        actual, detail = ("allowed", f"{len(events)} events") if refusal is None else ("rejected", refusal)
        yield VerifyRow(
            "conformance",
            f"akka-mailbox trace of reference {m.name}",
            "rejected",
            actual,
            detail,
            time.perf_counter() - started,
        )
