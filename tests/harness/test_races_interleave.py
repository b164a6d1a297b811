"""``interleave_races``: a race's access sites become scheduling points, so the explorer also runs
the racy accesses in both orders and reports the consequence (docs/harness.md, "Interleaving the
races")."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from model_checks.cli import app
from model_checks.harness import Options, check, patched, replay, searching
from model_checks.harness.examples import PROGRAMS
from model_checks.harness.options import Backend
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime
from tests.harness import race_programs as prog


@pytest.mark.timeout(60)
def test_the_race_alone_then_its_consequence() -> None:
    plain = check(PROGRAMS["counter-plain"](), Options(races=True))
    assert plain.failure is not None and plain.failure.kind == "data_race", plain.report()
    assert "Tally.count" in plain.failure.message
    result = check(PROGRAMS["counter-plain"](), Options(interleave_races=True))
    failure = result.failure
    assert failure is not None and failure.kind == "assertion", result.report()
    assert "lost update: count is 1, expected 2" in failure.message
    assert failure.preemptions == 1  # minimal: one preemption between one thread's read and write
    ops = [(row.operation, row.obj) for row in failure.steps]
    assert ops.count(("read", "Tally.count")) == 2 and ops.count(("write", "Tally.count")) == 2, ops
    assert any("interleave_races: data race on Tally.count" in n for n in result.notes)


@pytest.mark.timeout(60)
def test_without_races_nothing_is_found_and_the_verdict_says_so() -> None:
    result = check(PROGRAMS["counter-plain"](), Options(races=False))
    assert result.failure is None and result.summary().startswith("exhaustive (synchronisation points only)")


@pytest.mark.timeout(60)
def test_the_locked_version_is_proved() -> None:
    result = check(PROGRAMS["counter-plain-locked"](), Options(interleave_races=True))
    assert result.verdict == "exhaustive" and result.races, result.report()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_patch_mode_lost_update_shows_the_wrong_value(backend: Backend) -> None:
    def program(rt: ControlledRuntime) -> None:
        prog.lost_update()

    with patched(prog):
        result = check(program, Options(interleave_races=True, backend=backend))
    assert result.failure is not None and result.failure.kind == "assertion", result.report()
    assert "lost update: 1" in result.failure.message


@pytest.mark.timeout(60)
def test_a_race_without_a_visible_consequence_is_still_the_failure() -> None:
    def program(rt: ControlledRuntime) -> None:
        prog.released_early()  # races, but asserts nothing about the count

    with patched(prog):
        result = check(program, Options(interleave_races=True))
    assert result.failure is not None and result.failure.kind == "data_race", result.report()
    assert any("showed no other failure" in n for n in result.notes), result.notes


@pytest.mark.timeout(60)
def test_the_consequence_replays_in_a_fresh_process() -> None:
    program = PROGRAMS["counter-plain"]()
    result = check(program, Options(interleave_races=True))
    assert result.failure is not None
    searching.POINTS.clear()  # as in a new process: the scheduling points are found again
    again = replay(program, result.failure.schedule, Options(interleave_races=True))
    assert again.failure is not None and again.failure.kind == "assertion", again.report()


@pytest.mark.timeout(60)
def test_interleaving_needs_the_detector() -> None:
    with pytest.raises(UsageError, match="not with races=False"):
        check(PROGRAMS["counter-plain"](), Options(interleave_races=True, races=False))


@pytest.mark.timeout(60)
def test_explore_command_flag() -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["explore", "counter-plain", "--interleave-races"])
    assert out.exit_code == 1, out.output
    assert "lost update: count is 1" in out.output and "--interleave-races" in out.output
    out = runner.invoke(app, ["explore", "counter-plain", "--races"])
    assert out.exit_code == 1 and "data_race" in out.output, out.output
    out = runner.invoke(app, ["explore", "counter-plain", "--interleave-races", "--no-races"])
    assert out.exit_code == 2 and "not with races=False" in out.output, out.output


@pytest.mark.timeout(60)
def test_a_thread_spinning_on_a_racy_flag_does_not_hang_the_search() -> None:
    """Both compilations of the loop's condition become scheduling points (``races.alike``): with
    only the one the race was found at, the worker spun at the other for ever, with no step for the
    scheduler to take the main thread back (a review's program hung ``--interleave-races``). Spun
    ahead of the writer, it is the unfair schedule's livelock at ``max_steps``."""

    def program(rt: ControlledRuntime) -> None:
        prog.spin_on_flag()

    with patched(prog):
        result = check(program, Options(interleave_races=True, max_steps=300))
    assert result.failure is not None and result.failure.kind == "livelock", result.report()
    assert any("interleave_races: data race on Flag.stop" in n for n in result.notes), result.notes
