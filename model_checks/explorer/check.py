"""One call that checks a spec under one configuration: safety, deadlock, then liveness.

The search itself is this process's (``search.py``) unless an ``Engine`` is passed: another
place to search (Ray workers, ``ray/engine.py``), whose outcome is turned into a result here, so
every engine refuses, notes and reports alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from model_checks.explorer import counterexample as cx
from model_checks.explorer.liveness import check_property
from model_checks.explorer.search import (
    HOLDS,
    INCOMPLETE,
    VIOLATED,
    Options,
    Outcome,
    Stats,
    Violation,
    search,
)
from spec.language import Instance, Spec, SpecError

EXIT_CODES = {HOLDS: 0, VIOLATED: 1, INCOMPLETE: 3}
EXIT_SPEC_ERROR = 2


class NotSupported(ValueError):
    """The engine cannot check what was asked (liveness on an engine that keeps no state graph)."""


@dataclass(frozen=True)
class Engine:
    """A search elsewhere than in this process: safety and deadlock only, since its outcome holds
    no state graph. ``search(inst, options)`` runs after the spec and options are validated."""

    search: Callable[[Instance, Options], Outcome]
    workers: int  # the processes that share the search, for the result
    note: str  # what the result says about where it was searched
    liveness_refusal: str  # why a liveness check is refused (``NotSupported``)


@dataclass
class CheckResult:
    spec: str
    variant: str | None
    config: str
    constants: Any
    verdict: str  # holds | violated | incomplete
    stats: Stats
    violation: Violation | None = None
    counterexample: cx.Counterexample | None = None
    incomplete_reason: str | None = None
    notes: list[str] = field(default_factory=list)
    properties_checked: list[str] = field(default_factory=list)
    symmetry: bool = False
    workers: int = 1  # the processes that shared the search

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]


def check(
    spec: Spec,
    constants: Any,
    options: Options | None = None,
    config: str = "custom",
    *,
    engine: Engine | None = None,
) -> CheckResult:
    """Explore ``spec`` under ``constants``, here or on ``engine``; raise ``SpecError`` for a broken
    spec or configuration, ``NotSupported`` for liveness on an engine that cannot check it."""
    options = options or Options()
    inst = Instance(spec, constants)
    if not inst.initial_states():
        raise SpecError(f"{spec.name}: Init gives no state")
    notes: list[str] = []
    if options.symmetry and spec.symmetry_fn is None:
        raise SpecError(f"{spec.name} declares no symmetry; run without --symmetry")
    if options.symmetry and spec.properties and options.liveness:
        notes.append(
            "liveness NOT checked: symmetry reduction can hide or invent fair cycles;"
            " rerun without --symmetry"
        )
    liveness = bool(spec.properties) and options.liveness and not options.symmetry
    if engine is not None:
        if liveness:
            raise NotSupported(engine.liveness_refusal)
        outcome = engine.search(inst, options)
        notes.append(engine.note)
        workers = engine.workers
    else:
        if options.workers > 1 and liveness:
            notes.append(
                f"searched with 1 process, not {options.workers}: liveness needs the whole state graph"
                " in one process (run with --no-liveness to use several)"
            )
            options = replace(options, workers=1)
        outcome = search(inst, options)
        workers = options.workers
    result = CheckResult(
        spec=spec.name,
        variant=spec.variant,
        config=config,
        constants=constants,
        verdict=outcome.verdict,
        stats=outcome.stats,
        incomplete_reason=outcome.incomplete_reason,
        notes=notes,
        properties_checked=[inv.name for inv in spec.invariants] + (["Deadlock"] if options.deadlock else []),
        symmetry=options.symmetry,
        workers=workers,
    )
    canon = spec.symmetry_fn if options.symmetry else None
    if outcome.violation is not None:
        result.violation = outcome.violation
        result.counterexample = cx.build(
            inst, cx.replay_path(inst, outcome.violation.path, outcome.graph.states, canon)
        )
        return result
    unfired = outcome.stats.unfired()
    if unfired and outcome.verdict == HOLDS:
        notes.append("actions that never fired (vacuous spec or configuration?): " + ", ".join(unfired))
    if outcome.verdict == HOLDS and liveness:
        for prop in spec.properties:
            violation = check_property(inst, outcome.graph, prop)
            result.properties_checked.append(prop.name)
            if violation is not None:
                assert violation.cycle is not None
                path = violation.path + violation.cycle[1:]
                steps = cx.replay_path(inst, path, outcome.graph.states, None)
                result.verdict = VIOLATED
                result.violation = violation
                result.counterexample = cx.build(
                    inst, steps, loop_start=len(violation.path) - 1, stutter=violation.stutter
                )
                return result
    return result
