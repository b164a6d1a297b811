"""What a spec mutant is: a named buggy variant with the property it must violate and how soon."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from spec.language import Spec


@dataclass(frozen=True)
class SpecMutant:
    name: str
    doc: str
    spec: Spec
    expect: str  # the invariant or property that must be violated
    length: int  # the length of the shortest counterexample
    config: str = "small"
    overrides: dict[str, Any] = field(default_factory=dict)  # constants changed for this mutant

    def constants(self, base: Any) -> Any:
        return replace(base, **self.overrides)


class Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=Named)


def by_name(*mutants: N) -> dict[str, N]:
    """The table of a design's mutants by name, in the order given; two with one name is an error."""
    table: dict[str, N] = {}
    for m in mutants:
        if m.name in table:
            raise ValueError(f"two mutants are named {m.name!r}")
        table[m.name] = m
    return table
