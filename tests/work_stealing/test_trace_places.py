"""The validator's task places: dict semantics, finished tasks kept as runs, flat memory."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from model_checks.designs.work_stealing.trace.places import Places, Runs
from model_checks.designs.work_stealing.trace.stop import DISCARDED, DONE, HELD, RUNNING
from model_checks.designs.work_stealing.trace_bench import write_trace
from tests.helpers.trace_memory import short_and_long_peaks


def test_runs_merge_and_answer_membership() -> None:
    runs = Runs()
    for n in (5, 7, 6, 1, 3, 2, 9):
        runs.add(n)
    assert (runs.starts, runs.ends) == ([1, 5, 9], [3, 7, 9])
    assert all(n in runs for n in (1, 2, 3, 5, 6, 7, 9))
    assert not any(n in runs for n in (0, 4, 8, 10))
    runs.add(4)
    runs.add(8)
    assert (runs.starts, runs.ends) == ([1], [9])


def test_places_answer_as_a_dict_would() -> None:
    rng = random.Random(7)
    names: list[str | int] = [f"t{i}" for i in range(60)] + list(range(40)) + ["t01", "x", "t-3", "7"]
    places = Places(finished=(DONE, DISCARDED))
    plain: dict[str | int, int] = {}
    for _ in range(3000):
        task = rng.choice(names)
        if task in plain and plain[task] in (DONE, DISCARDED):
            continue  # the model never moves a finished task: it refuses the trace first
        place = rng.choice((0, 1, HELD, RUNNING, DONE, DISCARDED))
        places[task], plain[task] = place, place
        probe = rng.choice(names)
        assert places.get(probe) == plain.get(probe)
        assert (probe in places) == (probe in plain)
    assert dict(places.items()) == {t: at for t, at in plain.items() if at not in (DONE, DISCARDED)} | {
        t: at
        for t, at in plain.items()
        if at in (DONE, DISCARDED) and t in ("t01", "x")  # names that are no prefix and number
    }
    # "t1" and 1 are different tasks, and so are "t01" and "t1"
    places2 = Places(finished=(DONE,))
    places2["t1"] = DONE
    assert places2.get(1) is None and places2.get("t01") is None and places2["t1"] == DONE
    with pytest.raises(KeyError):
        places2["t2"]


@pytest.mark.timeout(240)
def test_the_validators_memory_does_not_grow_with_the_trace(tmp_path: Path) -> None:
    short, long = short_and_long_peaks(tmp_path, write_trace, 5_000, 100_000)
    # before the runs, the long trace's peak was about 20 times the short one's
    assert long < 2 * short, (short, long)
