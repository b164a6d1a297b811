"""Benchmark of the work-stealing trace validator (``lanecheck bench work-stealing-trace``).

Writes a valid trace of about 1M events (``trace.generate``: a random sequential
schedule of the model, 4 workers, fork/join, steals, parking, a drain stop) to a
temporary file and measures events/s of the validator reading it the way
`lanecheck validate` does (streamed lines, the header, ``FORMAT.validate``), and peak
traced memory on a shorter trace. The goal is 50,000 events/s on the 1M-event trace.
Also ``python -m model_checks.designs.work_stealing.trace_bench [--quick]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from model_checks.conformance.reader import parse_line, stream_lines
from model_checks.conformance.verdict import Verdict
from model_checks.designs.work_stealing.trace import FORMAT
from model_checks.designs.work_stealing.trace.generate import write

GOAL = 50_000  # events/s on a 1M-event trace (issue 17)


def validate_path(path: Path) -> Verdict:
    """The verdict on the trace at ``path``, read as `lanecheck validate` reads it."""
    with open(path, "rb") as stream:
        lines = stream_lines(stream)
        header = parse_line(next(lines), 1)
        return FORMAT.validate(header, lines, engine="fast", complete=False)


def _timed(path: Path) -> tuple[Verdict, float, float]:
    """The verdict, wall seconds and CPU seconds (other load on a shared machine inflates the wall)."""
    started, cpu = time.perf_counter(), time.process_time()
    verdict = validate_path(path)
    return verdict, time.perf_counter() - started, time.process_time() - cpu


def bench(quick: bool = False) -> dict[str, Any]:
    n = 100_000 if quick else 1_000_000
    with tempfile.TemporaryDirectory(prefix="lanecheck-ws-trace-") as tmp:
        path = Path(tmp) / "trace.jsonl"
        started = time.perf_counter()
        lines = write(path, n, seed=1)
        generated = time.perf_counter() - started
        verdict, seconds, cpu = _timed(path)
        if not verdict.allowed:  # the generator's traces are valid by construction
            raise RuntimeError(f"the generated trace was refused: {verdict.message}")
        small = Path(tmp) / "small.jsonl"
        write(small, 20_000, seed=2)
        tracemalloc.start()
        validate_path(small)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    rate = verdict.events / seconds
    return {
        "events": verdict.events,
        "lines": lines,
        "seconds": round(seconds, 3),
        "events_per_s": round(rate),
        "cpu_seconds": round(cpu, 3),
        "events_per_cpu_s": round(verdict.events / cpu),
        "goal_events_per_s": GOAL,
        "meets_goal": rate >= GOAL,
        "generate_seconds": round(generated, 3),
        "peak_traced_kib_20k_events": round(peak / 1024),
        "verdict": verdict.message,
    }


if __name__ == "__main__":
    print(json.dumps(bench(quick="--quick" in sys.argv[1:]), indent=2))
