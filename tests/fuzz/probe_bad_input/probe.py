"""Build every case of the probe, run each in its sandbox, print the rows and the count per class."""

from __future__ import annotations

import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from tests.fuzz.probe_bad_input.akka_cases import akka_cases
from tests.fuzz.probe_bad_input.cli_cases import cli_cases
from tests.fuzz.probe_bad_input.gate_cases import gate_cases
from tests.fuzz.probe_bad_input.sandbox import BAD, GOOD, Case, run_case
from tests.fuzz.probe_bad_input.trace_cases import trace_cases
from tests.fuzz.probe_bad_input.work_lane_accounting import work_lane_accounting_cases
from tests.fuzz.probe_bad_input.work_lane_arguments import work_lane_argument_cases


def all_cases(root: Path) -> list[Case]:
    return [
        *work_lane_argument_cases(),
        *work_lane_accounting_cases(),
        *gate_cases(),
        *akka_cases(),
        *cli_cases(root / "cli"),
        *trace_cases(root / "traces"),
    ]


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    only = argv[argv.index("-k") + 1] if "-k" in argv else None
    os.environ.setdefault("COLUMNS", "200")
    with tempfile.TemporaryDirectory(prefix="lanecheck-probe-") as tmp:
        root = Path(tmp)
        (root / "cli").mkdir()
        (root / "traces").mkdir()
        # imports happen once, here, so each forked case starts warm
        import model_checks.cli  # noqa: F401

        cases = [c for c in all_cases(root) if only is None or only in c[0]]
        counts: Counter[str] = Counter()
        started = time.monotonic()
        for name, fn in cases:
            cls, detail = run_case(fn)
            counts[cls] += 1
            if verbose or cls not in GOOD:
                print(f"{cls:15} {name[:90]:90} {detail[:160]}", flush=True)
        for path in root.rglob("*"):  # the read-only folder must be removable
            if path.is_dir():
                path.chmod(0o700)
    print(f"\n{len(cases)} inputs in {time.monotonic() - started:.0f} s")
    for cls in (*GOOD, *BAD):
        print(f"  {cls:15} {counts[cls]}")
    return 1 if any(counts[c] for c in BAD) else 0
