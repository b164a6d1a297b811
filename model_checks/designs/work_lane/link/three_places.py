"""Check 5, one counterexample in three places: spec mutant, harness schedule, validator verdict.

1. ``lanecheck check work-lane --variant V`` finds a shortest counterexample of the spec mutant;
   its labelled steps are the events a correct logger would write.
2. The matching reference mutant runs under the harness in the same scenario (the mutant's
   constants: producers, posts, Stop calls; threads and items named as in the spec). An invariant
   watches the trace and fails the execution as soon as its events (workers renamed by first
   appearance) equal the counterexample's, so the execution stops there with its schedule string.
   ``strategy="guided"`` (default) steers ``run_once`` with a ``guided.GuidedChooser`` that follows
   the counterexample's thread order, enumerating how many scheduling steps stand for the spec's
   silent steps at the end of a segment (``guided.plans``); ``strategy="dpor"`` searches instead.
3. The schedule is replayed, and the reference's trace from it is validated: it must be rejected
   with the same rule and at the same seq as the spec counterexample's own trace.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from model_checks.conformance.validator import validate_lines
from model_checks.designs.work_lane.link.guided import GuidedChooser, plans, segments_of
from model_checks.designs.work_lane.link.scenario import LinkScenario, Run, event_key, link_program
from model_checks.designs.work_lane.reference_mutants import REFERENCE_MUTANTS
from model_checks.designs.work_lane.spec_mutants import MUTANTS
from model_checks.explorer.check import check as check_spec
from model_checks.explorer.counterexample import counterexample_events
from model_checks.explorer.search import Options as SpecOptions
from model_checks.harness import Options, check, replay
from model_checks.harness.api import run_once
from model_checks.harness.report import schedule_of
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.schedule import test_tag
from model_checks.registry import design
from model_checks.spec_behaviours import canonical
from spec import work_lane as wl

PAIRS = {
    "check-outside-lock": "split-idle",
    "double-submit": "double-reserve",
    "stop-skips-inflight": "stop-skips-inflight",
}


class Matched(AssertionError):
    """The reference's trace so far is the spec counterexample's trace."""


@dataclass
class ThreePlaces:
    reference_mutant: str
    spec_mutant: str
    spec_length: int  # steps of the spec counterexample
    spec_property: str
    spec_events: int
    spec_seq: int | None  # where the validator rejects the counterexample's own trace
    spec_rule: int | None
    schedule: str
    executions: int
    impl_seq: int | None
    impl_rule: int | None
    message: str
    seconds: float
    strategy: str = "dpor"
    plan: str = ""  # guided: the segments run, "process:events+extra"

    @property
    def verdict(self) -> str:
        same = self.spec_seq is not None and (self.spec_seq, self.spec_rule) == (
            self.impl_seq,
            self.impl_rule,
        )
        return "same-step" if same else "different"

    def figures(self) -> str:
        return (
            f"spec cx {self.spec_length} steps ({self.spec_property}), validator seq {self.spec_seq} rule "
            f"{self.spec_rule}; reference seq {self.impl_seq} rule {self.impl_rule} after "
            f"{self.executions} executions ({self.strategy}{' ' + self.plan if self.plan else ''}); "
            f"schedule {self.schedule}"
        )


def three_places(
    reference_mutant: str,
    options: Options | None = None,
    *,
    strategy: str = "guided",
    max_extra: int = 12,
    max_runs: int = 2_000,
) -> ThreePlaces:
    started = time.perf_counter()
    ref = REFERENCE_MUTANTS[reference_mutant]
    spec_name = ref.spec_variant or PAIRS[reference_mutant]
    sm = MUTANTS[spec_name]
    constants = sm.constants(design("work-lane").config(sm.config))
    result = check_spec(sm.spec, constants, SpecOptions(liveness=False))
    cx = result.counterexample
    assert cx is not None and result.violation is not None, f"{spec_name}: no counterexample"
    events = counterexample_events(cx)
    spec_verdict = validate_lines([json.dumps(_header(constants)), *(json.dumps(e) for e in events)])
    target = canonical(event_key(e) for e in events)
    sc = LinkScenario.of(constants)
    last: list[Run] = []
    guide: list[GuidedChooser] = []

    def watch(run: Run) -> None:
        last[:] = [run]
        for g in guide:
            g.tracer = run.tracer
        seen = [0]

        def matches() -> bool:
            n = len(run.tracer)
            if n != seen[0]:
                seen[0] = n
                if (
                    n >= len(target)
                    and canonical(event_key(e) for e in run.tracer.events()[: len(target)]) == target
                ):
                    raise Matched("the reference logged the spec counterexample's events")
            return True

        holder.append(matches)

    holder: list[object] = []

    def program(rt: ControlledRuntime) -> object:
        holder.clear()
        prog = link_program(sc, lambda run: None, build=ref.build, sequenced=False, on_start=watch)
        finals = prog(rt)
        check_fn = holder[0]
        assert callable(check_fn)
        rt.invariant(check_fn, "reference trace = spec counterexample")
        return finals

    opts = options or Options(strategy="dpor", max_steps=5_000, time_limit=60, minimize=False)
    schedule = ""
    plan_text = ""
    if strategy == "guided":
        executions = 0
        message = "no guided execution matched"
        for executions, plan in enumerate(plans(segments_of(cx), max_extra), start=1):
            if executions > max_runs:
                executions -= 1
                break
            guide[:] = [GuidedChooser(plan)]
            ex = run_once(program, opts, guide[0], sources=False)
            if ex.failure is not None and "Matched" in ex.failure.message:
                schedule = schedule_of(ex, test_tag(program))
                plan_text = " ".join(f"{s.process}:{s.events}+{s.extra}" for s in plan)
                break
        guide.clear()
    else:
        found = check(program, opts)
        executions = found.executions
        if found.failure is not None and "Matched" in found.failure.message:
            schedule = found.failure.schedule
        message = found.failure.message if found.failure is not None else "no execution matched"
    impl_seq: int | None = None
    impl_rule: int | None = None
    if schedule:
        again = replay(program, schedule, opts)
        assert again.failure is not None and "Matched" in again.failure.message
        lines = last[0].lines()
        verdict = validate_lines(lines)
        impl_seq, impl_rule, message = verdict.seq, verdict.rule, verdict.message
    return ThreePlaces(
        reference_mutant=reference_mutant,
        spec_mutant=spec_name,
        spec_length=cx.length,
        spec_property=result.violation.name,
        spec_events=len(events),
        spec_seq=spec_verdict.seq,
        spec_rule=spec_verdict.rule,
        schedule=schedule,
        executions=executions,
        impl_seq=impl_seq,
        impl_rule=impl_rule,
        message=message,
        seconds=time.perf_counter() - started,
        strategy=strategy,
        plan=plan_text,
    )


def _header(c: wl.Constants) -> dict[str, object]:
    return {"trace": "lanecheck", "version": 1, "design": "work-lane", "config": c.header()}
