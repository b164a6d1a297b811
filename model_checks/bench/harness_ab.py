"""Patch mode's harness cost, for comparing two trees: ``_ours_plain(2)`` (two locked deposits on
plain ``threading``, 151 executions a check) run in this process, whichever tree ``PYTHONPATH``
selects.

``python -m model_checks.bench.harness_ab LABEL``: one warm-up check, then 15, each timed on
``time.process_time`` (CPU seconds: less moved by other processes than the wall clock, not
unmoved: caches and frequency are shared); prints executions per CPU second (best, median) and
the load average, as one JSON line. Alternate the two trees' runs in the same minutes
(``PYTHONPATH=<tree> python -m ...``; a tree without this module: ``PYTHONPATH=<tree> python
<this file> LABEL``) and record the load: the machine is shared.

``python -m model_checks.bench.harness_ab --callgrind LABEL``: instructions per execution, the
load-independent figure: the same program under ``valgrind --tool=callgrind`` with ``LARGE`` and
``SMALL`` checks after the warm-up, the difference of the two totals divided by the difference of
the executions (the start-up and the warm-up cancel out). Slow (minutes): valgrind runs Python
about 50 times slower.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHECKS = 15
SMALL, LARGE = 2, 8  # the callgrind runs' checks after the warm-up


def _load() -> list[float]:
    loadavg = Path("/proc/loadavg")
    return [float(x) for x in loadavg.read_text().split()[:3]] if loadavg.exists() else []


def _tree() -> str:
    """The tree whose harness runs (``PYTHONPATH``'s, also when this file is run from another)."""
    import model_checks

    return str(Path(model_checks.__file__).resolve().parents[1])


def rates(checks: int = CHECKS) -> dict[str, Any]:
    """Executions per CPU second of ``checks`` checks after a warm-up one: best and median."""
    from model_checks.bench.harness import _ours_plain

    _ours_plain(2)
    load = _load()
    per_s: list[float] = []
    for _ in range(checks):
        began = time.process_time()
        executions = _ours_plain(2)["executions"]
        per_s.append(executions / (time.process_time() - began))
    return {
        "tree": _tree(),
        "checks": checks,
        "best": round(max(per_s)),
        "median": round(statistics.median(per_s)),
        "load_before": load,
        "load_after": _load(),
    }


def _executions(checks: int) -> int:
    """Run the warm-up and ``checks`` checks (the process valgrind measures); their executions."""
    from model_checks.bench.harness import _ours_plain

    _ours_plain(2)
    return sum(_ours_plain(2)["executions"] for _ in range(checks))


def instructions(small: int = SMALL, large: int = LARGE) -> dict[str, Any]:
    """Instructions per execution under callgrind: (``large`` checks − ``small``) / executions."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return {"error": "valgrind is not installed"}
    totals: list[tuple[int, int]] = []
    with tempfile.TemporaryDirectory() as folder:
        for checks in (small, large):
            out = os.path.join(folder, f"callgrind.{checks}")
            command = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}"]
            command += [sys.executable, "-m", "model_checks.bench.harness_ab"]
            command += ["--run", str(checks)]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            found = re.search(r"Collected : (\d+)", done.stderr)
            if done.returncode != 0 or found is None:
                return {"error": f"callgrind run failed ({done.returncode}): {done.stderr[-300:]}"}
            totals.append((int(found.group(1)), int(done.stdout.split()[-1])))
    (ir_small, ex_small), (ir_large, ex_large) = totals
    return {
        "tree": _tree(),
        "instructions_per_execution": round((ir_large - ir_small) / (ex_large - ex_small)),
        "executions": ex_large - ex_small,
        "load": _load(),
    }


def bench(quick: bool = False) -> dict[str, Any]:
    """``lanecheck bench harness-ab``: the CPU-second rates (callgrind only from the command line;
    no tree path, which a document's block would keep)."""
    figures = rates(5 if quick else CHECKS)
    del figures["tree"]
    return figures


def main(argv: list[str]) -> None:
    if argv[:1] == ["--run"]:  # (the process callgrind measures)
        print(_executions(int(argv[1])))
        return
    if argv[:1] == ["--callgrind"]:
        figures = {"label": argv[1] if len(argv) > 1 else "", **instructions()}
    else:
        figures = {"label": argv[0] if argv else "", **rates()}
    print(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv[1:])
