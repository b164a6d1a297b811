"""Session 40's review: two false proofs whose verdict followed a value lanecheck did not choose.

* p154 (``random_lock_order``): a lock order picked by ``random.random()``; the check's answer
  followed the process's generator (seeded by the OS), "exhaustive" in 2-3 of 6 runs. Now the
  draws come from the check's seed (``patch_random``): the verdict is the same in every run, an
  exhaustive one says what it held fixed, random/PCT sampling vary the draws and find the
  deadlock, and the failure's schedule string carries the draw seed so that its replay draws the
  same values. ``os.urandom`` and an unseeded ``random.Random()`` likewise.
* p155 (``set_order_locks``): a lock order following a set of strings, i.e. the str hash seed.
  Every exhaustive verdict names the seed it holds for; ``lanecheck explore`` runs under a chosen
  one (``--hash-seed``, 0 by default), and ``--hash-seeds N`` checks N of them.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.harness import Result, check, patched, replay
from model_checks.harness import hash_seed as process_seed
from model_checks.harness.schedule import Schedule, ScheduleFormatError
from tests.harness import review7_seeds_programs as prog
from tests.harness.explore_runs import explore_command

pytestmark = pytest.mark.timeout(180)

PROGRAMS = Path(prog.__file__)


def _run(program: object, **options: object) -> Result:
    with patched(prog):
        return check(lambda rt: program(), **options)  # type: ignore[arg-type, operator]


def p154(rt: object) -> None:
    """The explored function of p154 (named: a replay finds its test by name)."""
    prog.random_lock_order()


def _under_process_state(state: int, program: object, **options: object) -> Result:
    """The check with the process's own generator seeded ``state`` first (as the OS seeds it
    differently in every run)."""
    random.seed(state)
    return _run(program, **options)


def test_a_random_lock_order_gets_one_verdict_whatever_the_processs_generator() -> None:
    # before: the verdict followed random.random() of the process (failed or exhaustive)
    for seed in (0, 2):
        outcomes = {
            (r.verdict, r.executions)
            for r in (_under_process_state(s, prog.random_lock_order, seed=seed) for s in range(8))
        }
        assert len(outcomes) == 1, (seed, outcomes)


def test_an_exhaustive_verdict_names_the_random_draws_it_held() -> None:
    # check seed 0 draws the deadlocking order, seed 1 the safe one: both reproducible (the
    # module's one generator is seeded with the draw seed: random.Random(1).random() < 0.5)
    failed = _run(prog.random_lock_order, seed=0)
    assert failed.verdict == "failed" and failed.failure is not None, failed.report()
    assert failed.failure.kind == "deadlock"
    held = _run(prog.random_lock_order, seed=1)
    assert held.verdict == "exhaustive", held.report()
    text = held.verdict_text()
    assert "held fixed:" in text, text
    assert "random draws: one shared generator, as CPython's, seeded 1" in text, text
    assert "other values not explored" in text, text


def test_a_program_that_draws_nothing_has_no_draws_in_its_verdict() -> None:
    result = _run(lambda: prog._take(["alpha", "beta"]))
    assert result.verdict == "exhaustive", result.report()
    assert "random draws" not in result.verdict_text() and "hash seed" in result.verdict_text()


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_sampling_varies_the_draws_and_its_failure_replays_them(strategy: str) -> None:
    # seed 1 holds the safe order in every systematic execution; sampling draws other values
    for state in range(3):
        random.seed(state)
        with patched(prog):
            found = check(p154, strategy=strategy, seed=1)
        assert found.failure is not None and found.failure.kind == "deadlock", found.report()
        schedule = found.failure.schedule
        draws = Schedule.decode(schedule).draws
        assert draws, schedule  # the draw seed is in the string
        random.seed(state + 100)  # another process state: the replay must not depend on it
        with patched(prog):
            again = replay(p154, schedule)
        assert again.failure is not None and again.failure.kind == "deadlock", again.report()


def test_a_failing_systematic_schedule_with_a_nonzero_seed_replays() -> None:
    with patched(prog):
        found = check(p154, seed=2)
    assert found.failure is not None, found.report()
    assert found.failure.schedule.endswith(".r2"), found.failure.schedule
    random.seed(99)
    with patched(prog):
        again = replay(p154, found.failure.schedule)
    assert again.failure is not None and again.failure.kind == "deadlock", again.report()


@pytest.mark.parametrize(
    "program",
    [
        prog.urandom_lock_order,
        prog.unseeded_instance_lock_order,
        prog.uuid4_lock_order,
        prog.secrets_lock_order,
    ],
)
def test_the_oss_entropy_is_drawn_from_the_checks_seed_too(program: object) -> None:
    # before: os.urandom / Random() read the OS's entropy: another answer in every run (or
    # "the test is not deterministic")
    outcomes = set()
    for state in range(4):
        result = _under_process_state(state, program)
        outcomes.add((result.verdict, result.executions))
    assert len(outcomes) == 1, outcomes
    seeds = {_run(program, seed=s).verdict for s in range(8)}
    assert seeds == {"exhaustive", "failed"}, seeds  # the seed decides, and both orders occur


def test_a_correct_program_with_random_jitter_is_proved_for_the_draws_held() -> None:
    totals: list[int] = []
    result = _run(lambda: prog.jitter_counter(totals))
    assert result.verdict == "exhaustive", result.report()
    assert set(totals) == {2} and "random draws" in result.verdict_text()


def test_a_programs_own_seed_gives_its_own_draws() -> None:
    seen: list[float] = []
    result = _run(lambda: prog.seeded_draws(seen))
    assert result.ok, result.report()
    assert set(seen) == {random.Random(123).random()}, seen


def test_schedule_strings_with_and_without_a_draw_seed() -> None:
    old = Schedule.decode("lc1.ff6e.07c9d4.0*3,1*3,0")  # every string before session 40
    assert old.draws is None and old.encode() == "lc1.ff6e.07c9d4.0*3,1*3,0"
    new = Schedule.decode("lc1.ff6e.07c9d4.0*3,1*3,0.r5e45e7039242ab8b")
    assert new.draws == 0x5E45E7039242AB8B and new.actions == old.actions
    assert new.encode() == "lc1.ff6e.07c9d4.0*3,1*3,0.r5e45e7039242ab8b"
    for bad in (
        "lc1.ff6e.07c9d4.0.rzz",
        "lc1.ff6e.07c9d4.0.r",
        "lc1.ff6e.07c9d4.0.x1",
        "lc1.ff6e.07c9d4.0.r" + "1" * 17,
    ):
        with pytest.raises(ScheduleFormatError):
            Schedule.decode(bad)


def test_every_exhaustive_verdict_names_the_hash_seed_of_its_process() -> None:
    result = _run(lambda: prog._take(["alpha"]))
    expected = (
        f"PYTHONHASHSEED={process_seed.SEED}"
        if process_seed.SEED is not None
        else "random str/bytes hash seed"
    )
    assert expected in result.verdict_text(), result.verdict_text()


def _explore(*args: str, hash_seed: str | None = None) -> subprocess.CompletedProcess[str]:
    return explore_command(*args, env={"PYTHONHASHSEED": hash_seed})


def test_the_command_line_runs_under_hash_seed_0_unless_told_otherwise() -> None:
    # before: the process's random seed decided, unnamed (p155: exhaustive or failed by chance)
    target = f"{PROGRAMS}:set_order_locks"
    runs = [_explore(target, "--json") for _ in range(2)]
    for run in runs:
        out = json.loads(run.stdout)
        assert out["verdict"] == "exhaustive", run.stdout + run.stderr
        assert "str/bytes hash seed PYTHONHASHSEED=0" in out["verdict_text"], out["verdict_text"]
    # the environment's seed is kept, and named
    under1 = _explore(target, "--json", hash_seed="1")
    assert json.loads(under1.stdout)["verdict"] == "failed", under1.stdout
    # --hash-seed overrides it; the replay command carries it
    chosen = _explore(target, "--hash-seed", "3", hash_seed="0")
    assert chosen.returncode == 1, chosen.stdout + chosen.stderr
    assert "deadlock" in chosen.stdout and "--hash-seed 3 --replay lc1." in chosen.stdout, chosen.stdout
    line = next(x for x in chosen.stdout.splitlines() if x.startswith("replay: "))
    again = _explore(*line.removeprefix("replay: lanecheck explore ").split())
    assert again.returncode == 1 and "deadlock" in again.stdout, again.stdout + again.stderr


def test_hash_seeds_n_checks_each_seed_and_fails_if_one_fails() -> None:
    target = f"{PROGRAMS}:set_order_locks"
    run = _explore(target, "--hash-seeds", "4", "--json")
    assert run.returncode == 1, run.stdout + run.stderr
    out = json.loads(run.stdout)
    assert out["verdict"] == "failed" and out["failure"]["kind"] == "deadlock"
    assert [(r["hash_seed"], r["verdict"]) for r in out["hash_seeds"]] == [(0, "exhaustive"), (1, "failed")]
    proved = _explore(f"{PROGRAMS}:random_lock_order", "--seed", "1", "--hash-seeds", "2")
    assert proved.returncode == 0, proved.stdout + proved.stderr
    assert "hash seeds 0..1: exhaustive under each (2 of 2 run)" in proved.stdout, proved.stdout


def test_hash_seed_in_process_runs_a_child() -> None:
    # a test calling the command has no command line to re-run: a child runs under the seed
    result = CliRunner().invoke(app, ["explore", f"{PROGRAMS}:set_order_locks", "--hash-seed", "1"])
    assert result.exit_code == 1, result.output
    assert "PYTHONHASHSEED=1: failed" in result.output and "deadlock" in result.output
