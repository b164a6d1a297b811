"""The designs lanecheck knows: each spec with its configurations and its mutants."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from model_checks.configs.akka_mailbox import CONFIGS as AKKA_MAILBOX_CONFIGS
from model_checks.configs.schedule_gate import CONFIGS as SCHEDULE_GATE_CONFIGS
from model_checks.configs.work_lane import CONFIGS as WORK_LANE_CONFIGS
from model_checks.mutants.akka_mailbox_spec import MUTANTS as AKKA_MAILBOX_MUTANTS
from model_checks.mutants.base import SpecMutant
from model_checks.mutants.schedule_gate_spec import MUTANTS as SCHEDULE_GATE_MUTANTS
from model_checks.mutants.work_lane_spec import MUTANTS as WORK_LANE_MUTANTS
from spec.akka_mailbox import SPEC as AKKA_MAILBOX
from spec.akka_mailbox import ShowWord
from spec.language import Spec
from spec.schedule_gate import SPEC as SCHEDULE_GATE
from spec.work_lane import SPEC as WORK_LANE


@dataclass(frozen=True)
class Design:
    name: str
    spec: Spec
    configs: dict[str, Any]
    mutants: dict[str, SpecMutant]
    standard: str = "standard"
    # Named projections of a state onto one component, for generated state diagrams.
    projections: dict[str, Callable[[Any, Any], Hashable]] = field(default_factory=dict)

    def config(self, name: str) -> Any:
        try:
            return self.configs[name]
        except KeyError:
            raise KeyError(
                f"{self.name} has no configuration {name!r}; known: {', '.join(self.configs)}"
            ) from None

    def mutant(self, name: str) -> SpecMutant:
        try:
            return self.mutants[name]
        except KeyError:
            raise KeyError(f"{self.name} has no variant {name!r}; known: {', '.join(self.mutants)}") from None


DESIGNS: dict[str, Design] = {
    "work-lane": Design(
        "work-lane",
        WORK_LANE,
        WORK_LANE_CONFIGS,
        WORK_LANE_MUTANTS,
        projections={
            "lane": lambda c, s: s.status[0],
            "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
            "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
            "scheduler": lambda c, s: s.phase,
        },
    ),
    "schedule-gate": Design(
        "schedule-gate",
        SCHEDULE_GATE,
        SCHEDULE_GATE_CONFIGS,
        SCHEDULE_GATE_MUTANTS,
        projections={
            "gate": lambda c, s: s.gate[0].phase,
            "gate-word": lambda c, s: s.gate[0].show(),
            "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
            "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
            "permits": lambda c, s: s.free,
        },
    ),
    "akka-mailbox": Design(
        "akka-mailbox",
        AKKA_MAILBOX,
        AKKA_MAILBOX_CONFIGS,
        AKKA_MAILBOX_MUTANTS,
        projections={
            "mailbox": lambda c, s: ShowWord(s.status[0]),
            "worker": lambda c, s: s.worker[c.worker_names()[0]][0],
            "producer": lambda c, s: s.producer[c.producer_names()[0]][0],
            "supervisor": lambda c, s: s.supervisor[c.supervisor_names()[0]][0],
        },
    ),
}


def design(name: str) -> Design:
    try:
        return DESIGNS[name]
    except KeyError:
        raise KeyError(f"no design {name!r}; known: {', '.join(DESIGNS)}") from None
