"""What a design offers `lanecheck bench validate`: a way to write long traces of its own format.

A design takes part with ``TRACE_BENCH = TraceBench(...)`` in one of the modules
of its ``Design.benches``; the bench writes a long and a short trace with it and
measures the validator on them (``figures``). A design's own validator bench
(`lanecheck bench <design>-trace`) measures one against a goal (``goal_figures``).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_checks.bench.workload import offered
from model_checks.conformance import validate_file
from reference.tracing import RecordingTracer


@dataclass(frozen=True)
class TraceBench:
    """How to write a trace of a design for the validator's bench."""

    # (path, size, seed) -> the number of events written; ``size`` is in the writer's own unit
    # (events, posts per producer, ...) and a bigger size writes a longer trace.
    write: Callable[[Path, int, int], int]
    sizes: tuple[int, int]  # (long, short) of a full run
    quick_sizes: tuple[int, int]  # (long, short) of `--quick`
    # Judge the traces as finished runs: for a design whose traces have no end event of their own.
    complete: bool = False
    # (long, short) and their `--quick` pair for the generic engine (``--engine spec``) of a design
    # with an engine of its own, where the generic one is far slower (default: ``sizes``).
    generic_sizes: tuple[int, int] | None = None
    generic_quick_sizes: tuple[int, int] | None = None

    @classmethod
    def own_engine(
        cls,
        write: Callable[[Path, int, int], int],
        *,
        sizes: tuple[int, int] = (1_000_000, 20_000),
        quick_sizes: tuple[int, int] = (100_000, 20_000),
        generic_sizes: tuple[int, int] = (200_000, 20_000),
        generic_quick_sizes: tuple[int, int] = (20_000, 2_000),
    ) -> TraceBench:
        """The bench of a design with an engine of its own (``fast``) beside the generic one: its
        own engine measured on a million events (the goal such a design states: events/s on a
        1M-event trace), the generic engine, far slower, on a fifth of that. The sizes a design
        names instead are its own."""
        return cls(
            write,
            sizes=sizes,
            quick_sizes=quick_sizes,
            generic_sizes=generic_sizes,
            generic_quick_sizes=generic_quick_sizes,
        )


def trace_benches() -> dict[str, TraceBench]:
    """Every design's trace bench, by design name (registry order)."""
    return offered("TRACE_BENCH")


def recorded(tracer: RecordingTracer, what: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What ``tracer`` recorded of one run: ``(config, events)``; ``RuntimeError`` if ``what`` (the
    traced object) began no trace."""
    if tracer.config is None:
        raise RuntimeError(f"the {what} began no trace")
    return tracer.config, tracer.events()


def dump(path: Path, header: Mapping[str, object], events: Iterable[Mapping[str, object]]) -> int:
    """Write a header and its events as a JSON Lines trace; the number of events."""
    encode = json.JSONEncoder(separators=(",", ":")).encode  # one encoder: a trace may be 1M lines
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps(header) + "\n")
        for event in events:
            out.write(encode(event) + "\n")
            count += 1
    return count


def timed(path: Path, *, complete: bool = False, engine: str = "fast") -> float:
    """Seconds ``validate_file`` takes on a trace that must validate."""
    started = time.perf_counter()
    verdict = validate_file(path, engine, complete=complete)
    seconds = time.perf_counter() - started
    if verdict.code != 0:
        raise AssertionError(f"{path.name}: a bench trace did not validate: {verdict.message}")
    return seconds


def peak_memory(path: Path, *, complete: bool = False, engine: str = "fast") -> int:
    """Peak traced memory (bytes) of validating a trace that must validate."""
    tracemalloc.start()
    try:
        verdict = validate_file(path, engine, complete=complete)
        if verdict.code != 0:
            raise AssertionError(f"{path.name}: a bench trace did not validate: {verdict.message}")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def figures(
    bench: TraceBench, directory: Path, long: int, short: int, *, engine: str = "fast"
) -> dict[str, Any]:
    """Events/s on the long trace, and peak traced memory at both lengths (to show it does not grow),
    judged by ``engine`` (`lanecheck validate --engine`)."""
    long_path, short_path = directory / "long.jsonl", directory / "short.jsonl"
    events = bench.write(long_path, long, 0)
    short_events = bench.write(short_path, short, 1)
    seconds = timed(long_path, complete=bench.complete, engine=engine)
    memory_short = peak_memory(short_path, complete=bench.complete, engine=engine)
    memory_long = peak_memory(long_path, complete=bench.complete, engine=engine)
    return {
        "events": events,
        "trace_bytes": os.path.getsize(long_path),
        "seconds": round(seconds, 3),
        "events_per_second": round(events / seconds),
        "peak_memory_bytes": {f"{short_events}_events": memory_short, f"{events}_events": memory_long},
        "memory_ratio_long_over_short": round(memory_long / memory_short, 3),
    }


def goal_figures(bench: TraceBench, goal: int, *, quick: bool = False) -> dict[str, Any]:
    """A design's validator against ``goal`` (events/s): the long trace (seed 1) judged the way
    `lanecheck validate` judges it, and peak traced memory on the short one (seed 2).

    Events/s are given per wall second and per CPU second: other load on a shared machine
    inflates the wall. The trace must be allowed and complete (``RuntimeError`` otherwise)."""
    long, short = bench.quick_sizes if quick else bench.sizes
    with tempfile.TemporaryDirectory(prefix="lanecheck-trace-") as tmp:
        path = Path(tmp) / "trace.jsonl"
        started = time.perf_counter()
        written = bench.write(path, long, 1)
        generated = time.perf_counter() - started
        started, cpu_started = time.perf_counter(), time.process_time()
        verdict = validate_file(path, complete=bench.complete)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        if not verdict.allowed or verdict.prefix:  # the writers' traces are complete and valid
            raise RuntimeError(f"the generated trace was refused: {verdict.message}")
        small = Path(tmp) / "small.jsonl"
        short_events = bench.write(small, short, 2)  # ``short`` is in the writer's unit, not events
        peak = peak_memory(small, complete=bench.complete)
    rate = verdict.events / seconds
    return {
        "events": verdict.events,
        "lines": written + 1,  # the header too
        "seconds": round(seconds, 3),
        "events_per_s": round(rate),
        "cpu_seconds": round(cpu, 3),
        "events_per_cpu_s": round(verdict.events / cpu),
        "goal_events_per_s": goal,
        "meets_goal": rate >= goal,
        "generate_seconds": round(generated, 3),
        "short_trace_events": short_events,
        "peak_traced_kib_short_trace": round(peak / 1024),
        "verdict": verdict.message,
    }


__all__ = ["TraceBench", "dump", "figures", "goal_figures", "peak_memory", "timed", "trace_benches"]
