"""`lanecheck verify`: every check of the project at its standard configuration, as one table.

Each area of ``model_checks`` (explorer, harness, conformance, ...) contributes
rows through a *provider*: a function ``rows(quick: bool) -> Iterator[VerifyRow]``
named in ``PROVIDERS``. A row is one check with the verdict it must have (a
spec must *hold*, a mutant must be *caught*); verify fails when any row's
actual verdict differs from the expected one, or when any row is incomplete.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any


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


Provider = Callable[[bool], Iterator[VerifyRow]]

# (area, "module:function"), in the order the table shows them.
PROVIDERS: list[tuple[str, str]] = [
    ("spec", "model_checks.explorer.verify_rows:rows"),
    ("harness", "model_checks.harness.verify_rows:rows"),
    ("harness", "model_checks.harness.mutant_rows:rows"),
    ("harness", "model_checks.harness.gate_rows:rows"),
    ("conformance", "model_checks.conformance.verify_rows:rows"),
    ("conformance", "model_checks.conformance.link.verify_rows:rows"),
    ("akka-mailbox", "model_checks.conformance.akka_mailbox:rows"),
]


def load_provider(target: str) -> Provider:
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    provider: Provider = getattr(module, attr)
    return provider
