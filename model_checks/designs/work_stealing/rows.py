"""`lanecheck verify` rows: the work-stealing reference's traces under the harness, correct and mutated.

* Every execution of the clean exhaustive scenarios is traced and its trace validated
  (``link.traced_program`` for the pools, judged complete; ``traced_deque`` for the deque
  races, judged as a prefix: the tasks a deque holds are never run there), each distinct trace
  of a search judged once by the fast validator (``link.JudgedOnce``).
* The link (``link.compare``): every reference trace of the one-worker fork/join is a spec trace.
* Each reference mutant's failing trace goes through the validator: rejected at a located
  seq where the bug shows in the events, at the end of the trace where it shows only as
  something missing (a lost wakeup, a deadlocked join), malformed where the bug makes an
  ``ok`` with no task (an unwritten slot). ``OBSERVED`` says which; a row fails when the
  validator does anything else (accepting the trace above all), or when the spec engine
  (``trace.spec_search``, ``--engine spec``) does not refuse it the same way.

The harness verdicts themselves are the generic scenario rows of ``Design.scenarios``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

from model_checks.conformance.lines import validate_with
from model_checks.designs.work_stealing.harness import DEQUES, POOLS
from model_checks.designs.work_stealing.harness import program as harness_program
from model_checks.designs.work_stealing.link import JudgedOnce, compare, traced_program
from model_checks.designs.work_stealing.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_stealing.scenarios import deque_program
from model_checks.designs.work_stealing.trace import judge
from model_checks.designs.work_stealing.trace.spec_search import SPEC_FORMAT
from model_checks.harness.api import check
from model_checks.harness.design_rows import granular, quiet_reference
from model_checks.harness.options import Failure, Options, Result
from model_checks.harness.runtime import ControlledRuntime
from model_checks.verify import VerifyRow
from reference.runtime import Runtime
from reference.tracing import RecordingTracer
from reference.work_stealing import header
from reference.work_stealing_deque import ChaseLevDeque

# verify --quick: the clean scenarios whose traced search stays below this many executions.
QUICK_EXECUTIONS = 1_000
# The deque programs' threads as trace threads: the owner is worker 0, thief i worker i.
DEQUE_THREADS = {"owner": "w0", "t1": "w1", "t2": "w2"}
CAPACITY = 2  # the deque programs' (scenarios.deque_program)

# How each mutant's failing trace must be judged: "seq" rejected at an event, "end" rejected at
# the end of the trace (judged complete), "malformed" an ok with no task. (A fourth verdict,
# "not observable", would say tracing hid the bug; none does: the deque's trace lock spans one
# atomic step and its event, never the window of a race, so take-without-cas and
# steal-without-cas race traced as untraced and log the element's second ok.)
OBSERVED = {
    "take-without-cas": "seq",
    "steal-reads-after-cas": "seq",
    "steal-without-cas": "seq",
    "resize-drops-newest": "malformed",
    "resize-unpublished": "seq",
    "stale-mask": "seq",
    "park-without-recheck": "end",
    "steal-from-self": "seq",
    "join-never-helps": "end",
}
# The clean scenarios traced, with their executions (DPOR, races off): the trace locks add
# scheduling points, so these exceed the untraced counts in harness.py (one lock step per
# linearisation point; the take of a last element has two, its top load and its CAS). Left out:
# deque/steal-after-resize (over 64,000 executions in 300 s traced, not finished) and
# pool/park-wake-traced (pool/park-wake traced is the same program).
TRACED = {
    "deque/one-element": 336,
    "deque/push-take-steal": 6_080,
    "deque/resize-while-stealing": 9_191,
    "pool/park-wake": 450,
    "pool/task-raises": 1_321,
    "pool/stop-discard": 687,
    "pool/fork-join": 2_701,
    "global/fork-join": 2_954,
}


def traced_deque(
    name: str, build: Callable[..., ChaseLevDeque[Any]] = ChaseLevDeque, *, validate: bool = True
) -> Callable[[ControlledRuntime], object]:
    """Deque scenario ``name`` with its deque traced: each execution's trace is reported in a
    failure and, with ``validate``, judged as a prefix at its end (a refusal fails the search;
    each distinct trace of the search judged once, ``link.JudgedOnce``)."""
    owner, thieves, _ = DEQUES[name]
    judged_once = JudgedOnce(complete=False)

    def program(rt: ControlledRuntime) -> object:
        tracer = RecordingTracer()
        config = {"workers": len(thieves) + 1, "capacity": CAPACITY, "pool": "stealing"}
        tracer.begin(config)  # type: ignore[arg-type]  # "pool" is a str
        rt.trace(lambda: list(tracer.events()))

        def make(runtime: Runtime, capacity: int, *, owner: int) -> ChaseLevDeque[Any]:
            return build(runtime, capacity, owner=owner, tracer=tracer)

        final = deque_program(owner, thieves, capacity=CAPACITY, build=make)(rt)
        assert callable(final)

        def judged() -> None:
            if validate:
                judged_once(deque_lines(len(thieves) + 1, tracer.events()))

        return [final, judged]

    return program


def deque_lines(workers: int, events: Any) -> list[str]:
    """A deque program's events as a work-stealing trace (its threads renamed ``w<i>``)."""
    head = header({"workers": workers, "capacity": CAPACITY, "pool": "stealing"})
    out = [json.dumps(head)]
    for e in events:
        if isinstance(e, dict):
            out.append(json.dumps({**e, "thread": DEQUE_THREADS.get(e["thread"], e["thread"])}))
    return out


