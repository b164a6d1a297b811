"""The clocks in patch mode after session 40's eighth outside review (docs/harness.md, "The
clocks"): they start at the real clocks' readings when the check begins, so a time read at
import is in the past and a file's mtime is near the wall clock; ``clock_gettime`` reads them
too; and every execution of a check reads the same values. Unordered stamps of two threads may
still be equal (review 8's r074, a false alarm left open): kept so that their order is not fixed
(r072's bug)."""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path

import pytest

from model_checks.harness import Options, Result, check, patch_clock, patched
from tests.harness import review8_clock_programs as programs
from tests.harness.explore_runs import explore_command

pytestmark = pytest.mark.timeout(240)

PROGRAMS_FILE = Path(programs.__file__)


def _explore(name: str, **options: object) -> Result:
    """Explore the program ``name`` of a fresh import of its module: its times read at import
    are then as near the check's start as a program's (not the test session's start)."""
    program = getattr(importlib.reload(programs), name)
    with patched(programs):
        return check(lambda rt: program(), Options(time_limit=60, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("program", "verdict"),
    [
        # a bug on real times is found
        ("fresh_since_import_counts_without_the_lock", "failed"),
        ("clock_gettime_across_a_timed_wait", "failed"),
        ("clock_gettime_ns_across_a_joined_wait", "failed"),
        ("stamps_of_two_threads_in_start_order", "failed"),
        # a correct program on real times is proved
        ("elapsed_since_import", "exhaustive"),
        ("age_of_a_file_just_written", "exhaustive"),
        ("clock_gettime_agrees_with_monotonic", "exhaustive"),
        ("child_stamps_after_its_parent", "exhaustive"),
    ],
)
def test_a_program_on_real_times_has_its_verdict(program: str, verdict: str) -> None:
    result = _explore(program)
    assert result.verdict == verdict, result.report()


def test_a_deadline_set_at_import_is_met_without_virtual_timeouts() -> None:
    result = _explore("get_until_a_deadline_set_at_import", virtual_timeouts=False)
    assert result.verdict == "exhaustive", result.report()


def test_every_execution_of_a_check_reads_the_same_times_from_its_start() -> None:
    """The clocks start at the real ones' readings when the check begins (``patch_clock.origin``),
    once per check: every execution reads the same values, later than anything read before."""
    programs.READS.clear()
    before = (time.monotonic(), time.monotonic_ns(), time.time(), time.time_ns(), time.perf_counter())
    result = _explore("record_reads", strategy="dfs")
    after = (time.monotonic(), time.time())
    assert result.verdict == "exhaustive" and result.executions > 1, result.report()
    assert len(set(programs.READS)) == 1, programs.READS
    mono, mono_ns, wall, wall_ns, perf = programs.READS[0]
    assert all(b < r for b, r in zip(before, programs.READS[0], strict=True)), (before, programs.READS)
    assert mono < after[0] and wall < after[1] + 1, (programs.READS, after)  # 1 µs a read, no more
    origin = patch_clock.origin("monotonic")
    # each read 1 µs after the one before it, from the origins
    assert origin < mono_ns < origin + 1_000_000 and abs(mono_ns - mono * 1e9 - 1_000) < 10, (origin, mono)
    assert patch_clock.origin("time") < wall_ns < patch_clock.origin("time") + 1_000_000
    since = perf - patch_clock.origin("perf_counter") / 1e9 - (mono - origin / 1e9)
    assert abs(since - 4e-6) < 1e-8, since
    first = programs.READS[0]
    programs.READS.clear()
    _explore("record_reads", strategy="dfs")
    assert programs.READS[0] != first  # the next check starts at its own origin


def test_a_failure_replays_in_another_process() -> None:
    """Another process reads other absolute times, but nothing in a schedule depends on them: a
    failure found in one process replays in another."""

    def cli(*args: str) -> dict[str, object]:
        out = explore_command(f"{PROGRAMS_FILE}:main_ttl", "--json", *args, cwd=Path.cwd(), timeout=180)
        facts = json.loads(out.stdout)
        assert isinstance(facts, dict), out
        return facts

    found = cli()
    failure = found["failure"]
    assert isinstance(failure, dict) and found["verdict"] == "failed", found
    replayed = cli("--replay", str(failure["schedule"]))
    again = replayed["failure"]
    assert isinstance(again, dict) and again["kind"] == failure["kind"], replayed


@pytest.mark.parametrize("strategy", ["dpor", "dpor-ipb", "dfs"])
def test_a_clock_gettime_read_and_another_threads_timeout_are_explored_in_both_orders(strategy: str) -> None:
    """``clock_gettime`` reads the virtual clock, so DPOR takes it as dependent with a timeout
    (docs/harness.md, "The DPOR algorithm", *the virtual clock*)."""
    result = _explore("gettime_against_a_timeout", strategy=strategy)
    assert result.verdict == "failed", result.report()
    assert "the reader ran 1.0" in result.report()
