"""Benchmark of the trace validators (``python -m model_checks.bench.validate [--quick]``).

Every design that offers a trace bench (``TRACE_BENCH``, ``bench.traces``)
writes a long and a short trace of its own format; the bench measures events/s
of ``validate_file`` on the long one and peak traced memory at both lengths, to
show that memory does not grow with the trace.

A design with an engine of its own (the Work Lane's, work stealing's, the event
pool's fast engines) reports at the top level (the first) or under its name, as
it always did. Under ``generic_engine``, by design name, every design's generic
engine, the streaming search of its spec (``conformance/search.py``): the
designs it is the only engine of, and the others' ``--engine spec``, on traces
of their ``generic_sizes`` where it is far slower than their own engine.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model_checks.bench.traces import TraceBench, figures, trace_benches
from model_checks.conformance.designs import cross_check_format, design_format
from model_checks.conformance.streamed import DesignFormat


def _key(design: str) -> str:
    return design.replace("-", "_")


def _searched(name: str) -> bool:
    """Judged by the generic streaming search (not by an engine of the design's own)."""
    return isinstance(design_format(name), DesignFormat)


def _has_generic(name: str) -> bool:
    """The design has a generic engine: its only one, or its ``--engine spec`` (a cross-check)."""
    return _searched(name) or cross_check_format(name) is not None


def _figures(
    bench: TraceBench, quick: bool, sizes: tuple[int, int] | None, *, engine: str = "fast"
) -> dict[str, Any]:
    long, short = sizes or (bench.quick_sizes if quick else bench.sizes)
    with tempfile.TemporaryDirectory() as tmp:
        return figures(bench, Path(tmp), long, short, engine=engine)


def _generic_sizes(bench: TraceBench, quick: bool) -> tuple[int, int] | None:
    return bench.generic_quick_sizes if quick else bench.generic_sizes


def bench(
    quick: bool = False,
    *,
    sizes: tuple[int, int] | None = None,
    generic_sizes: Sequence[int] | None = None,
) -> dict[str, object]:
    """Every design's figures. ``sizes``: (long, short) of the designs with an engine of their own;
    ``generic_sizes``: the long size of each design's generic engine in registry order (short: a
    tenth)."""
    benches = trace_benches()
    own = [name for name in benches if not _searched(name)]
    out: dict[str, object] = {"generic_engine": bench_generic(quick, sizes=generic_sizes)}
    for n, name in enumerate(own):
        found = _figures(benches[name], quick, sizes)
        if n == 0:
            out.update(found)
        else:
            out[_key(name)] = found
    return out


def bench_generic(quick: bool = False, *, sizes: Sequence[int] | None = None) -> dict[str, object]:
    """The generic (streaming spec search) engine on each design's traces.

    ``sizes``: the long trace's size of each design with a generic engine, in
    registry order (the short one is a tenth of it).
    """
    out: dict[str, object] = {}
    generic = [(name, b) for name, b in trace_benches().items() if _has_generic(name)]
    for n, (name, trace_bench) in enumerate(generic):
        given = (sizes[n], max(1, sizes[n] // 10)) if sizes is not None and n < len(sizes) else None
        if _searched(name):
            out[_key(name)] = _figures(trace_bench, quick, given)
        else:
            given = given or _generic_sizes(trace_bench, quick)
            out[_key(name)] = _figures(trace_bench, quick, given, engine="spec")
    return out


def write_trace(path: Path, n: int, seed: int = 0, design: str | None = None) -> int:
    """Write a bench trace of ``design`` (default: the first design with a trace bench) of size
    ``n`` (in its writer's unit); the number of events written."""
    benches = trace_benches()
    if not benches:
        raise LookupError("no registered design offers a trace bench (TRACE_BENCH)")
    name = design if design is not None else next(iter(benches))
    if name not in benches:
        raise LookupError(f"design {name!r} has no trace bench; designs with one: {', '.join(benches)}")
    return benches[name].write(path, n, seed)


if __name__ == "__main__":
    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
