"""`lanecheck link` (model_checks/commands/link.py): bigger spec <-> reference runs from the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from model_checks.designs.work_lane.link.scenario import LinkScenario
from model_checks.designs.work_lane.link_command import parse_custom, register
from tests.helpers.cli import command_app

runner = CliRunner()
app = command_app(register)  # the command module on its own, as `lanecheck` registers it


def test_parse_custom() -> None:
    sc = parse_custom("lanes=2,workers=2,capacity=1,budget=2,script=01+x,stops=drain/discard")
    assert sc == LinkScenario(
        lanes=2, workers=2, capacity=1, budget=2, script=((0, 1), (None,)), stops=("drain", "discard")
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("lanes=0", "positive integer"),
        ("script=0y", "lane digits and x"),
        ("lanes=1,script=1", "only 1 lanes"),
        ("stops=halt", "drain/discard"),
        ("colour=red", "unknown key"),
        ("lanes", "key=value"),
    ],
)
def test_parse_custom_rejects_bad_input(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_custom(text)


@pytest.mark.timeout(60)
def test_compare_case_json_exit_ok() -> None:
    result = runner.invoke(app, ["link", "compare", "1x2-full-invalid", "--json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.output)
    assert (row["case"], row["harness"], row["verdict"]) == ("1x2-full-invalid", "exhaustive", "covered")
    assert (row["common"], row["spec_traces"]) == (5, 5)


@pytest.mark.timeout(60)
def test_compare_custom_bounded_exits_3() -> None:
    args = ["link", "compare", "--custom", "lanes=1,workers=1,capacity=1,script=0+0", "--max-executions", "3"]
    result = runner.invoke(app, args)
    assert result.exit_code == 3, result.output
    assert "bounded" in result.output and "max_executions=3" in result.output


@pytest.mark.timeout(60)
def test_compare_projected_custom() -> None:
    args = ["link", "compare", "--custom", "lanes=1,workers=1,capacity=1,script=0x", "--observe", "post"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "exhaustive" in result.output


@pytest.mark.parametrize(
    "args",
    [
        ["link", "compare", "no-such-case"],
        ["link", "compare"],
        ["link", "compare", "--custom", "lanes=x"],
        ["link", "mbt", "--mutant", "no-such-mutant"],
        ["link", "mbt", "--examples", "0"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output


@pytest.mark.timeout(60)
def test_mbt_reference_sample_is_bounded() -> None:
    args = ["link", "mbt", "--lanes", "1", "--workers", "1", "--producers", "1", "--examples", "5"]
    result = runner.invoke(app, [*args, "--steps", "5"])
    assert result.exit_code == 3, result.output
    assert "not a proof" in result.output


@pytest.mark.timeout(120)
def test_compare_by_automaton_reports_and_classifies() -> None:
    done = runner.invoke(app, ["link", "compare", "1x1-stop-discard", "--automaton", "--json"])
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.output)
    assert row["harness"] == "exhaustive" and row["strategy"] == "dpor"
    assert (row["common"], row["spec_traces"]) == (8, 10)
    assert row["spec_only_by_class"] == {"discard-before-take": 2}
    assert 0 < row["realised_steps"] < row["spec_steps"]


@pytest.mark.timeout(120)
def test_the_states_strategy_gives_the_reachable_steps() -> None:
    done = runner.invoke(
        app, ["link", "compare", "1x2-full-invalid", "--automaton", "--strategy", "states", "--json"]
    )
    assert done.exit_code == 0, done.output
    (row,) = json.loads(done.output)
    assert row["harness"] == "exhaustive" and row["strategy"] == "states"
    assert row["reachable_steps"] == row["realised_steps"] > 0
    cut = runner.invoke(
        app,
        [
            "link",
            "compare",
            "1x2-full-invalid",
            "--automaton",
            "--strategy",
            "states",
            "--max-executions",
            "2",
        ],
    )
    assert cut.exit_code == 3, cut.output  # a cut search proves no reachable figure


@pytest.mark.timeout(120)
def test_small_is_compared_by_automaton_only_and_bounded() -> None:
    listed = runner.invoke(app, ["link", "compare", "small"])
    assert listed.exit_code == 3 and "--automaton" in listed.output
    sampled = runner.invoke(
        app, ["link", "compare", "small", "--automaton", "--strategy", "pct", "--max-executions", "50"]
    )
    assert sampled.exit_code == 3, sampled.output  # bounded: never a pass
    assert "1,282,626,087 spec traces" in sampled.output and "0 impl-only" in sampled.output
    wrong = runner.invoke(app, ["link", "compare", "small", "--automaton", "--strategy", "bfs"])
    assert wrong.exit_code == 2 and "use dpor, pct, random, coverage" in wrong.output
