"""A design's reference mutants as rows of its harness ``Scenario`` table, the way most designs
run them: ``mutant/<name>``, searched by DPOR for at most a minute, and expected to fail with the
kind the mutant names (``lanecheck verify`` row "<design> reference --mutant <name>")."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

from model_checks.design import Program, Scenario

MUTANT_OPTIONS = {"strategy": "dpor", "time_limit": 60}


class ReferenceMutant(Protocol):
    @property
    def doc(self) -> str: ...

    @property
    def expect(self) -> str: ...  # the harness failure kind a run must report


M = TypeVar("M", bound=ReferenceMutant)


def mutant_scenarios(
    design: str, mutants: Mapping[str, M], build: Callable[[M], Callable[[], Program]]
) -> dict[str, Scenario]:
    """One row per mutant, in the table's order; ``build(m)`` makes the mutant's program (a
    picklable callable, e.g. a ``functools.partial``: verify runs rows in worker processes)."""
    return {
        f"mutant/{name}": Scenario(
            f"mutant/{name}",
            build(m),
            expect=m.expect,
            doc=m.doc,
            options=dict(MUTANT_OPTIONS),
            subject=f"{design} reference --mutant {name}",
        )
        for name, m in mutants.items()
    }


__all__ = ["MUTANT_OPTIONS", "mutant_scenarios"]
