"""What TLC needs from a design with a TLA+ twin: its modules and a model per configuration.

A design that has a hand-written TLA+ twin names an object with this shape in
``Design.tla``; ``model_checks.tlc.run`` runs TLC on the models it builds, and
``lanecheck check --tlc`` compares the verdicts with the explorer's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from spec.language import Spec


@dataclass(frozen=True)
class Model:
    """One TLC model: a module ``name``.tla and its configuration file(s)."""

    name: str
    tla: str
    cfgs: dict[str, str]  # file name -> text

    def write(self, directory: Path) -> list[Path]:
        written = [directory / f"{self.name}.tla"]
        written[0].write_text(self.tla)
        for file_name, text in self.cfgs.items():
            (directory / file_name).write_text(text)
            written.append(directory / file_name)
        return written


class TlaTwin(Protocol):
    """A design's TLA+ twin."""

    @property
    def directory(self) -> Path:
        """The folder of the hand-written modules."""

    @property
    def modules(self) -> tuple[str, ...]:
        """The hand-written modules a model extends (file names in ``directory``)."""

    def spec_of(self, variant: str | None) -> tuple[Spec, str]:
        """The Python spec of a variant (None: the design) and the name of its TLA+ formula."""

    def build(
        self,
        config: str,
        variant: str | None = None,
        constants: Any = None,
        *,
        properties: list[str] | None = None,
    ) -> Model:
        """The model of ``config`` (with ``variant``): ``name.cfg`` checks invariants, deadlock and
        liveness (only ``properties`` when given); ``name_symmetry.cfg`` the same but liveness,
        under symmetry."""


def twin_of(design_name: str) -> TlaTwin:
    """The registered design's TLA+ twin; ``KeyError`` naming the designs that have one."""
    # Imported here: the registry loads every design, and `lanecheck check --tlc` is the only reader.
    from model_checks.design import load
    from model_checks.registry import designs

    found = designs().get(design_name)
    if found is None or found.tla is None:
        having = [name for name, d in designs().items() if d.tla is not None]
        raise KeyError(f"{design_name} has no TLA+ twin; designs with one: {', '.join(having)}")
    twin: TlaTwin = load(found.tla)
    return twin
