"""A chooser's replayed prefix (``Chooser.replay_prefix``): the execution runs those steps itself,
asking the chooser nothing and calling its ``after_step`` only from step ``quiet`` on, checks that
each replayed step finds the actions it found before (and the state search's refusal of a test that
is not deterministic: tests/harness/test_harness_search.py), and the state search explores exactly
what it explored when it replayed through ``choose``."""

from __future__ import annotations

from typing import Any

import pytest

from model_checks.harness import examples
from model_checks.harness.execution import execute
from model_checks.harness.options import Options
from model_checks.harness.rt.backends import make_backend
from model_checks.harness.rt.objects import Action
from model_checks.harness.rt.records import Replay
from model_checks.harness.rt.scheduler import Execution, UsageError
from model_checks.harness.stateful import StatefulResult, check_states
from model_checks.harness.strategies.stateful import StateCachingChooser

pytestmark = pytest.mark.timeout(120)


class Recorder:
    """Runs the first enabled action; remembers every step's enabled actions and the steps it was
    asked about."""

    trusted = True

    def __init__(self, replay: Replay | None = None) -> None:
        self.replay = replay
        self.enabled: list[list[Action]] = []
        self.chosen: list[Action] = []
        self.asked: list[int] = []
        self.after: list[int] = []

    def replay_prefix(self) -> Replay:
        return self.replay or Replay([], [], 0)

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        self.asked.append(len(ex.steps))
        self.enabled.append(list(enabled))
        self.chosen.append(enabled[-1])
        return enabled[-1]

    def after_step(self, ex: Execution) -> None:
        self.after.append(len(ex.steps) - 1)


def _run(program: Any, chooser: Any) -> Execution:
    options = Options()
    return execute(make_backend(options.backend), program, options, chooser, sources=False)


def test_the_replayed_steps_ask_the_chooser_nothing_and_run_what_it_chose_before() -> None:
    program = examples.bounded_buffer(1, 2, 1, 1)
    first = Recorder()
    ex = _run(program, first)
    n = len(ex.steps)
    assert n > 6 and first.asked == list(range(n)) and first.after == list(range(n))
    k = n // 2
    again = Recorder(Replay(first.enabled[:k], first.chosen[:k], k - 1))
    ex2 = _run(program, again)
    assert [(s.tid, s.alt) for s in ex2.steps] == [(s.tid, s.alt) for s in ex.steps]
    assert again.asked == list(range(k, n))  # asked from the first step past the prefix
    assert again.after == list(range(k - 1, n))  # told from step ``quiet`` on


def test_a_replayed_step_that_finds_other_actions_is_refused() -> None:
    program = examples.bounded_buffer(1, 2, 1, 1)
    first = Recorder()
    _run(program, first)
    wrong = [list(e) for e in first.enabled[:3]]
    wrong[2] = [*wrong[2], (99, 0)]
    with pytest.raises(UsageError, match="not deterministic: at step 2"):
        _run(program, Recorder(Replay(wrong, first.chosen[:3], 0)))


class ReplayedByChoose(StateCachingChooser):
    """The state search's chooser as it was: every replayed step through ``choose``."""

    replay_prefix = None  # type: ignore[assignment]


@pytest.mark.parametrize("sleep_sets", [True, False])
@pytest.mark.parametrize(
    "program",
    [examples.bounded_buffer(1, 2, 2, 1), examples.handoff(use_while=True), examples.counter(2, locked=True)],
    ids=["bounded-buffer", "handoff", "counter"],
)
def test_the_state_search_explores_the_same_executions_either_way(
    program: Any, sleep_sets: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = check_states(program, sleep_sets=sleep_sets)
    monkeypatch.setattr("model_checks.harness.stateful.StateCachingChooser", ReplayedByChoose)
    slow = check_states(program, sleep_sets=sleep_sets)
    assert isinstance(fast, StatefulResult) and isinstance(slow, StatefulResult)
    assert fast.verdict == slow.verdict == "exhaustive"
    assert (fast.executions, fast.steps, fast.states, fast.states_pruned, fast.sleep_blocked) == (
        slow.executions,
        slow.steps,
        slow.states,
        slow.states_pruned,
        slow.sleep_blocked,
    )
    assert fast.outcomes == slow.outcomes
