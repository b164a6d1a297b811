"""What each unit of a full `lanecheck verify` typically costs, in CPU seconds: the order to start them in.

`lanecheck verify --jobs N` hands its units to N workers in a start order, each unit to the first
worker free; started in plan order, the longest units (a design's own providers come last in the
plan) start late and one worker finishes alone. Started longest first, the workers end together
(``model_checks.verify.longest_first``, ``makespan``). On a clean start no certificate holds the
previous run's times, so they come from the table ``verify_costs.json`` beside this module
(``{"source": <how it was measured>, "costs": {<unit key>: <CPU seconds>}}``); a unit missing
from it (a new design, a renamed scenario) starts first, as if long. The table only orders the
units: rows and verdicts never depend on it, and it lies outside every unit's dependencies (beside
a command module), so refreshing it re-runs nothing that a certificate holds.

Refresh it from a full run (the ``timing.units`` of ``--json``)::

    lanecheck verify --json > run.json; python -m model_checks.commands.verify_costs run.json
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

TABLE = Path(__file__).with_name("verify_costs.json")


def read_table(path: Path = TABLE) -> dict[str, float]:
    """The unit key -> CPU seconds of a table file (``ValueError`` naming what is wrong)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    costs = document.get("costs") if isinstance(document, dict) else None
    if not isinstance(costs, dict):
        raise ValueError(f'{path}: no "costs" object')
    out: dict[str, float] = {}
    for key, seconds in costs.items():
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds < 0:
            raise ValueError(f"{path}: {key}: {seconds!r} is not a number of seconds >= 0")
        out[key] = float(seconds)
    return out


def table_text(costs: Mapping[str, float], source: str) -> str:
    """The table file's text for ``costs`` (longest first, one unit a line, so a refresh diffs well)."""
    ordered = dict(sorted(costs.items(), key=lambda kv: -kv[1]))
    rounded = {key: round(seconds, 1) for key, seconds in ordered.items()}
    return json.dumps({"source": source, "costs": rounded}, indent=2) + "\n"


# Read once, at import: verify orders its units by it (``model_checks.commands.verify``). An
# installed copy without the file (not in the package data) starts every unit as if long: in plan
# order, which changes the wall time only.
COSTS: dict[str, float] = read_table() if TABLE.is_file() else {}


def costs_of(run: Mapping[str, object]) -> dict[str, float]:
    """The CPU seconds per unit of a `lanecheck verify --json` document (its ``timing.units``)."""
    timing = run.get("timing")
    units = timing.get("units") if isinstance(timing, dict) else None
    if not isinstance(units, list) or not units:
        raise ValueError("not the output of `lanecheck verify --json`: no timing.units")
    out: dict[str, float] = {}
    for u in units:
        if not isinstance(u, dict) or not isinstance(u.get("key"), str):
            raise ValueError(f"timing.units: an entry without a key: {u!r:.80}")
        cpu = u.get("cpu_seconds")
        if cpu is None:  # reused from a certificate: no cost measured in this run
            continue
        if not isinstance(cpu, int | float) or cpu < 0:
            raise ValueError(f"timing.units: {u['key']}: cpu_seconds {cpu!r} is not a number >= 0")
        out[u["key"]] = float(cpu)
    return out


def main(argv: list[str], table: Path = TABLE) -> int:
    """Rewrite ``table`` from the `lanecheck verify --json` document named by ``argv``."""
    if len(argv) != 1:
        sys.stderr.write("usage: python -m model_checks.commands.verify_costs RUN.json\n")
        return 2
    try:
        run = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
        costs = costs_of(run if isinstance(run, dict) else {})
    except (OSError, ValueError) as problem:
        sys.stderr.write(f"{argv[0]}: {problem}\n")
        return 2
    timing = run["timing"]
    source = f"{'quick' if timing.get('quick') else 'full'} configurations, measured {timing.get('date')}"
    staged = table.with_name(table.name + ".tmp")  # replaced whole: never a half-written table
    staged.write_text(table_text(costs, source), encoding="utf-8")
    staged.replace(table)
    sys.stdout.write(f"{len(costs)} units, {sum(costs.values()):.0f} CPU seconds\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
