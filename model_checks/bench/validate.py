"""Benchmark of the trace validators (``python -m model_checks.bench.validate [--quick]``).

Every design that offers a trace bench (``TRACE_BENCH``, ``bench.traces``)
writes a long and a short trace of its own format; the bench measures events/s
of ``validate_file`` on the long one and peak traced memory at both lengths, to
show that memory does not grow with the trace.

A design with an engine of its own (the contract's first design, the Work
Lane's fast engine) reports at the top level, as it always did; the designs
judged by the generic streaming search (``conformance/search.py``) report
under ``generic_engine``, by design name (``schedule_gate``, ...).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model_checks.bench.traces import TraceBench, figures, trace_benches
from model_checks.conformance.designs import design_format
from model_checks.conformance.streamed import DesignFormat


def _key(design: str) -> str:
    return design.replace("-", "_")


def _searched(name: str) -> bool:
    """Judged by the generic streaming search (not by an engine of the design's own)."""
    return isinstance(design_format(name), DesignFormat)


def _figures(bench: TraceBench, quick: bool, sizes: tuple[int, int] | None) -> dict[str, Any]:
    long, short = sizes or (bench.quick_sizes if quick else bench.sizes)
    with tempfile.TemporaryDirectory() as tmp:
        return figures(bench, Path(tmp), long, short)


def bench(
    quick: bool = False,
    *,
    sizes: tuple[int, int] | None = None,
    generic_sizes: Sequence[int] | None = None,
) -> dict[str, object]:
    """Every design's figures. ``sizes``: (long, short) of the design with its own engine;
    ``generic_sizes``: the long size of each searched design in registry order (short: a tenth)."""
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
    """The generic (streaming spec search) engine on each searched design's traces.

    ``sizes``: the long trace's size of each searched design, in registry order
    (the short one is a tenth of it).
    """
    out: dict[str, object] = {}
    searched = [(name, b) for name, b in trace_benches().items() if _searched(name)]
    for n, (name, trace_bench) in enumerate(searched):
        given = (sizes[n], max(1, sizes[n] // 10)) if sizes is not None and n < len(sizes) else None
        out[_key(name)] = _figures(trace_bench, quick, given)
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
