"""`lanecheck verify`: every check of the project at its standard configuration, as one table.

Rows come from *providers*, named as ``"module:function"`` strings and imported
only when run: the generic ones here (``PER_DESIGN``, computed the same way for
every design from its ``Design`` object; ``DESIGN_FREE``, the harness's own
programs), then each design's own (``Design.verify_rows``). A row is one check
with the verdict it must have (a spec must *hold*, a mutant must be *caught*);
verify fails when any row's actual verdict differs from the expected one, or
when any row is incomplete.

The plan is also cut into *units* (``units``): a step, or one part of a step whose provider
iterates over a field of the ``Design`` (``PER_DESIGN``'s third item), each unit described by names
only, so that a worker process can rebuild and run it (``run_units``). Units are independent of
each other, and ``run_units`` returns their rows in plan order whatever the order they finished in.
Each row carries the CPU seconds its provider spent producing it (``cpu_seconds``): on a shared
machine wall seconds say little, and the CPU of the units is what bounds a run on N cores
(``makespan``).
"""

from __future__ import annotations

import dataclasses
import heapq
import importlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
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
    # When the row was not computed in this run but taken from a certificate: that run's date.
    reused_from: str | None = None
    # CPU seconds (user + system, every thread of the process and its waited-for children) spent
    # producing the row, measured by verify around the provider (``run_unit``, ``with_cpu``); the
    # first row of a unit includes the provider's set-up. None when not measured (reused, or a
    # provider called directly). Not an argument: providers never set it; not compared: a
    # measurement, not part of what the row says.
    cpu_seconds: float | None = field(default=None, init=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.expected == self.actual

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}

    def with_cpu(self, seconds: float) -> VerifyRow:
        """This row, with the CPU seconds verify measured for it."""
        row = dataclasses.replace(self)
        object.__setattr__(row, "cpu_seconds", seconds)  # frozen, and no __init__ argument
        return row


Provider = Callable[[bool], Iterator[VerifyRow]]  # rows(quick)
DesignsProvider = Callable[[bool, "Sequence[Design]"], Iterator[VerifyRow]]  # rows(quick, designs)

# Rows over every selected design, each computed the same way from the Design object:
# (area, "module:function", field), the function being ``rows(quick, designs)``. ``field`` names
# the ``Design`` field the provider iterates with one independent row per entry; the step is then
# cut into one unit per entry (``parts``):
# * "scenarios": each unit runs the provider on a copy of the design holding that scenario only;
# * "mutants": the spec row first (part ``SPEC_PART``), then one unit per mutant (part
#   "--variant NAME"); the provider is called with ``only=part`` (a mutant's row needs no spec row).
# ``None``: the step is one unit.
PER_DESIGN: list[tuple[str, str, str | None]] = [
    ("spec", "model_checks.explorer.verify_rows:rows", "mutants"),
    ("harness", "model_checks.harness.design_rows:rows", "scenarios"),
]
SPEC_PART = "spec"
VARIANT = "--variant "  # a mutant's part: "--variant NAME", as the row's subject says it
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
    # How to rebuild it by name: "per-design", "design-free" or "design-own", and its provider.
    kind: str = "design-own"
    target: str = ""
    split: str | None = None  # the Design field it may be cut along (``PER_DESIGN``)


def plan(areas: Sequence[str] | None = None, design_names: Sequence[str] | None = None) -> list[Step]:
    """The providers `lanecheck verify` runs, in table order; ``KeyError`` names an unknown design."""
    from model_checks.registry import design, designs

    chosen = [design(name) for name in design_names] if design_names else list(designs().values())
    steps: list[Step] = []
    for area, target, split in PER_DESIGN:
        for d in chosen:
            steps.append(Step(area, d.name, partial(_per_design, target, d), "per-design", target, split))
    if not design_names:
        steps += [
            Step(area, "lanecheck", load_provider(target), "design-free", target)
            for area, target in DESIGN_FREE
        ]
    for d in chosen:
        steps += [
            Step(area, d.name, partial(_lazy, target), "design-own", target) for area, target in d.verify_rows
        ]
    return [s for s in steps if not areas or s.area in areas]


def _per_design(target: str, d: Design, quick: bool) -> Iterator[VerifyRow]:
    provider: DesignsProvider = load_provider(target)
    return provider(quick, (d,))


def _lazy(target: str, quick: bool) -> Iterator[VerifyRow]:
    provider: Provider = load_provider(target)
    return provider(quick)


@dataclass(frozen=True)
class Unit:
    """A step or one part of it, by names only (it crosses to a worker process and back)."""

    area: str
    covers: str  # a design's name, or "lanecheck"
    kind: str  # "per-design", "design-free", "design-own"
    target: str  # the provider, "module:function"
    part: str | None = None  # the entry of the step's split field this unit runs, or None: all

    @property
    def key(self) -> str:
        """Names the unit across runs (certificates match units by it)."""
        return f"{self.area} | {self.covers} | {self.target}" + (f" | {self.part}" if self.part else "")

    @property
    def label(self) -> str:
        return f"{self.area} ({self.covers}{': ' + self.part if self.part else ''})"


def parts(d: Design, split: str) -> list[str]:
    """The entries of a design's ``split`` field, each a unit of its own, in the step's row order."""
    if split == "scenarios":
        return [name for name, scenario in d.harness().items() if scenario.verify]
    if split == "mutants":
        return [SPEC_PART, *(VARIANT + name for name in d.mutants)]
    raise ValueError(f"verify cannot cut a step along the Design field {split!r}")


