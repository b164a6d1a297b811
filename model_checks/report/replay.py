"""The harness replay string of a spec mutant's twin in the reference.

A design's harness scenario that must fail and is named like the spec mutant (``mutant/NAME``,
or ``NAME``) seeds the same bug in the reference. Run as `lanecheck explore` runs it (the program
named ``scenario:<design>/<scenario>``, so the schedule string's tag matches), its failure's
schedule is the string a reviewer pastes after ``--replay``; it is replayed once here with
explore's default options, and shown with a warning when that does not reproduce the failure.
"""

from __future__ import annotations

from dataclasses import dataclass

from model_checks.design import Design, Scenario
from model_checks.harness.api import check
from model_checks.harness.design_rows import quiet_reference
from model_checks.harness.options import Options


@dataclass(frozen=True)
class Replay:
    scenario: str  # "<design>/<scenario>", as `lanecheck explore` names it
    command: str | None  # "lanecheck explore ... --replay lc1...." when the bug was found
    text: str  # what happened, for the page


def twins(design: Design, mutant: str) -> dict[str, Scenario]:
    """The design's failing scenarios named like the spec mutant; {} when it has none (or none importable)."""
    try:
        table = design.harness()
    except ImportError:
        return {}
    return {name: s for name, s in table.items() if s.must_fail and name.rsplit("/", 1)[-1] == mutant}


def _named(scenario: Scenario, full_name: str) -> object:
    program = scenario.build()
    program.__qualname__ = f"scenario:{full_name}"
    program.__module__ = "lanecheck"
    return program


def replay(design: Design, name: str, scenario: Scenario, cap: float) -> Replay:
    full = f"{design.name}/{name}"
    fields = dict(scenario.quick_options if scenario.quick_options is not None else scenario.options)
    limit = fields.get("time_limit")
    fields["time_limit"] = cap if limit is None else min(float(limit), cap)
    try:
        with quiet_reference():  # a seeded bug's own loggers would print per execution
            found = check(_named(scenario, full), Options(**fields))  # type: ignore[arg-type]
            if found.failure is None:
                return Replay(full, None, f"not found within {cap:g} s ({found.verdict_text()})")
            schedule = found.failure.schedule
            again = check(_named(scenario, full), Options(replay=schedule))  # type: ignore[arg-type]
    except Exception as problem:  # a scenario that cannot run here is reported on its page
        return Replay(full, None, f"not run: {type(problem).__name__}: {problem}")
    command = f"lanecheck explore {full} --replay {schedule}"
    failure = found.failure
    if again.failure is None or again.failure.kind != failure.kind:
        return Replay(
            full,
            command,
            f"{failure.kind}: {failure.message} — replayed with explore's default options it did "
            f"not fail the same way; the search ran with the scenario's options {fields}",
        )
    return Replay(full, command, f"{failure.kind}: {failure.message}")
