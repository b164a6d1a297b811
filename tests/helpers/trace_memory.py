"""Peak traced memory of validating trace files: how the validators' flat memory is tested."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

from model_checks.conformance import validate_file


def validation_peaks(*paths: Path) -> list[int]:
    """Peak traced bytes while each file is validated (each must be allowed), after a warm-up run
    on the first, so imports and caches stay out of the measurement."""
    validate_file(paths[0])
    peaks = []
    for path in paths:
        tracemalloc.start()
        try:
            assert validate_file(path).code == 0, path
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    return peaks


def short_and_long_peaks(
    folder: Path, write_trace: Callable[[Path, int, int], object], short: int, long: int
) -> tuple[int, int]:
    """The validation peaks of two traces ``write_trace`` writes into ``folder``, of ``short``
    and ``long`` events (one seed): flat memory is the long one's peak close to the short one's."""
    paths = folder / "short.jsonl", folder / "long.jsonl"
    for path, events in zip(paths, (short, long), strict=True):
        write_trace(path, events, 1)
    short_peak, long_peak = validation_peaks(*paths)
    return short_peak, long_peak
