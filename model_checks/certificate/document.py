"""The certificate file: what `lanecheck verify --certificate FILE` writes and `certificate check` reads.

One JSON object (``SCHEMA``): the run's command, tool versions and machine, a table of file
hashes, and one entry per unit of the verify plan (``model_checks.verify.Unit``) with the files it
depends on (``deps``), its configuration, when and where it was computed, and its rows, each with
its verdict and the counts its figures report. Reading it checks the format, the version and the
schema, and names the first problem (``ValueError``).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path
from typing import Any

from model_checks.certificate.deps import Dependencies
from model_checks.verify import Unit, VerifyRow, mutant_of, split_of

FORMAT = "lanecheck-verify-certificate"
VERSION = 1
MAX_BYTES = 64 * 1024 * 1024
# "12,508 states": the counts a row's figures report, kept as numbers for a reader.
COUNT = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+) (states|transitions|executions|traces|events|steps|schedules)\b"
)

_ROW = {
    "type": "object",
    "required": ["area", "subject", "expected", "actual", "ok", "figures", "seconds", "counts"],
    "properties": {
        **{name: {"type": "string"} for name in ("area", "subject", "expected", "actual", "figures")},
        "ok": {"type": "boolean"},
        "seconds": {"type": "number", "minimum": 0},
        "counts": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
    },
}
_SHA = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
_UNIT = {
    "type": "object",
    "required": [
        "key",
        "area",
        "covers",
        "kind",
        "target",
        "part",
        "digest",
        "complete",
        "files",
        "configuration",
        "computed",
        "tools",
        "machine",
        "seconds",
        "rows",
    ],
    "properties": {
        **{name: {"type": "string"} for name in ("key", "area", "covers", "kind", "target", "computed")},
        "part": {"type": ["string", "null"]},
        "digest": _SHA,
        "complete": {"type": "boolean"},
        "files": {"type": "array", "items": {"type": "string"}},
        "configuration": {"type": "object"},
        "tools": {"type": "object"},
        "machine": {"type": "object"},
        "seconds": {"type": "number", "minimum": 0},
        "rows": {"type": "array", "items": _ROW},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["format", "version", "created", "command", "tools", "machine", "files", "units"],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"const": VERSION},
        "created": {"type": "string"},
        "command": {
            "type": "object",
            "required": ["quick", "areas", "designs"],
            "properties": {
                "quick": {"type": "boolean"},
                "areas": {"type": ["array", "null"], "items": {"type": "string"}},
                "designs": {"type": ["array", "null"], "items": {"type": "string"}},
            },
        },
        "tools": {"type": "object"},
        "machine": {"type": "object"},
        "files": {"type": "object", "additionalProperties": _SHA},
        "units": {"type": "array", "items": _UNIT},
    },
}


def now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def tools() -> dict[str, Any]:
    """What ran the checks: Python, lanecheck, its required libraries, the harness core."""
    from model_checks.harness import core

    needed = [
        re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0]
        for r in requires("lanecheck") or []
        if "extra ==" not in r
    ]
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "lanecheck": _version("lanecheck"),
        "libraries": {name: _version(name) for name in sorted(needed)},
        "harness_core": core.kind(),
    }


def machine() -> dict[str, Any]:
    return {"platform": platform.platform(), "machine": platform.machine(), "cpus": os.cpu_count()}


def _plain(text: str) -> str:
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)  # an object's address changes every run


def configuration(unit: Unit, quick: bool) -> dict[str, Any]:
    """What a reader needs beside the code: the configuration, mutants or scenario it checked."""
    from model_checks import registry

    info: dict[str, Any] = {"quick": quick}
    if unit.covers not in registry.designs():
        return info
    d = registry.design(unit.covers)
    name = d.quick if quick else d.standard
    info["configuration"] = name
    try:
        info["constants"] = _plain(repr(d.config(name)))
    except KeyError as missing:
        info["constants"] = str(missing)
    split = split_of(unit.target) if unit.kind == "per-design" else None
    if split == "mutants":
        # the whole step (part None) checks every mutant; a part, the spec row or one mutant
        chosen = list(d.mutants.values()) if unit.part is None else []
        if unit.part is not None and (mutant := mutant_of(unit.part)) is not None:
            chosen = [d.mutant(mutant)]
        info["mutants"] = [
            {"name": m.name, "configuration": m.config, "expect": m.expect, "length": m.length,
             "overrides": _plain(repr(m.overrides))}
            for m in chosen
        ]  # fmt: skip
    elif unit.part is not None:
        scenario = d.harness()[unit.part]
        options = scenario.search_options(quick)
        info["scenario"] = {
            "name": unit.part,
            "expect": scenario.expect,
            "options": _plain(repr(dict(options))),
        }
    return info


def digest(deps: Dependencies, config: dict[str, Any], tool_versions: dict[str, Any]) -> str:
    """One hash of everything a verdict is reused on: files, configuration, tool versions."""
    text = json.dumps({"files": deps.files, "configuration": config, "tools": tool_versions}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def row_entry(row: VerifyRow) -> dict[str, Any]:
    counts = {word: int(number.replace(",", "")) for number, word in COUNT.findall(row.figures)}
    entry = row.as_json()
    entry.pop("reused_from", None)
    return {**entry, "counts": counts}


def row_of(entry: dict[str, Any], reused_from: str | None = None) -> VerifyRow:
    return VerifyRow(
        entry["area"], entry["subject"], entry["expected"], entry["actual"], entry["figures"],
        float(entry["seconds"]), reused_from,
    )  # fmt: skip


@dataclass
class UnitRecord:
    """A unit as a certificate holds it (``entry``: its JSON object)."""

    entry: dict[str, Any]

    @property
    def key(self) -> str:
        return str(self.entry["key"])

    def unit(self) -> Unit:
        e = self.entry
        return Unit(e["area"], e["covers"], e["kind"], e["target"], e["part"])

    def rows(self, reused: bool = False) -> list[VerifyRow]:
        return [row_of(r, self.entry["computed"] if reused else None) for r in self.entry["rows"]]


def unit_entry(
    unit: Unit, deps: Dependencies, config: dict[str, Any], tool_versions: dict[str, Any],
    rows: Sequence[VerifyRow], seconds: float, computed: str, where: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    return {
        "key": unit.key, "area": unit.area, "covers": unit.covers, "kind": unit.kind, "target": unit.target,
        "part": unit.part, "digest": digest(deps, config, tool_versions), "complete": deps.complete,
        "problems": deps.problems, "files": sorted(deps.files), "configuration": config, "computed": computed,
        "tools": tool_versions, "machine": where, "seconds": round(seconds, 3),
        "rows": [row_entry(r) for r in rows],
    }  # fmt: skip


def document(
    command: dict[str, Any],
    units: Sequence[dict[str, Any]],
    files: dict[str, str],
    tool_versions: dict[str, Any],
) -> dict[str, Any]:
    return {
        "format": FORMAT, "version": VERSION, "created": now(), "command": command, "tools": tool_versions,
        "machine": machine(), "files": dict(sorted(files.items())), "units": list(units),
    }  # fmt: skip


def write(path: Path, doc: dict[str, Any]) -> None:
    """Writes ``doc`` whole or not at all (a temporary file renamed over ``path``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(doc, out, indent=1)
            out.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the certificate from its reviewers
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def parse(text: str) -> dict[str, Any]:
    """A certificate's JSON object, checked; ``ValueError`` naming the first problem."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    try:
        doc = json.loads(text)
    except json.JSONDecodeError as problem:
        raise ValueError(f"not JSON: line {problem.lineno}, column {problem.colno}: {problem.msg}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f'not a certificate of `lanecheck verify` (no "format": "{FORMAT}")')
    if doc.get("version") != VERSION:
        shown = str(doc.get("version"))[:20]
        raise ValueError(f"certificate version {shown!r} is unknown (this lanecheck reads {VERSION})")
    error = best_match(Draft202012Validator(SCHEMA).iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        raise ValueError(f"at {where}: {error.message[:200]}")
    for i, unit in enumerate(doc["units"]):
        unknown = [f for f in unit["files"] if f not in doc["files"]]
        if unknown:
            raise ValueError(f"at units/{i}/files: {unknown[0]!r} has no hash in the files table")
    keys = [u["key"] for u in doc["units"]]
    twice = {k for k in keys if keys.count(k) > 1}
    if twice:
        raise ValueError(f"at units: the unit {sorted(twice)[0]!r} appears twice")
    return doc


def read(path: Path) -> dict[str, Any]:
    """The certificate at ``path``; ``ValueError`` naming the file and the problem."""
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise ValueError(f"{path}: {size:,} bytes, more than the {MAX_BYTES:,} a certificate can be")
    try:
        return parse(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as problem:
        raise ValueError(f"{path}: {problem}") from None
