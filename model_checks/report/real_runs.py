"""Which observable spec actions the real reference performed: its correct harness scenarios run
under PCT for a bounded budget, every execution's trace read through the harness's trace hook.

The seam is the one a failure report uses: a scenario's program hands the harness a trace source
(``rt.trace``), and ``run_once`` leaves it on ``Execution.hooks.trace`` until the execution is
released. Here it is read after every execution, not only a failing one. An event is a dict (its
``event`` field names it) or a line a program formatted for its failure report (a
whitespace-separated token that is one of the design's event names names it). Nothing here names
a design: the event names are the spec actions' ``event`` labels and the trace format's events.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from model_checks.conformance.streamed import DesignFormat
from model_checks.design import Design, Scenario, load
from model_checks.harness.api import run_once
from model_checks.harness.design_rows import quiet_reference
from model_checks.harness.options import Options
from model_checks.harness.strategies.randomized import PctChooser
from model_checks.report.state_coverage import StateRuns, judge_execution, state_format

# Executions and seconds per correct scenario (``--quick``: the first pair).
BUDGET_QUICK = (40, 2.0)
BUDGET = (300, 10.0)
# Seconds per correct scenario spent judging its executions' traces for state coverage, apart
# from the run budget: a design's spec-driven checker may judge tens of events a second, so the
# executions past this budget still count for the actions but their states are not judged.
JUDGE_SECONDS_QUICK = 2.0
JUDGE_SECONDS = 10.0
SEED = 1
# Options a scenario sets for its verdict that do not change which program runs: the budget here
# replaces them, and the race detector (several times slower) finds nothing an event count needs.
_SEARCH_FIELDS = frozenset(
    {"strategy", "max_executions", "time_limit", "seed", "preemption_bound", "races", "interleave_races"}
)


@dataclass
class ScenarioRun:
    """What one correct scenario's bounded run saw."""

    name: str
    executions: int = 0
    failed: int = 0  # executions that ended in a harness failure (their events still count)
    traced: bool = False  # did its program hand the harness a trace source?
    seconds: float = 0.0  # running and judging
    judged: int = 0  # executions whose traces were judged for state coverage
    events: Counter[str] = field(default_factory=Counter)
    problem: str | None = None  # the scenario could not be run at all


@dataclass
class RealRuns:
    """Every correct scenario's run, and the bound that produced it."""

    executions_cap: int
    seconds_cap: float
    runs: list[ScenarioRun] = field(default_factory=list)
    # the spec states the runs' traces matched (``state_coverage``); ``why_not`` set when unavailable
    states: StateRuns = field(default_factory=StateRuns)

    @property
    def bound(self) -> str:
        return (
            f"PCT (seed {SEED}), at most {self.executions_cap} executions or {self.seconds_cap:g} s "
            "per correct scenario"
        )

    def seen(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for run in self.runs:
            total.update(run.events)
        return total


def event_names(design: Design) -> frozenset[str]:
    """The names an observable step goes by: the spec's action labels and the format's events."""
    names = {a.event for a in design.spec.actions if a.event}
    if design.trace_format:
        fields: Mapping[str, Any] = getattr(load(design.trace_format), "fields", {}) or {}
        names.update(fields)
    return frozenset(names)


def event_name(event: object, names: frozenset[str]) -> str | None:
    """The event name of one recorded event, or None when it names none of ``names``."""
    if isinstance(event, Mapping):
        value = event.get("event")
        return value if isinstance(value, str) and value in names else None
    if isinstance(event, str):
        return next((token for token in event.split() if token in names), None)
    return None


def _options(scenario: Scenario, quick: bool) -> Options:
    chosen = scenario.search_options(quick)
    return Options(**{k: v for k, v in chosen.items() if k not in _SEARCH_FIELDS})


def run_scenario(
    name: str,
    scenario: Scenario,
    names: frozenset[str],
    cap: tuple[int, float],
    quick: bool,
    states: StateRuns | None = None,
    fmt: DesignFormat | None = None,
) -> ScenarioRun:
    """Run one correct scenario under the budget; with ``states`` and a streaming-search ``fmt``,
    also judge each execution's trace and collect the spec states it matched, while the judging
    budget (``states.judge_seconds``, not counted in the run's) lasts."""
    out = ScenarioRun(name)
    started = time.perf_counter()
    judging = 0.0
    try:
        program = scenario.build()
        options = _options(scenario, quick)
    except Exception as problem:  # a broken scenario is named on the page; the site is still written
        out.problem = f"{type(problem).__name__}: {problem}"
        return out
    executions, seconds = cap
    expected = 50
    try:
        with quiet_reference():  # a failing execution's last-resort tracebacks are noise here
            while out.executions < executions and time.perf_counter() - started - judging < seconds:
                chooser = PctChooser(SEED, out.executions, options.pct_depth, expected)
                ex = run_once(program, options, chooser, sources=False)
                out.executions += 1
                expected = max(expected, len(ex.steps))
                out.failed += ex.failure is not None
                for source in ex.hooks.trace:
                    out.traced = True
                    out.events.update(_names(source(), names))
                if states is not None and fmt is not None and states.why_not is None and ex.hooks.trace:
                    if judging < states.judge_seconds:
                        began = time.perf_counter()
                        judge_execution(fmt, ex.hooks.trace, states, name)
                        judging += time.perf_counter() - began
                        states.judged += 1
                        out.judged += 1
                    else:
                        states.unjudged += 1
                ex.release()
    except Exception as problem:
        out.problem = f"{type(problem).__name__}: {problem}"
    finally:
        out.seconds = time.perf_counter() - started
    return out


def _names(events: Iterable[object], names: frozenset[str]) -> Iterable[str]:
    for event in events:
        name = event_name(event, names)
        if name is not None:
            yield name


def real_runs(design: Design, quick: bool) -> RealRuns | None:
    """The bounded runs of ``design``'s correct scenarios; None when it has no scenarios or no
    trace format (nothing then maps its runs to spec actions)."""
    if not design.trace_format:
        return None
    scenarios = {n: s for n, s in design.harness().items() if not s.must_fail}
    if not scenarios:
        return None
    cap = BUDGET_QUICK if quick else BUDGET
    names = event_names(design)
    out = RealRuns(*cap)
    out.states.judge_seconds = JUDGE_SECONDS_QUICK if quick else JUDGE_SECONDS
    fmt, judged_by = state_format(design)
    if fmt is None:
        out.states.why_not = judged_by
    else:
        out.states.judged_by = judged_by
    out.runs = [run_scenario(n, s, names, cap, quick, out.states, fmt) for n, s in scenarios.items()]
    return out
