"""`lanecheck verify` with a certificate: which units' verdicts are reused, the rest run, the file written.

A unit's verdicts are reused when the previous certificate holds a unit of the same key whose
``digest`` (its files' hashes, its configuration, the tool versions) equals the one computed now,
whose dependencies were all found, and whose rows all got their expected verdict (a row that did
not is worth running again). Reuse is per unit: the rows of one provider step cannot be computed
singly (``model_checks.verify``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_checks.certificate import document
from model_checks.certificate.deps import Dependencies, dependencies, forget
from model_checks.verify import Unit, VerifyRow, longest_first, run_units


@dataclass(frozen=True)
class Planned:
    unit: Unit
    deps: Dependencies
    config: dict[str, Any]
    digest: str


def prepare(todo: Sequence[Unit], quick: bool, tool_versions: dict[str, Any]) -> list[Planned]:
    forget()
    out = []
    # the parts of one step share their code: found once per (design, provider)
    found: dict[tuple[str, str], Dependencies] = {}
    for unit in todo:
        if (unit.covers, unit.target) not in found:
            found[unit.covers, unit.target] = dependencies(unit)
        deps = found[unit.covers, unit.target]
        config = document.configuration(unit, quick)
        out.append(Planned(unit, deps, config, document.digest(deps, config, tool_versions)))
    return out


def reusable(planned: Sequence[Planned], previous: dict[str, Any] | None) -> dict[int, document.UnitRecord]:
    """The units (by index in ``planned``) whose verdicts the previous certificate gives."""
    if previous is None:
        return {}
    by_key = {u["key"]: document.UnitRecord(u) for u in previous["units"]}
    found = {}
    for i, p in enumerate(planned):
        old = by_key.get(p.unit.key)
        if (
            old is not None
            and p.deps.complete
            and old.entry["complete"]
            and old.entry["digest"] == p.digest
            # the table the certificate shows a reader must say the same as the digest
            and {f: previous["files"][f] for f in old.entry["files"]} == p.deps.files
            and all(r["ok"] for r in old.entry["rows"])
        ):
            found[i] = old
    return found


Log = Callable[[str], None]


def verify(
    todo: Sequence[Unit],
    quick: bool,
    jobs: int,
    certificate: Path | None,
    fresh: bool,
    command: dict[str, Any],
    log: Log | None = None,
    costs: Mapping[str, float] | None = None,
) -> list[VerifyRow]:
    """The rows of ``todo`` in plan order: computed, or reused from ``certificate`` (then rewritten).
    Units start longest first by ``costs`` (unit key -> seconds), the previous certificate's
    times overriding them."""
    if certificate is None:
        return [row for rows in _computed(todo, quick, jobs, log, dict(costs or {}))[0] for row in rows]
    tool_versions = document.tools()
    planned = prepare(todo, quick, tool_versions)
    previous = document.read(certificate) if certificate.exists() and not fresh else None
    reused = reusable(planned, previous)
    if log is not None and previous is not None:
        log(f"certificate {certificate}: {len(reused)} of {len(planned)} units unchanged, reused")
    hint = dict(costs or {}) | (
        {u["key"]: float(u["seconds"]) for u in previous["units"]} if previous else {}
    )
    run_indexes = [i for i in range(len(planned)) if i not in reused]
    computed, seconds = _computed([planned[i].unit for i in run_indexes], quick, jobs, log, hint)
    stamp = document.now()
    where = document.machine()
    entries: list[dict[str, Any]] = []
    rows: list[VerifyRow] = []
    results = dict(zip(run_indexes, zip(computed, seconds, strict=True), strict=True))
    for i, p in enumerate(planned):
        if i in reused:
            entries.append(reused[i].entry)
            rows += reused[i].rows(reused=True)
        else:
            unit_rows, unit_seconds = results[i]
            entries.append(
                document.unit_entry(
                    p.unit, p.deps, p.config, tool_versions, unit_rows, unit_seconds, stamp, where
                )
            )
            rows += unit_rows
    files: dict[str, str] = {}
    for p in planned:
        files.update(p.deps.files)
    document.write(certificate, document.document(command, entries, files, tool_versions))
    return rows


def _computed(
    todo: Sequence[Unit], quick: bool, jobs: int, log: Log | None, hint: dict[str, float] | None
) -> tuple[list[list[VerifyRow]], list[float]]:
    """Each unit's rows and seconds; started longest first when a previous run's times are known."""
    seconds = [0.0] * len(todo)

    def done(i: int, rows: list[VerifyRow], took: float) -> None:
        seconds[i] = took
        if log is not None:
            log(f"{todo[i].label}: done in {took:.1f} s")

    order = longest_first(todo, hint) if hint else None
    results = run_units(todo, quick, jobs, done, order)
    return results, seconds
