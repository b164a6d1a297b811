"""Peak traced memory of validating trace files: how the validators' flat memory is tested."""

from __future__ import annotations

import tracemalloc
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
