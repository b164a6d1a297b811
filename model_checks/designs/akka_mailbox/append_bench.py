"""The Akka validator with and without ``append`` events on the same interleavings.

    python -m model_checks.designs.akka_mailbox.append_bench [--sends 1000] [--seeds 10] [--cap 60]

For each seed, ``bench.akka_scheduled(sends, seed)`` (one fixed schedule of the real reference)
is judged complete twice: as written (``config.logs_append``) and with its appends dropped
(``trace.without_append_events``, the format before them). Each judgement is timed with
``time.process_time`` and stopped after ``cap`` CPU seconds (its figure then covers the events
done, and its verdict says ``capped``). Prints one JSON line per seed, then min/median/max of the
events per CPU second of each format (docs/akka-mailbox.md, *The validator*).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterable, Mapping
from typing import Any

from model_checks.conformance.verdict import Rejected
from model_checks.designs.akka_mailbox.bench import akka_scheduled
from model_checks.designs.akka_mailbox.trace import AkkaChecker, without_append_events

FORMATS = ("with", "without")


def judge(config: Mapping[str, Any], events: list[dict[str, Any]], cap: float) -> dict[str, Any]:
    """One complete judgement of ``events``, at most ``cap`` CPU seconds: its figures and verdict."""
    checker = AkkaChecker(config)
    started = time.process_time()
    done = 0
    verdict = "accepted"
    try:
        for ev in events:
            checker.step(dict(ev))
            done += 1
            # process_time costs a system call: read it every 50 events
            if done % 50 == 0 and time.process_time() - started > cap:
                verdict = "capped"
                break
        else:
            checker.finish(True)
    except Rejected as rejected:
        verdict = f"rejected: {rejected.message}"
    cpu = time.process_time() - started
    return {
        "events": len(events),
        "done": done,
        "cpu_s": round(cpu, 3),
        "events_per_cpu_s": round(done / cpu, 1) if cpu > 0 else None,
        "peak_states": checker.search.peak,
        "verdict": verdict,
    }


def measure(sends: int, seeds: Iterable[int], cap: float) -> list[dict[str, Any]]:
    rows = []
    for seed in seeds:
        config, events = akka_scheduled(sends, seed)
        bare_config, bare = without_append_events(config, events)
        row = {"seed": seed, "with": judge(config, events, cap), "without": judge(bare_config, bare, cap)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per format: min, median and max events per CPU second over the seeds."""
    out = {}
    for name in FORMATS:
        rates = [r[name]["events_per_cpu_s"] for r in rows if r[name]["events_per_cpu_s"] is not None]
        out[name] = {"min": min(rates), "median": statistics.median(rates), "max": max(rates)}
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sends", type=int, default=1_000, help="sends per producer")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0 .. N-1")
    parser.add_argument("--cap", type=float, default=60.0, help="CPU seconds per judgement at most")
    args = parser.parse_args(argv)
    print(json.dumps(summary(measure(args.sends, range(args.seeds), args.cap))))


if __name__ == "__main__":
    main()
