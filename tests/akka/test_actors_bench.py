"""The reference-against-pykka bench runs both sides to the end (figures are the bench's, not asserted)."""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from model_checks.designs.akka_mailbox import actors_bench


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "run",
    [
        lambda: actors_bench.ours_ping_pong(300),
        lambda: actors_bench.pykka_ping_pong(300),
        lambda: actors_bench.ours_fan_in(200, 3),
        lambda: actors_bench.pykka_fan_in(200, 3),
        lambda: actors_bench.floor_fan_in(200, 3),
    ],
    ids=["ours-ping-pong", "pykka-ping-pong", "ours-fan-in", "pykka-fan-in", "floor-fan-in"],
)
def test_each_workload_delivers_every_message(run: object) -> None:
    # Each workload waits for its last message (a lost one would hit DEADLINE_S and raise).
    assert callable(run)
    assert run() > 0


@pytest.mark.timeout(60)
def test_without_pykka_the_bench_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pykka", None)
    with pytest.raises(RuntimeError, match="pip install pykka"):
        actors_bench.bench(quick=True)


@pytest.mark.timeout(30)
def test_a_workload_that_never_finishes_is_an_error_not_a_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actors_bench, "DEADLINE_S", 0.01)
    import threading

    with pytest.raises(RuntimeError, match="did not finish"):
        actors_bench._wait(threading.Event(), "a workload")


@pytest.mark.timeout(60)
def test_best_in_turn_alternates_and_reports_cpu_per_message() -> None:
    order: list[str] = []

    def side(name: str, rate: float) -> Callable[[], float]:
        def run() -> float:
            order.append(name)
            sum(range(20_000))  # some CPU, so that the per-message figure is positive
            return rate

        return run

    (mine, other), (mine_cpu, other_cpu) = actors_bench._best_in_turn(
        side("ours", 2.0),
        side("pykka", 1.0),
        rounds=2,
        messages=10,
    )
    assert order == ["ours", "pykka", "ours", "pykka"]
    assert (mine, other) == (2.0, 1.0)
    assert mine_cpu > 0 and other_cpu > 0
