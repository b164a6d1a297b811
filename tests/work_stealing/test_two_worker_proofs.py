"""The two-worker fork/joins proved by state-hash pruning (a soak: minutes each, outside the suite).

DPOR cannot finish ``pool/fork-join-2w`` or ``global/fork-join-2w`` in a CI budget (their rows
in `lanecheck verify` sample them with PCT and say "bounded"; docs/work-stealing.md). The
state-caching search (``check_states``, `lanecheck explore NAME --strategy states`) explores every
reachable abstract state instead of every Mazurkiewicz trace, and ends: these tests hold that
proof to its recorded size, so a change to the pool or the harness that grows the space, or that
makes a state unfingerprintable (a hole the search would fill with plain DFS), is seen here.

Run with ``pytest -m soak tests/work_stealing/test_two_worker_proofs.py``. With sleep sets (the
state search's default since session 16, which also stores only points with a choice): 109 and 32
CPU seconds (``pool`` / ``global``, idle machine); without them, 11-13 minutes wall each at load
3-8 (255,583 and 116,520 states, every point stored).
"""

from __future__ import annotations

import re

import pytest

from model_checks.designs.work_stealing.harness import POOLS_2W, program
from model_checks.harness.design_rows import quiet_reference
from model_checks.harness.stateful import check_states

# Abstract states stored by each proof (races off: the race detector runs on the one-worker
# scenarios), with sleep sets, by the compiled core: the same in processes with different hash
# seeds (the pure-Python core stores a few less or more: 26,084 for the global pool at f24fa2e).
# Re-pinned in session 35 from 61,646 and 26,139: ebc7582 (2026-12-04) made the pool's worker
# loop and its join one loop, fewer states of the program under test (found by bisecting the
# global pool's count; the proofs stay exhaustive, every point fingerprinted).
PROVED_STATES = {"pool/fork-join-2w": 61_049, "global/fork-join-2w": 25_015}


def _states(notes: list[str]) -> tuple[int, int]:
    """(abstract states, scheduling points not fingerprinted) from the search's note."""
    for note in notes:
        found = re.search(r"(\d+) abstract states, .*?(\d+) scheduling points not fingerprinted", note)
        if found:
            return int(found.group(1)), int(found.group(2))
    raise AssertionError(f"no state-pruning note in {notes}")


def test_every_two_worker_fork_join_has_a_recorded_proof() -> None:
    assert set(PROVED_STATES) == set(POOLS_2W)


@pytest.mark.soak
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("name", sorted(PROVED_STATES))
def test_two_worker_fork_join_is_exhaustive_over_states(name: str) -> None:
    with quiet_reference():
        result = check_states(program(name), races=False, time_limit=3000)
    assert result.failure is None, result.failure
    assert result.verdict == "exhaustive", result.figures()
    states, unhashed = _states(result.notes)
    assert unhashed == 0  # every point fingerprinted: the proof is over states, not plain DFS
    assert states == PROVED_STATES[name]
