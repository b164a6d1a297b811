"""What a URL names: a design's spec or one of its mutants, bound to one configuration."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from model_checks.design import Design
from model_checks.mutant import SpecMutant
from model_checks.registry import design
from spec.language import Instance, SpecError


class NotFound(LookupError):
    """A name in the request that names nothing: the message says which and what is known."""

    @property
    def message(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Subject:
    design: str
    config: str
    mutant: str | None
    instance: Instance
    # What the mutant must violate, and why it is a bug (empty for the design itself).
    expect: str = ""
    doc: str = ""

    @property
    def title(self) -> str:
        return self.design + (f" — mutant {self.mutant}" if self.mutant else "") + f" [{self.config}]"


def default_config(design_name: str, mutant: str | None) -> str:
    """The configuration a bare ``DESIGN`` opens at: the mutant's own (where the explorer catches it),
    else the design's quick one."""
    d = _design(design_name)
    if mutant is not None:
        return _mutant(design_name, mutant).config
    return d.quick


@lru_cache(maxsize=64)
def subject(design_name: str, config: str, mutant: str | None) -> Subject:
    """The spec named by a URL, bound to its constants; ``NotFound`` names an unknown name,
    ``SpecError`` a configuration the spec's assumptions refuse."""
    d = _design(design_name)
    if config not in d.configs:
        raise NotFound(f"{design_name} has no configuration {config!r}; known: {', '.join(d.configs)}")
    constants: Any = d.config(config)
    if mutant is None:
        return Subject(design_name, config, None, _bound(d.spec, constants))
    m = _mutant(design_name, mutant)
    return Subject(design_name, config, mutant, _bound(m.spec, m.constants(constants)), m.expect, m.doc)


def _bound(spec: Any, constants: Any) -> Instance:
    instance = Instance(spec, constants)  # SpecError when an ASSUME fails
    if not instance.initial_states():
        raise SpecError(f"{spec.name}: Init gives no state")
    return instance


def _design(name: str) -> Design:
    try:
        return design(name)
    except KeyError as problem:
        raise NotFound(str(problem.args[0])) from None


def _mutant(design_name: str, name: str) -> SpecMutant:
    try:
        return _design(design_name).mutant(name)
    except KeyError as problem:
        raise NotFound(str(problem.args[0])) from None
