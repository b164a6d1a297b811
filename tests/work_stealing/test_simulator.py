"""The seed's step simulator (`lanecheck simulate work-stealing`): the model's properties and its CLI.

The CLI tests run through a root command built like ``model_checks.cli`` (``LanecheckGroup``, so the
central error handler is part of what is tested) with the generic ``simulate`` group and this
design's simulator registered on it.
"""

from __future__ import annotations

import builtins
import json
import math
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from model_checks.cli import LanecheckGroup
from model_checks.commands import simulate as simulate_group
from model_checks.designs.work_stealing import simulate_command
from model_checks.designs.work_stealing.simulator import (
    MAX_WORKERS,
    SUBTASKS,
    ParameterError,
    Params,
    Simulation,
    simulate,
    sweep,
)
from tests.helpers.cli import refused

pytestmark = pytest.mark.timeout(120)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _app() -> typer.Typer:
    app = typer.Typer(cls=LanecheckGroup, no_args_is_help=True, pretty_exceptions_enable=False)

    @app.command("noop")  # a second command, so that `simulate` stays a sub-command
    def _noop() -> None:
        return None

    simulate_group.register(app)
    simulate_command.register(app)
    return app


APP = _app()
runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(APP, ["simulate", *args])


# ----------------------------------------------------------------------------- the model


@pytest.mark.parametrize("steal", [True, False])
def test_a_seed_determines_the_run(steal: bool) -> None:
    params = Params(workers=4, tasks=300, steal=steal, seed=7)
    assert simulate(params).as_json() == simulate(params).as_json()
    others = {
        json.dumps(simulate(Params(workers=4, tasks=300, steal=steal, seed=s)).as_json()) for s in range(5)
    }
    assert len(others) == 5, "different seeds should give different runs"


def test_the_global_random_state_does_not_change_a_run() -> None:
    import random

    params = Params(workers=8, tasks=200, seed=11)
    random.seed(1)
    first = simulate(params)
    random.seed(2)
    assert simulate(params) == first


@pytest.mark.parametrize("workers", [1, 2, 3, 8, 33])
@pytest.mark.parametrize("steal", [True, False])
def test_every_created_task_completes_once(workers: int, steal: bool) -> None:
    r = simulate(Params(workers=workers, tasks=500, split=0.7, depth=4, steal=steal, seed=workers))
    assert r.created > 500, "the tasks should have forked"
    assert (r.created - 500) % SUBTASKS == 0
    assert r.completed == r.created
    assert r.idle_steps == workers * r.steps - r.completed
    assert len(r.completed_per_worker) == workers


def test_conservation_fails_for_a_run_cut_short() -> None:
    # The figure compared above is not completed == created by construction: mid-run, tasks wait.
    sim = Simulation(Params(workers=4, tasks=100, seed=3))
    for _ in range(10):
        sim.step()
    r = sim.result()
    assert not sim.done and r.completed < r.created


def test_no_split_or_no_depth_creates_only_the_initial_tasks() -> None:
    for params in (Params(tasks=250, split=0.0), Params(tasks=250, split=0.9, depth=0)):
        r = simulate(params)
        assert r.created == r.completed == 250


def test_stealing_off_admits_one_worker_to_the_queue_per_step() -> None:
    sim = Simulation(Params(workers=6, tasks=200, steal=False, seed=5))
    ran = []
    while not sim.done:
        ran.append(sim.step())
    assert set(ran) == {1}
    r = sim.result()
    assert r.busiest_step == 1 and r.completed == r.steps == len(ran)
    assert sum(1 for c in r.completed_per_worker if c) > 1, "the lock admits different workers"
    assert r.steals == 0


def test_stealing_on_runs_several_tasks_in_one_step() -> None:
    # The counterpart of the test above: the same question asked of stealing on gets more than 1.
    sim = Simulation(Params(workers=6, tasks=200, steal=True, seed=5))
    ran = []
    while not sim.done:
        ran.append(sim.step())
    assert max(ran) > 1 and sim.result().busiest_step == max(ran)
    assert sim.step() == 0, "a finished run stays finished"


