"""``ReplayChooser.keep``: following a recorded schedule without building the enabled set where it
keeps the running thread must give exactly the execution ``choose`` alone gives: the same steps,
preemptions, modelling-limit cuts and outcome, and no divergence."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from model_checks.design import Program
from model_checks.harness import Options
from model_checks.harness.api import run_once
from model_checks.harness.examples import bounded_buffer, handoff, parking_pool, timed_wait
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.strategies.randomized import PctChooser, RandomChooser
from model_checks.harness.strategies.simple import ReplayChooser

# (program, options): timed waits and spurious wakeups exercise the steps ``keep`` must leave to
# ``enabled_actions`` (their alternatives, and the limits that cut them)
PROGRAMS: dict[str, tuple[Callable[[], Program], Options]] = {
    "bounded-buffer": (lambda: bounded_buffer(1, 2, 2, 1), Options()),
    "parking-pool": (lambda: parking_pool(2, 2, recheck=True), Options()),
    "handoff-spurious": (lambda: handoff(use_while=True), Options(spurious_wakeups=True, spurious_limit=1)),
    "timed-wait": (lambda: timed_wait(1.0), Options(virtual_timeouts=True, timeout_limit=1)),
}


# no timed or spurious alternatives: ``keep`` decides every step that keeps the running thread
NO_ALTERNATIVES = ("bounded-buffer", "parking-pool")


def _figures(ex: Execution) -> tuple[object, ...]:
    steps = [(s.tid, s.alt, s.op.kind, s.preemption) for s in ex.steps]
    failure = None if ex.failure is None else ex.failure.kind
    return steps, ex.preemptions, sorted(ex.limit_cut), failure, repr(ex.outcome)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_replay_with_keep_is_the_recorded_execution(name: str) -> None:
    factory, options = PROGRAMS[name]
    kept = decided = 0
    for index in range(40):
        chooser = PctChooser(3, index, 3, 40) if index % 2 else RandomChooser(3, index)
        recorded = run_once(factory(), options, chooser, sources=False)
        want = _figures(recorded)
        replayer = ReplayChooser([(s.tid, s.alt) for s in recorded.steps])
        again = run_once(factory(), options, replayer, sources=False)
        assert replayer.divergence is None, replayer.divergence
        assert _figures(again) == want
        # the schedule keeps the running thread at some steps: ``keep`` decided those, except
        # where another thread's timeout or spurious alternative sends the step to ``choose``
        kept += sum(
            1
            for i in range(1, len(again.steps))
            if again.steps[i].tid == again.steps[i - 1].tid and not again.steps[i].alt
        )
        decided += replayer.kept
    assert 0 < decided <= kept
    if name in NO_ALTERNATIVES:
        assert decided == kept
    else:
        assert decided < kept


@pytest.mark.timeout(60)
def test_keep_never_fires_where_the_schedule_never_keeps_the_running_thread() -> None:
    # a schedule of one step: every later step is past it, where ``keep`` must decline
    factory, options = PROGRAMS["bounded-buffer"]
    recorded = run_once(factory(), options, RandomChooser(5, 0), sources=False)
    replayer = ReplayChooser([(recorded.steps[0].tid, recorded.steps[0].alt)])
    run_once(factory(), options, replayer, sources=False)
    assert replayer.kept == 0 and replayer.divergence is not None


@pytest.mark.timeout(60)
def test_keep_declines_past_the_recorded_steps() -> None:
    """A schedule shorter than the execution: ``keep`` leaves the step to ``choose``, which
    reports the divergence (the execution is abandoned)."""
    factory, options = PROGRAMS["bounded-buffer"]
    recorded = run_once(factory(), options, RandomChooser(5, 0), sources=False)
    short = [(s.tid, s.alt) for s in recorded.steps][: len(recorded.steps) // 2]
    replayer = ReplayChooser(short)
    again = run_once(factory(), options, replayer, sources=False)
    assert again.abandoned
    assert replayer.kept > 0  # within the recorded steps it does fire
    assert replayer.divergence is not None and "continues after" in replayer.divergence
    assert len(again.steps) == len(short)
