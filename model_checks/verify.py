"""`lanecheck verify`: every check of the project at its standard configuration, as one table.

Rows come from *providers*, named as ``"module:function"`` strings and imported
only when run: the generic ones here (``PER_DESIGN``, computed the same way for
every design from its ``Design`` object; ``DESIGN_FREE``, the harness's own
programs), then each design's own (``Design.verify_rows``). A row is one check
with the verdict it must have (a spec must *hold*, a mutant must be *caught*);
verify fails when any row's actual verdict differs from the expected one, or
when any row is incomplete.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from model_checks.design import Design


@dataclass(frozen=True)
class VerifyRow:
    area: str  # "spec", "harness", "conformance", ...
    subject: str  # what was checked: "work-lane/standard", "mutant work-lane/split-idle"
    expected: str  # the verdict it must have: "holds", "caught", "exhaustive", "allowed" ...
    actual: str  # the verdict it had
    figures: str  # the numbers a reader wants beside it
    seconds: float

    @property
    def ok(self) -> bool:
        return self.expected == self.actual

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


Provider = Callable[[bool], Iterator[VerifyRow]]  # rows(quick)
DesignsProvider = Callable[[bool, "Sequence[Design]"], Iterator[VerifyRow]]  # rows(quick, designs)

# Rows over every selected design, each computed the same way from the Design object:
# (area, "module:function"), the function being ``rows(quick, designs)``.
PER_DESIGN: list[tuple[str, str]] = [
    ("spec", "model_checks.explorer.verify_rows:rows"),
    ("harness", "model_checks.harness.design_rows:rows"),
]
# Rows that belong to no design (the harness's own classic programs): shown when no
# design is selected. Each function is ``rows(quick)``.
DESIGN_FREE: list[tuple[str, str]] = [
    ("harness", "model_checks.harness.verify_rows:rows"),
]


def load_provider(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


@dataclass(frozen=True)
class Step:
    """One provider to run: its area, what it covers, and the call that yields its rows."""

    area: str
    covers: str  # a design's name, or "lanecheck" for the design-free rows
    run: Callable[[bool], Iterator[VerifyRow]]


def plan(areas: Sequence[str] | None = None, design_names: Sequence[str] | None = None) -> list[Step]:
    """The providers `lanecheck verify` runs, in table order; ``KeyError`` names an unknown design."""
    from model_checks.registry import design, designs

    chosen = [design(name) for name in design_names] if design_names else list(designs().values())
    steps: list[Step] = []
    for area, target in PER_DESIGN:
        for d in chosen:
            steps.append(Step(area, d.name, partial(_per_design, target, d)))
    if not design_names:
        steps += [Step(area, "lanecheck", load_provider(target)) for area, target in DESIGN_FREE]
    for d in chosen:
        steps += [Step(area, d.name, partial(_lazy, target)) for area, target in d.verify_rows]
    return [s for s in steps if not areas or s.area in areas]


def _per_design(target: str, d: Design, quick: bool) -> Iterator[VerifyRow]:
    provider: DesignsProvider = load_provider(target)
    return provider(quick, (d,))


def _lazy(target: str, quick: bool) -> Iterator[VerifyRow]:
    provider: Provider = load_provider(target)
    return provider(quick)
