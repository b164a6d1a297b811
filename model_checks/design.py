"""What a design hands lanecheck: one ``Design`` object, built by its folder's ``__init__``.

The generic machinery (explorer, harness, conformance, commands, verify, bench)
reaches a design only through this object, found by name in the registry
(``model_checks.registry``). A design's folder, ``model_checks/designs/<name>/``
for the built-in ones or any importable package for a third party's, holds
everything lanecheck knows about it and fills in the fields below; every field
past ``mutants`` is optional, and an empty one means "this design has none".

Heavy parts are named as ``"module:attribute"`` strings and imported only when
used, so that listing the designs (every CLI start) stays cheap: the verify-row
providers, bench workloads, trace engines, and also ``spec``, ``configs`` and
``mutants``, which a design may give as values (a plug-in does) or as strings
(the built-in folders do), read as values either way (``Lazy``).
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

if TYPE_CHECKING:  # at run time both come with the spec, on first use (``Lazy``)
    from model_checks.mutant import SpecMutant
    from spec.language import Spec

T = TypeVar("T")

# (constants, state) -> the value of one component, for generated state diagrams.
Projection = Callable[[Any, Any], Hashable]
# A harness program: called with the controlled runtime, runs the reference under it.
Program = Callable[[Any], object]


@dataclass(frozen=True)
class Scenario:
    """A program of the real reference under the harness, with the verdict `lanecheck verify` requires.

    ``expect`` is a harness verdict ("exhaustive", "bounded") for a correct
    program, or a failure kind ("lost_wakeup", "deadlock", "assertion", ...) for
    a program that must be caught. ``options`` are ``model_checks.harness.Options``
    fields for the verify row (``quick_options`` for ``verify --quick``, when
    they differ, and ``quick_expect`` the verdict they must give, when that differs:
    a proof too slow for ``--quick`` is sampled there, and its row then says "bounded",
    never "exhaustive"). ``subject`` names the row (default "<design> scenario <name>");
    ``verify=False`` leaves the row to the design's own provider (a scenario whose
    check needs more than a verdict, e.g. its failing trace validated), and the
    scenario is still listed and run by `lanecheck explore`.

    ``build_for_states``, when given, builds the same program with the same checks but keeping no
    history (no recorded trace, no event log): what the state search (``strategy "states"``,
    ``lanecheck explore --strategy states``) runs, since a kept history makes two orders of
    independent steps two states that never meet again. ``build`` keeps what other readers of
    an execution need (the report site reads a run's whole trace).
    """

    name: str
    build: Callable[[], Program]
    expect: str = "exhaustive"
    doc: str = ""
    options: Mapping[str, Any] = field(default_factory=dict)
    quick_options: Mapping[str, Any] | None = None
    quick_expect: str | None = None
    subject: str | None = None
    verify: bool = True
    build_for_states: Callable[[], Program] | None = None

    @property
    def must_fail(self) -> bool:
        return self.expect not in ("exhaustive", "bounded")

    def search_options(self, quick: bool = False) -> Mapping[str, Any]:
        """The harness options of this scenario's run (``quick``: under ``verify --quick``). A
        correct scenario runs the data-race detector unless its options say ``"races": False``,
        so that its "exhaustive" covers the reference's plain shared accesses too, not only its
        synchronisation points (a third party's scenario written with no options was proved at
        synchronisation points only, and its row did not say so: outside review 16's F1). A
        seeded bug's runs keep the detector off unless asked: it must be caught as its kind."""
        fields = self.options if not quick or self.quick_options is None else self.quick_options
        if self.must_fail or "races" in fields or fields.get("interleave_races"):
            return fields
        return {**fields, "races": True}

    def program(self, *, for_states: bool = False) -> Program:
        """The program to run; ``for_states``: the one the state search runs."""
        if for_states and self.build_for_states is not None:
            return self.build_for_states()
        return self.build()


class Lazy(Generic[T]):
    """A required ``Design`` field given either as its value or as ``"module:attribute"`` naming
    it; read, it is always the value, imported on the first read and kept.

    A data descriptor: the dataclass's ``__init__`` stores through ``__set__`` (``object.__setattr__``
    honours it, so the frozen class works unchanged), and ``__get__`` on the class raises
    ``AttributeError``, which tells ``dataclass`` the field has no default.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.key = f"_lazy_{name}"

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> Lazy[T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...
    def __get__(self, instance: object | None, owner: type | None = None) -> Lazy[T] | T:
        if instance is None:
            raise AttributeError(f"{self.name} has no default")
        value = instance.__dict__[self.key]
        if isinstance(value, str):
            value = load(value)
            instance.__dict__[self.key] = value  # resolved once; the instance stays frozen to users
        result: T = value
        return result

    def __set__(self, instance: object, value: T | str) -> None:
        instance.__dict__[self.key] = value


@dataclass(frozen=True)
class Design:
    """Everything lanecheck knows about one design."""

    name: str  # as on the command line and in trace headers: "work-lane"
    # These three, the heavy part of a design, may each be given as "module:attribute" (``Lazy``).
    spec: Lazy[Spec] = Lazy()
    configs: Lazy[Mapping[str, Any]] = Lazy()  # configuration name -> the spec's constants
    mutants: Lazy[Mapping[str, SpecMutant]] = Lazy()  # seeded bugs of the spec, each caught by the explorer
    standard: str = "standard"  # the configuration `lanecheck verify` checks
    quick: str = "small"  # the configuration `lanecheck verify --quick` checks
    summary: str = ""  # one line for listings
    reference_modules: tuple[str, ...] = ()  # the reference's modules ("reference.scheduler", ...)
    projections: Mapping[str, Projection] = field(default_factory=dict)
    # Harness scenarios of the reference (correct ones and seeded reference bugs), by name; or
    # "module:attribute" naming that mapping, imported when first asked for (``harness()``).
    scenarios: Mapping[str, Scenario] | str = field(default_factory=dict)
    # Extra `lanecheck verify` rows of this design: (area, "module:function"), each function
    # ``rows(quick: bool) -> Iterator[VerifyRow]``.
    verify_rows: tuple[tuple[str, str], ...] = ()
    # Its trace format, when it has its own: "module:attribute" naming a
    # ``model_checks.conformance.streamed.DesignFormat`` (`lanecheck validate` picks it by the
    # header's ``design``).
    trace_format: str | None = None
    # When ``trace_format`` is judged by a hand-written engine: "module:attribute" naming a
    # ``DesignFormat`` of the same traces judged by the streaming search of the spec's own actions
    # (the cross-check the fast engine is tested against, and what the review site's state
    # coverage of real runs reads: only the search knows which spec states a trace passed).
    spec_trace_format: str | None = None
    # How `lanecheck traces export` writes its spec's covering behaviours, when the spec's steps
    # are not its trace events one for one: "module:function", each function
    # ``export(directory, constants, name, *, replace) -> list[Path]`` (default: the generic
    # ``conformance.export.export``, which copies the spec's labelled events).
    exporter: str | None = None
    # Its TLA+ twin, when it has one: "module:attribute" naming a ``model_checks.tlc.twin.TlaTwin``
    # (`lanecheck check --tlc` runs TLC on it beside the explorer).
    tla: str | None = None
    # Commands of its own on the `lanecheck` command line: "module:function", each function
    # ``register(app: typer.Typer) -> None``.
    commands: tuple[str, ...] = ()
    # Benchmarks of its reference: `lanecheck bench NAME` -> ("module", "what it measures"); the
    # module's ``bench(quick: bool) -> dict`` reports ratios against baselines of the same run. A
    # bench of its trace validator may give instead ``TRACE_BENCH`` (``bench.traces.TraceBench``)
    # and ``GOAL`` (events/s): the validator is measured against the goal (``goal_figures``).
    benches: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # Extra pages of `lanecheck report` (the seed's own charts, say): "module:function", each
    # function ``pages(quick: bool) -> Iterable[tuple[str, str]]`` giving a title and an HTML fragment.
    report_pages: tuple[str, ...] = ()

    def config(self, name: str) -> Any:
        try:
            return self.configs[name]
        except KeyError:
            raise KeyError(
                f"{self.name} has no configuration {name!r}; known: {', '.join(self.configs)}"
            ) from None

    def harness(self) -> Mapping[str, Scenario]:
        """The design's harness scenarios by name (imported on first use when named by a string)."""
        if isinstance(self.scenarios, str):
            table: Mapping[str, Scenario] = load(self.scenarios)
            return table
        return self.scenarios

    def mutant(self, name: str) -> SpecMutant:
        try:
            return self.mutants[name]
        except KeyError:
            raise KeyError(f"{self.name} has no variant {name!r}; known: {', '.join(self.mutants)}") from None


def built_in(package: str, name: str, **fields: Any) -> Design:
    """The ``Design`` of a built-in folder, ``model_checks/designs/<folder>/``, which follows the
    layout: its spec is ``spec/<folder>.py``'s ``SPEC``, its configurations the folder's
    ``configs.CONFIGS`` and its spec mutants ``spec_mutants.MUTANTS``; where the folder has the
    modules, its harness scenarios are ``harness.SCENARIOS`` and its trace format ``trace.FORMAT``.

    ``package`` is the folder's ``__name__``. Module names in ``fields`` that start with a dot
    (``".trace:FORMAT"``, a bench's ``".bench"``) are the folder's own modules, as in a relative
    import; the other fields are ``Design``'s, as they are.
    """
    folder = package.rpartition(".")[2]
    for key, module, target in (
        ("scenarios", "harness", ".harness:SCENARIOS"),
        ("trace_format", "trace", ".trace:FORMAT"),
    ):
        # Only looked up, not imported: listing the designs must stay cheap.
        if key not in fields and importlib.util.find_spec(f"{package}.{module}") is not None:
            fields[key] = target

    def own(target: str) -> str:
        return package + target if target.startswith(".") else target

    for key in ("scenarios", "trace_format", "spec_trace_format", "exporter", "tla"):
        if isinstance(fields.get(key), str):
            fields[key] = own(fields[key])
    fields["commands"] = tuple(own(target) for target in fields.get("commands", ()))
    fields["report_pages"] = tuple(own(target) for target in fields.get("report_pages", ()))
    fields["verify_rows"] = tuple((area, own(target)) for area, target in fields.get("verify_rows", ()))
    benches = fields.get("benches", {})
    fields["benches"] = {bench: (own(module), doc) for bench, (module, doc) in benches.items()}
    fields.setdefault("spec", f"spec.{folder}:SPEC")
    fields.setdefault("configs", f"{package}.configs:CONFIGS")
    fields.setdefault("mutants", f"{package}.spec_mutants:MUTANTS")
    return Design(name=name, **fields)


def load(target: str) -> Any:
    """The attribute a ``"module:attribute"`` string names."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def __getattr__(name: str) -> Any:
    # ``SpecMutant`` is re-exported for plug-ins; importing it imports the spec language, so only on use.
    if name == "SpecMutant":
        from model_checks.mutant import SpecMutant

        return SpecMutant
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Design", "Lazy", "Program", "Projection", "Scenario", "SpecMutant", "built_in", "load"]
