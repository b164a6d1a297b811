"""``short_and_long_peaks`` measures only traces the validator allows: a trace it refuses fails the
measurement instead of giving a peak of a run that stopped early."""

from __future__ import annotations

from pathlib import Path

import pytest

from model_checks.designs.work_stealing.trace_bench import write_trace
from tests.helpers.trace_memory import short_and_long_peaks


def test_the_peaks_are_of_both_traces_written(tmp_path: Path) -> None:
    short, long = short_and_long_peaks(tmp_path, write_trace, 50, 500)
    assert short > 0 and long > 0
    assert (tmp_path / "short.jsonl").stat().st_size < (tmp_path / "long.jsonl").stat().st_size


def test_a_refused_trace_fails_the_measurement(tmp_path: Path) -> None:
    def write_refused(path: Path, events: int, seed: int) -> int:
        # a valid trace, then a line the validator refuses (an event with no worker)
        written = write_trace(path, events, seed)
        with path.open("a") as out:
            out.write('{"seq": 999999, "thread": "w0", "event": "run", "task": "nobody"}\n')
        return written

    with pytest.raises(AssertionError):
        short_and_long_peaks(tmp_path, write_refused, 50, 500)
