"""Review 13's false alarms on correct programs (review13_alarm_programs.py): a repr of a shared
container printed ``[...]`` while another thread was inside its repr (A1); a timed-out wait or a
sleep measured less than its timeout (A2); the thread pool's names went on counting from one
execution to the next (A6); and the words of a check that cannot go on: a replay that diverged
blamed only the hash seed (C3), "not deterministic" never named objects' addresses (N1)."""

from __future__ import annotations

import re

import greenlet
import pytest

from model_checks.harness import Result, patch_clock
from model_checks.harness.repr_guard import KEY, _thread_dict
from tests.harness import review13_alarm_programs as programs
from tests.harness.explore_runs import explore_command
from tests.harness.patched_runs import assert_outcomes, run_with_outcomes

pytestmark = pytest.mark.timeout(180)

PROGRAMS = f"{programs.__file__}"


def _run(name: str, **options: object) -> Result:
    return run_with_outcomes(programs, getattr(programs, name), races=False, **options)


@pytest.mark.parametrize(
    ("name", "text"),
    [("repr_of_a_list", "[Item]"), ("repr_of_a_deque", "deque([E])"), ("str_of_a_dict", "{'x': Acct(0)}")],
)
@pytest.mark.parametrize("strategy", ["dpor-ipb", "dfs"])
def test_each_thread_has_its_own_repr_guard(name: str, text: str, strategy: str) -> None:
    """A1 (p01, p78, p66): never ``[...]``, in any order."""
    assert_outcomes(_run(name, strategy=strategy), {(text, text)})


def test_the_driver_keeps_its_own_repr_guard() -> None:
    """After a check the OS thread has its guard's list and greenlet trace as before it."""
    before = _thread_dict().get(KEY), greenlet.gettrace()
    _run("repr_of_a_list", strategy="dfs")
    assert (_thread_dict().get(KEY), greenlet.gettrace()) == before


def test_the_guards_hold_under_the_thread_cpu_clocks_trace() -> None:
    """``patch_os_thread``'s greenlet trace (a thread's CPU clock read) chains to the guards'."""
    assert_outcomes(_run("repr_of_a_list_reading_cpu_time", strategy="dfs"), {("[Item]", "[Item]")})


def test_a_thread_interrupted_inside_a_repr_gets_its_guard_back() -> None:
    """A signal handler's error thrown into the main thread parked inside a ``repr``: once it
    unwound, the list is no longer in its guard (a later ``repr`` of it prints it whole)."""
    result = _run("repr_after_a_handler_raised_inside_it", strategy="dfs")
    assert_outcomes(result, {("[Item]", "[Item]"), ("interrupted", "[Item]")})


# Where the check's clocks start, in ns, pinned: whether a difference of two float readings falls
# short of its ns difference depends on them (50 ms read 0.0499999999999545 s from 1000 s on a
# monotonic clock, 0.04999995231628418 s from 1.765e9 s on ``time.time()``).
@pytest.fixture(params=[1_000_000_000_000, 1_765_000_000_000_000_000], ids=["monotonic-like", "time-like"])
def pinned_clocks(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    real = patch_clock._read_origins()
    monkeypatch.setattr(patch_clock, "_read_origins", lambda: dict.fromkeys(real, request.param))


@pytest.mark.usefixtures("pinned_clocks")
@pytest.mark.parametrize(
    "name",
    [
        "event_wait_lasts_its_timeout",
        "lock_acquire_lasts_its_timeout",
        "condition_wait_lasts_its_timeout",
    ],
)
def test_a_timed_out_wait_lasts_its_timeout(name: str) -> None:
    """A2 (p183, p185, p197): on the program's own float clock, never 0.04999999999972715 s."""
    assert_outcomes(_run(name), {True})


@pytest.mark.usefixtures("pinned_clocks")
def test_a_sleep_lasts_its_length_on_every_clock() -> None:
    """A2 (p192): on every clock (``time.time()``'s float grain near 1.8e9 s is a quarter of a
    microsecond)."""
    assert_outcomes(_run("sleep_lasts_its_length"), {(True, True, True)})


def test_each_execution_names_its_first_pool_0() -> None:
    """A6 (p122): ``ThreadPoolExecutor``'s counter starts at 0 in every execution."""
    result = _run("first_pool_name")
    assert result.executions > 1, result.report()
    assert_outcomes(result, {"ThreadPoolExecutor-0_0"})


def test_not_deterministic_names_objects_addresses() -> None:
    """N1 (p195): the error says what the likely cause is, an address (``hash(job)``)."""
    done = explore_command(f"{PROGRAMS}:sharded_by_hash", "--time-limit", "60")
    assert done.returncode == 2, done.stdout + done.stderr
    words = " ".join((done.stdout + done.stderr).split())
    assert "the test is not deterministic" in words, words
    assert "objects' addresses (id(), the default hash()" in words, words


def test_a_diverging_replay_does_not_blame_only_the_hash_seed() -> None:
    """C3 (p122): the cause unknown, the words name what an earlier execution left behind and
    addresses besides the hash seed."""
    found = explore_command(f"{PROGRAMS}:lost_update", "--time-limit", "60")
    hint = re.search(r"--replay (lc1\.\S+)", found.stdout)
    assert hint is not None, found.stdout + found.stderr
    cut = hint.group(1)[: hint.group(1).rindex(",")]  # the schedule without its last choices
    done = explore_command(f"{PROGRAMS}:lost_update", "--replay", cut)
    words = " ".join((done.stdout + done.stderr).split())
    assert "diverged" in words, words
    assert "what the search's earlier executions left behind" in words, words
    assert "objects' addresses" in words, words
