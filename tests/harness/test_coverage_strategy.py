"""The coverage-guided strategy (strategies/frontier.py) and the Work Lane's automaton feedback."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Hashable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from model_checks.designs.work_lane.link.automaton_feedback import AutomatonFeedback
from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS
from model_checks.designs.work_lane.link.spec_to_impl import compare_by_automaton
from model_checks.designs.work_lane.link.trace_automaton import TraceAutomaton
from model_checks.harness import Options, check
from model_checks.harness.rt.scheduler import UsageError
from model_checks.harness.runtime import ControlledRuntime

NAMES = ("a", "b", "c")


class OrderFeedback:
    """Goals: every (order so far, next thread) of three threads logging once each (15 edges)."""

    def __init__(self, log: list[str], steer: bool = True) -> None:
        self.log = log
        self.steer = steer
        self.goals = {
            (perm[:k], perm[k]) for perm in itertools.permutations(NAMES) for k in range(len(NAMES))
        }
        self.covered: set[tuple[tuple[str, ...], str]] = set()
        self._new = 0

    def begin(self) -> None:
        self.log.clear()

    def position(self) -> Hashable | None:
        return tuple(self.log)

    def open_goals(self, position: Hashable) -> int:
        if not self.steer:
            return 0
        return sum(1 for g in self.goals - self.covered if g[0] == position)

    def end(self) -> int:
        order = tuple(self.log)
        edges = {(order[:k], order[k]) for k in range(len(order))} - self.covered
        self.covered |= edges
        return len(edges)


def three_loggers(
    log: list[str], bug: tuple[str, ...] | None = None
) -> Callable[[ControlledRuntime], object]:
    def program(rt: ControlledRuntime) -> object:
        lock = rt.lock()

        def body(name: str) -> None:
            for _ in range(3):  # steps that log nothing: the order is decided among them
                with lock:
                    pass
            with lock:
                log.append(name)

        threads = [rt.start_thread(functools.partial(body, n), n) for n in NAMES]
        for t in threads:
            t.join()

        def final() -> None:
            assert tuple(log) != bug, f"order {log}"

        return final

    return program


@pytest.mark.timeout(60)
def test_the_frontier_covers_every_goal_and_restarts_from_kept_positions() -> None:
    log: list[str] = []
    feedback = OrderFeedback(log)
    result = check(three_loggers(log), Options(strategy="coverage", feedback=feedback, max_executions=150))
    assert result.verdict == "bounded" and result.failure is None
    assert feedback.covered == feedback.goals
    note = next(n for n in result.notes if n.startswith("coverage:"))
    restarts = int(re.search(r"(\d+) executions restarted", note).group(1))  # type: ignore[union-attr]
    assert restarts > 0, note


@pytest.mark.timeout(60)
def test_without_open_goals_nothing_is_restarted_from_a_prefix() -> None:
    log: list[str] = []
    feedback = OrderFeedback(log, steer=False)
    result = check(three_loggers(log), Options(strategy="coverage", feedback=feedback, max_executions=40))
    assert "0 executions restarted" in next(n for n in result.notes if n.startswith("coverage:"))


@pytest.mark.timeout(60)
def test_a_failure_stops_the_search_and_replays() -> None:
    log: list[str] = []
    feedback = OrderFeedback(log)
    result = check(
        three_loggers(log, bug=("c", "b", "a")),
        Options(strategy="coverage", feedback=feedback, max_executions=2_000),
    )
    assert result.verdict == "failed" and result.failure is not None
    assert result.failure.kind == "assertion" and "['c', 'b', 'a']" in result.failure.message


@pytest.mark.timeout(60)
def test_the_same_seed_runs_the_same_executions() -> None:
    orders = []
    for _ in range(2):
        log: list[str] = []
        seen: list[tuple[str, ...]] = []
        feedback = OrderFeedback(log)
        original_end = feedback.end

        def end(
            original_end: Callable[[], int] = original_end,
            log: list[str] = log,
            seen: list[tuple[str, ...]] = seen,
        ) -> int:
            seen.append(tuple(log))
            return original_end()

        feedback.end = end  # type: ignore[method-assign]
        check(three_loggers(log), Options(strategy="coverage", feedback=feedback, max_executions=30, seed=4))
        orders.append(seen)
    assert orders[0] == orders[1]


def test_coverage_needs_a_feedback_and_the_feedback_needs_coverage() -> None:
    log: list[str] = []
    with pytest.raises(UsageError, match="needs Options\\(feedback"):
        check(three_loggers(log), Options(strategy="coverage"))
    with pytest.raises(UsageError, match="only for strategy 'coverage'"):
        check(three_loggers(log), Options(strategy="pct", feedback=OrderFeedback(log)))


# ----------------------------------------------------------------------------- the Work Lane side


def test_the_position_follows_the_trace_and_only_accepted_traces_cover() -> None:
    sc = LINK_SCENARIOS["1x1-2w"]
    automaton = TraceAutomaton(sc.constants(), callback_mode=sc.callback_stop)
    feedback = AutomatonFeedback(automaton)
    first = next(iter(feedback.delta[0]))  # an edge from the start
    thread, event, fields = first
    feedback.begin()
    assert feedback.open_goals(feedback.position()) == len(feedback.delta[0])
    feedback.logged(thread, event, dict(fields))
    assert feedback.position() == feedback.delta[0][first]
    feedback.logged("p9", "post", {})  # the spec never logs it: off the automaton
    assert feedback.position() is None
    word = next(w for w in automaton.words() if w and w[0] == first)
    feedback.complete(word)
    assert feedback.end() == len(word)
    assert feedback.open_goals(0) == len(feedback.delta[0]) - 1
    feedback.complete(word)  # nothing new
    feedback.complete((("p9", "post", ()),))  # rejected by the spec: covers nothing
    assert feedback.end() == 0


@pytest.mark.timeout(120)
def test_coverage_realises_every_step_of_a_small_scenario_and_agrees_with_the_report() -> None:
    c = compare_by_automaton(LINK_SCENARIOS["1x2-2w-cap1"], strategy="coverage", max_executions=400)
    assert c.failure == "" and not c.impl_only
    assert c.harness == "bounded"
    assert c.realised_steps == c.spec_steps, c.figures()
    # the feedback's own count (the timeline) is the report's
    assert c.timeline[-1][1] == c.realised_steps


@pytest.mark.timeout(120)
def test_link_compare_draws_the_chart_and_refuses_bad_options(tmp_path: Path) -> None:
    from model_checks.cli import app

    runner = CliRunner()
    png = tmp_path / "cov.png"
    args = ["link", "compare", "1x1-2w", "--automaton", "--max-executions", "30"]
    got = runner.invoke(app, [*args, "--strategy", "coverage,pct", "--chart", str(png)])
    assert got.exit_code == 3, got.output  # sampled: bounded
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert runner.invoke(app, [*args, "--strategy", "bogus"]).exit_code == 2
    assert runner.invoke(app, ["link", "compare", "1x1-2w", "--chart", str(png)]).exit_code == 2
    assert runner.invoke(app, [*args, "--chart", str(tmp_path / "cov.svg")]).exit_code == 2
    assert runner.invoke(app, [*args, "--chart", str(tmp_path / "no" / "c.png")]).exit_code == 2