def narrow(d: Design, split: str, part: str) -> Design:
    """A copy of ``d`` whose ``split`` field holds the entry ``part`` only."""
    if split == "scenarios":
        return dataclasses.replace(d, scenarios={part: d.harness()[part]})
    raise ValueError(f"verify cannot cut a step along the Design field {split!r}")


def mutant_of(part: str) -> str | None:
    """The mutant a part of the spec step names, or None for the spec row."""
    if part == SPEC_PART:
        return None
    if part.startswith(VARIANT):
        return part[len(VARIANT) :]
    raise ValueError(f"{part!r} is not a part of the spec step ({SPEC_PART!r} or '{VARIANT}NAME')")


def units(areas: Sequence[str] | None = None, design_names: Sequence[str] | None = None) -> list[Unit]:
    """The plan cut into independent units, in table order."""
    from model_checks.registry import design

    out: list[Unit] = []
    for step in plan(areas, design_names):
        whole = Unit(step.area, step.covers, step.kind, step.target)
        if step.kind == "per-design" and step.split is not None:
            out += [dataclasses.replace(whole, part=p) for p in parts(design(step.covers), step.split)]
        else:
            out.append(whole)
    return out


def split_of(target: str) -> str | None:
    """The ``Design`` field a per-design provider is cut along (``PER_DESIGN``), or None."""
    return next((split for _, t, split in PER_DESIGN if t == target), None)


def run_unit(unit: Unit, quick: bool) -> list[VerifyRow]:
    """The rows of one unit, computed in this process, each with the CPU seconds it took."""
    started = cpu_now()
    return _stamped(_unit_rows(unit, quick), started)


def _unit_rows(unit: Unit, quick: bool) -> Iterable[VerifyRow]:
    from model_checks.registry import design

    if unit.kind == "per-design":
        d = design(unit.covers)
        if unit.part is None:
            return _per_design(unit.target, d, quick)
        split = split_of(unit.target)
        if split is None:
            raise ValueError(f"{unit.key}: its provider is not cut into parts")
        if split == "mutants":
            provider = load_provider(unit.target)
            rows: Iterable[VerifyRow] = provider(quick, (d,), only=unit.part)
            return rows
        return _per_design(unit.target, narrow(d, split, unit.part), quick)
    if unit.kind in ("design-free", "design-own"):
        return _lazy(unit.target, quick)
    raise ValueError(f"{unit.key}: unknown kind of unit {unit.kind!r}")


def cpu_now() -> float:
    """CPU seconds of this process (all its threads) and of its children it has waited for."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def _stamped(rows: Iterable[VerifyRow], started: float) -> list[VerifyRow]:
    """The rows, each stamped with the CPU seconds since the previous one (the first: since
    ``started``). Providers are generators, so the time between two rows is the second's work."""
    out: list[VerifyRow] = []
    it = iter(rows)
    before = started
    while True:
        try:
            row = next(it)
        except StopIteration:
            return out
        after = cpu_now()
        out.append(row.with_cpu(round(after - before, 3)))
        before = after


def longest_first(todo: Sequence[Unit], costs: Mapping[str, float]) -> list[int]:
    """The order to start ``todo`` in: by cost (``costs``: unit key -> seconds), longest first, so
    that the workers finish together; units without a cost first (they may be long), each group in
    plan order."""
    return sorted(range(len(todo)), key=lambda i: -costs.get(todo[i].key, float("inf")))


def makespan(costs: Sequence[float], jobs: int) -> float:
    """How long ``jobs`` workers take on units of these costs started in this order, each unit
    going to the first worker free (as ``run_units`` hands them out): the predicted wall time,
    start-up left out. Its floors: ``sum(costs) / jobs`` and ``max(costs)``."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    free = [0.0] * min(jobs, max(len(costs), 1))
    for cost in costs:
        heapq.heapreplace(free, free[0] + cost)
    return max(free)


# Called after each unit: its index in the units run, its rows, the seconds it took (wall, in its process).
Done = Callable[[int, list[VerifyRow], float], None]


def _timed(unit: Unit, quick: bool) -> tuple[list[VerifyRow], float]:
    started = time.perf_counter()
    rows = run_unit(unit, quick)
    return rows, time.perf_counter() - started


def run_units(
    todo: Sequence[Unit],
    quick: bool,
    jobs: int = 1,
    done: Done | None = None,
    order: Sequence[int] | None = None,
) -> list[list[VerifyRow]]:
    """Each unit's rows, in the order of ``todo``; ``jobs`` > 1 runs them in that many worker processes.

    Workers are started with ``spawn``: the parent may hold threads (a progress display, a harness
    run) and the harness uses greenlets, so a forked child could inherit a lock held mid-operation.
    ``order`` is the order to start them in (longest first, when known); the result keeps ``todo``'s.
    An exception in a unit is raised here, as a serial run would.
    """
    start_order = list(order) if order is not None else list(range(len(todo)))
    if sorted(start_order) != list(range(len(todo))):
        raise ValueError(f"the start order must name each unit once (0..{len(todo) - 1}), not {start_order}")
    results: list[list[VerifyRow] | None] = [None] * len(todo)
    if jobs <= 1 or len(todo) <= 1:
        for i in start_order:
            rows, seconds = _timed(todo[i], quick)
            results[i] = rows
            if done is not None:
                done(i, rows, seconds)
    else:
        import multiprocessing
        from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=context) as pool:
            pending: dict[Future[tuple[list[VerifyRow], float]], int] = {
                pool.submit(_timed, todo[i], quick): i for i in start_order
            }
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        i = pending.pop(future)
                        rows, seconds = future.result()
                        results[i] = rows
                        if done is not None:
                            done(i, rows, seconds)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    return [r if r is not None else [] for r in results]
