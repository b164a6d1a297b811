"""`lanecheck certificate check`: does the code still match a certificate, and do sampled verdicts hold?"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from model_checks.certificate import document
from model_checks.certificate.deps import Dependencies, current_hash, dependencies, forget
from model_checks.verify import run_units


@dataclass
class UnitFinding:
    key: str
    rows: int
    changed: list[str] = field(default_factory=list)  # what differs, one line each, the file named


def compare(doc: dict[str, Any]) -> list[UnitFinding]:
    """Each unit of the certificate against the code as it is now."""
    from model_checks import registry

    forget()
    findings = []
    found: dict[tuple[str, str], Dependencies] = {}  # the parts of one step share their code
    for entry in doc["units"]:
        record = document.UnitRecord(entry)
        finding = UnitFinding(record.key, len(entry["rows"]))
        for key in entry["files"]:
            now = current_hash(key)
            if now is None:
                finding.changed.append(f"{key}: no longer there")
            elif now != doc["files"][key]:
                finding.changed.append(
                    f"{key}: sha256 {now[:12]}..., the certificate has {doc['files'][key][:12]}..."
                )
        unit = record.unit()
        if unit.covers != "lanecheck" and unit.covers not in registry.designs():
            finding.changed.append(f"design {unit.covers!r} is no longer registered")
        elif not finding.changed:
            # the files it names are unchanged; a new dependency (an import added elsewhere) or a
            # changed configuration shows in the digest
            if (unit.covers, unit.target) not in found:
                found[unit.covers, unit.target] = dependencies(unit)
            deps = found[unit.covers, unit.target]
            added = sorted(set(deps.files) - set(entry["files"]))
            finding.changed += [f"{key}: a new dependency" for key in added]
            if not deps.complete or not entry["complete"]:
                finding.changed += [
                    f"dependencies unknown: {p}" for p in deps.problems or entry.get("problems", [])
                ]
                if not finding.changed:
                    finding.changed.append("dependencies unknown when the certificate was written")
            config = document.configuration(unit, bool(doc["command"]["quick"]))
            if not finding.changed and config != entry["configuration"]:
                finding.changed.append("its configuration differs")
            if not finding.changed and document.digest(deps, config, entry["tools"]) != entry["digest"]:
                finding.changed.append("its digest differs")
        findings.append(finding)
    return findings


def tool_differences(doc: dict[str, Any]) -> list[str]:
    """Where the tools running now differ from those of each unit (a note, not a failure)."""
    now = document.tools()
    notes = set()
    for entry in doc["units"]:
        for name, value in entry["tools"].items():
            if now.get(name) != value:
                notes.add(f"{name}: certificate {value}, now {now.get(name)}")
    return sorted(notes)


@dataclass(frozen=True)
class Rerun:
    subject: str
    recorded: str
    now: str | None  # None: the re-run unit did not give this row

    @property
    def same(self) -> bool:
        return self.recorded == self.now


def sample(doc: dict[str, Any], k: int, seed: int) -> list[tuple[int, int]]:
    """``k`` rows (unit index, row index) drawn with ``seed``."""
    every = [(u, r) for u, entry in enumerate(doc["units"]) for r in range(len(entry["rows"]))]
    return sorted(random.Random(seed).sample(every, min(k, len(every))))


def rerun(doc: dict[str, Any], picks: Sequence[tuple[int, int]], jobs: int = 1) -> list[Rerun]:
    """Runs again the units holding the sampled rows; each sampled row's verdict then and now."""
    unit_indexes = sorted({u for u, _ in picks})
    records = [document.UnitRecord(doc["units"][u]) for u in unit_indexes]
    results = run_units([r.unit() for r in records], bool(doc["command"]["quick"]), jobs)
    got = dict(zip(unit_indexes, results, strict=True))
    out = []
    for u, r in picks:
        row = doc["units"][u]["rows"][r]
        now = next((x.actual for x in got[u] if x.area == row["area"] and x.subject == row["subject"]), None)
        out.append(Rerun(row["subject"], row["actual"], now))
    return out
