"""What a spec mutant is: a named buggy variant with the property it must violate and how soon."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

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