def pool_lines(failure: Failure, workers: int, pool: str) -> list[str]:
    """The JSON Lines trace of a failing execution of a traced pool program."""
    head = header({"workers": workers, "capacity": 2, "pool": pool})
    return [json.dumps(head)] + [json.dumps(e) for e in failure.trace_events if isinstance(e, dict)]


def _row(subject: str, expected: str, result: Result) -> VerifyRow:
    expected = granular(expected, False)  # (the traced searches run without the race detector)
    actual = granular("failed" if result.failure is not None else result.verdict, result.races)
    figures = result.figures() + (f"; {result.failure.message}" if result.failure else "")
    return VerifyRow("conformance", subject, expected, actual, figures, result.elapsed)


def clean_program(name: str) -> Callable[[ControlledRuntime], object]:
    if name in DEQUES:
        return traced_deque(name)
    cls, sc, _, _ = POOLS[name]
    return traced_program(sc, build=cls)


def rows(quick: bool) -> Iterator[VerifyRow]:
    for name, executions in TRACED.items():
        if quick and executions > QUICK_EXECUTIONS:
            continue
        result = check(clean_program(name), Options(strategy="dpor", time_limit=300))
        yield _row(f"work-stealing scenario {name} (every trace validated)", "exhaustive", result)
    yield from mutant_rows()
    if quick:  # the link explores 3,000+ traced executions; tests/work_stealing/test_link.py runs it
        return
    started = time.perf_counter()
    link = compare()
    yield VerifyRow(
        "conformance",
        "work-stealing link: every reference trace of pool/fork-join (1 worker) is a spec trace",
        "included",
        "included" if link.ok else f"{len(link.reference_only)} reference-only ({link.result.verdict})",
        f"{len(link.reference)} reference traces ({link.result.executions:,} executions), "
        f"{len(link.spec)} spec traces",
        time.perf_counter() - started,
    )


def mutant_trace(name: str) -> tuple[list[str], Failure | None]:
    """The failing trace of reference mutant ``name`` in its scenario, traced (no failure: [])."""
    m = REFERENCE_MUTANTS[name]
    if m.scenario in DEQUES:
        program = traced_deque(m.scenario, m.build, validate=False)
        workers, make_lines = len(DEQUES[m.scenario][1]) + 1, None
    else:
        cls, sc, watched, _ = POOLS[m.scenario]
        # A watched scenario traces its pool already (and fails on a self-steal as it is logged).
        program = (
            harness_program(m.scenario, m.build)
            if watched
            else traced_program(sc, build=m.build, validate=False)
        )
        workers, make_lines = sc.workers, cls.POOL
    result = check(program, Options(strategy="dpor", time_limit=60))
    if result.failure is None:
        return [], None
    if make_lines is None:
        return deque_lines(workers, result.failure.trace_events), result.failure
    return pool_lines(result.failure, workers, make_lines), result.failure


def mutant_rows() -> Iterator[VerifyRow]:
    """Each reference mutant's failing trace through the validator (see ``OBSERVED``)."""
    with quiet_reference():
        for name in REFERENCE_MUTANTS:
            started = time.perf_counter()
            lines, failure = mutant_trace(name)
            subject = f"work-stealing trace of reference --mutant {name}"
            want = OBSERVED[name]
            if failure is None:
                elapsed = time.perf_counter() - started
                yield VerifyRow(
                    "conformance", subject, want, "not observable", "no failing execution", elapsed
                )
                continue
            # A lost wakeup or a deadlock ends the run with nothing more to log: judged complete.
            verdict = judge(json.loads(lines[0]), iter(lines[1:]), complete=want == "end")
            if verdict.code == 1:
                got = "seq" if verdict.seq is not None else "end"
            else:
                got = "malformed" if verdict.code == 2 else "allowed"
            # The spec engine (--engine spec) must refuse it the same way: rejected or malformed.
            spec = validate_with(SPEC_FORMAT, lines, engine="spec", complete=want == "end")
            if spec.code != verdict.code:
                got += f", but the spec engine says {spec.message}"
            if verdict.seq is not None:
                where = f"seq {verdict.seq} of {len(lines) - 1} events"
            else:
                where = f"line {verdict.line or len(lines)} of {len(lines)} lines"
            yield VerifyRow(
                "conformance",
                subject,
                want,
                got,
                f"{where}, rule {verdict.rule}: {verdict.message} "
                f"(spec engine: rule {spec.rule}, {spec.message[:120]}; "
                f"harness: {failure.kind}, {failure.preemptions} preemptions)",
                time.perf_counter() - started,
            )