def test_step_by_step_and_whole_runs_agree() -> None:
    params = Params(workers=5, tasks=300, seed=9)
    sim = Simulation(params)
    while not sim.done:
        sim.step()
    assert sim.result() == simulate(params)


@pytest.mark.parametrize("workers", [2, 3, 4, 8, 16])
def test_stealing_beats_the_global_queue_for_more_than_one_worker(workers: int) -> None:
    on = simulate(Params(workers=workers, tasks=500, seed=42))
    off = simulate(Params(workers=workers, tasks=500, seed=42, steal=False))
    assert on.throughput > off.throughput
    assert on.steals > 0 and off.steals == 0


def test_one_worker_is_the_same_with_or_without_stealing() -> None:
    on = simulate(Params(workers=1, tasks=300, seed=1))
    off = simulate(Params(workers=1, tasks=300, seed=1, steal=False))
    assert on.throughput == off.throughput == 1.0
    assert on.idle_steps == off.idle_steps == 0 and on.steals == 0


def test_stealing_spreads_the_load_of_w0() -> None:
    r = simulate(Params(workers=4, tasks=2000, seed=0))
    assert min(r.completed_per_worker) > 0.5 * max(r.completed_per_worker)


def test_sweep_runs_every_count_in_both_modes() -> None:
    results = sweep(Params(tasks=100), [1, 2, 4])
    assert [(r.params.workers, r.params.steal) for r in results] == [
        (1, True),
        (1, False),
        (2, True),
        (2, False),
        (4, True),
        (4, False),
    ]


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        ({"workers": 0}, "workers"),
        ({"workers": MAX_WORKERS + 1}, "workers"),
        ({"split": 1.0}, "split"),
        ({"split": -0.01}, "split"),
        ({"split": math.nan}, "split"),
        ({"tasks": 0}, "tasks"),
        ({"depth": -1}, "depth"),
        ({"seed": -1}, "seed"),
        ({"tasks": 10_000_000, "split": 0.99, "depth": 10}, "tasks"),
    ],
)
def test_bad_parameters_are_refused_naming_them(fields: dict[str, Any], name: str) -> None:
    with pytest.raises(ParameterError) as info:
        Params(**fields)
    assert info.value.name == name


# ----------------------------------------------------------------------------- the command


def test_a_run_prints_the_seed_figures_and_a_bar_per_worker() -> None:
    result = run("work-stealing", "--workers", "3", "--tasks", "100", "--seed", "2")
    assert result.exit_code == 0, result.output
    for figure in ("steps", "completed tasks", "throughput", "steals", "idle steps"):
        assert figure in result.output
    for worker in ("W0", "W1", "W2"):
        assert worker in result.output
    assert "█" in result.output


def test_json_schema_of_a_run() -> None:
    result = run(
        "work-stealing", "--workers", "4", "--tasks", "200", "--seed", "1", "--steal", "off", "--json"
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["design"] == "work-stealing" and data["kind"] == "run"
    assert data["params"] == {
        "workers": 4,
        "split": 0.55,
        "steal": "off",
        "tasks": 200,
        "seed": 1,
        "depth": 3,
        "subtasks": 2,
    }
    for key in ("steps", "completed", "created", "steals", "idle_steps", "busiest_step"):
        assert isinstance(data[key], int), key
    for key in ("throughput", "imbalance"):
        assert isinstance(data[key], float), key
    per = data["per_worker"]
    assert set(per) == {"completed", "idle", "steals"}
    assert all(len(v) == 4 for v in per.values())
    assert sum(per["completed"]) == data["completed"] == data["created"]
    assert sum(per["idle"]) == data["idle_steps"]
    assert (
        data
        == {"design": "work-stealing", "kind": "run"}
        | simulate(Params(workers=4, tasks=200, seed=1, steal=False)).as_json()
    )


def test_json_schema_of_a_sweep() -> None:
    result = run("work-stealing", "--sweep", "workers=1..5", "--tasks", "100", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["kind"] == "sweep" and "workers" not in data["params"] and "steal" not in data["params"]
    rows = data["rows"]
    assert [(r["workers"], r["steal"]) for r in rows] == [(w, m) for w in range(1, 6) for m in ("on", "off")]
    assert set(rows[0]) == {
        "workers",
        "steal",
        "steps",
        "completed",
        "throughput",
        "steals",
        "idle_steps",
        "imbalance",
    }
    by = {(r["workers"], r["steal"]): r for r in rows}
    # Idle steps grow with the workers; under the global queue all but one worker wait each step.
    assert by[(5, "off")]["idle_steps"] > by[(2, "off")]["idle_steps"]
    assert all(by[(w, "off")]["throughput"] == 1.0 for w in range(1, 6))


def test_sweep_restricted_to_one_mode_and_given_as_a_list() -> None:
    result = run("work-stealing", "--sweep", "workers=1,4,16", "--steal", "on", "--tasks", "50", "--json")
    assert result.exit_code == 0, result.output
    assert [(r["workers"], r["steal"]) for r in json.loads(result.output)["rows"]] == [
        (1, "on"),
        (4, "on"),
        (16, "on"),
    ]


def test_sweep_table_has_a_row_per_worker_count() -> None:
    result = run("work-stealing", "--sweep", "workers=2..4", "--tasks", "50")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for w in ("2", "3", "4"):
        assert any(line.split("│")[1:2] == [f" {w:>7} "] for line in lines if "│" in line), (w, result.output)


@pytest.mark.parametrize("sweep_args", [[], ["--sweep", "workers=1..3"]])
def test_plot_writes_a_png(tmp_path: Path, sweep_args: list[str]) -> None:
    pytest.importorskip("matplotlib", reason="--plot needs matplotlib (pip install 'lanecheck[plot]')")
    out = tmp_path / "chart.png"
    result = run("work-stealing", "--tasks", "100", *sweep_args, "--plot", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert "chart written" in result.output


def test_plot_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_import = builtins.__import__

    def no_matplotlib(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    out = tmp_path / "chart.png"
    result = run("work-stealing", "--tasks", "10", "--plot", str(out))
    refused(result, "--plot", "pip install 'lanecheck[plot]'")
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--workers", "0"], "--workers"),
        (["--workers", "1025"], "--workers"),
        (["--split", "1"], "--split"),
        (["--split", "-0.5"], "--split"),
        (["--split", "nan"], "--split"),
        (["--tasks", "0"], "--tasks"),
        (["--tasks", "100000000000"], "--tasks"),
        (["--tasks", "5000000", "--split", "0.99", "--depth", "12"], "--tasks"),
        (["--depth", "65"], "--depth"),
        (["--seed", "-1"], "--seed"),
        (["--steal", "maybe"], "--steal"),
        (["--sweep", "workers"], "--sweep"),
        (["--sweep", "threads=1..4"], "--sweep"),
        (["--sweep", "workers=4..1"], "--sweep"),
        (["--sweep", "workers=0..4"], "--sweep"),
        (["--sweep", "workers=1..2000"], "--sweep"),
        (["--sweep", "workers=1..x"], "--sweep"),
        (["--sweep", "workers=1,,2"], "--sweep"),
        (["--sweep", "workers=2,2"], "--sweep"),
        (["--sweep", "workers="], "--sweep"),
        (["--plot", "/no/such/dir/x.png"], "--plot"),
    ],
)
def test_bad_arguments_exit_2_naming_the_option(args: list[str], option: str) -> None:
    refused(run("work-stealing", *args), option)


def test_bad_arguments_with_json_are_a_json_error() -> None:
    result = run("work-stealing", "--split", "1.5", "--json")
    assert result.exit_code == 2
    error = json.loads(result.output)
    assert error["code"] == 2 and error["option"] == "--split"
    assert "--split" in error["error"] and "1" in error["error"]


def test_unknown_designs_are_refused_clearly() -> None:
    refused(run("no-such-design"), "unknown design 'no-such-design'", "work-stealing")
    refused(run("work-lane"), "'work-lane' has no simulator", "work-stealing")
