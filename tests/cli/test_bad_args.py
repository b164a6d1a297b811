"""Bad input at the `lanecheck` command line: each refused with exit 2 and a message naming it.

One regression test per case found by probing the CLI (issue 14), plus the explore listing and the
progress display of issue 15. Everything goes through the real root command (``model_checks.cli``),
so the central error handler is part of what is tested.
"""

from __future__ import annotations

import io
import json
import resource
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from model_checks import commands, progress
from model_checks.cli import app
from model_checks.commands import check as check_command
from model_checks.commands import traces as traces_command
from model_checks.conformance import export as export_module
from model_checks.conformance import validate_file
from model_checks.harness.schedule import MAX_REPLAY_STEPS, Schedule, ScheduleFormatError
from tests.helpers.cli import bad_option, refused

runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, list(args))


# ----------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "command_line",
    [
        "check work-lane --workers 300",
        "check work-lane --workers 0",
        "check work-lane --time-limit -1",
        "check work-lane --time-limit nan",
        "check work-lane --time-limit inf",
        "check work-lane --max-states -5",
        "check work-lane --max-depth -1",
        "explore counter-locked --max-steps 0",
        "explore counter-locked --max-executions 0",
        "explore counter-locked --preemption-bound -1",
        "explore counter-locked --time-limit nan",
        "explore counter-locked --seed -1",
        "link compare 1x1-2w --time-limit -1",
        "link compare 1x1-2w --max-executions 0",
        "link compare 1x1-2w --show -1",
        "link compare small --automaton --pct-depth 0",
        "link mbt --examples 0",
        "link mbt --lanes 1000000000",
    ],
)
def test_numbers_out_of_range_are_refused_naming_the_option(command_line: str) -> None:
    args, option = bad_option(command_line)
    refused(run(*args), option)


def test_workers_are_bounded_by_the_open_file_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # each pair of processes holds a socket pair: 20 processes need 380 descriptors
    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, 256))
    limit = commands.worker_limit()
    assert 1 <= limit < 20 and limit * (limit - 1) <= 256
    refused(run("check", "work-lane", "--workers", "20", "--no-liveness"), "--workers", f"({limit}:")


def test_explorer_options_refuse_meaningless_bounds() -> None:
    from model_checks.explorer.search import Options

    for bad in ({"max_states": -5}, {"max_depth": -1}, {"time_limit": float("nan")}, {"workers": True}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Options(**bad)


# ----------------------------------------------------------------------------- replay strings


def test_replay_with_a_huge_repeat_count_is_refused_before_expanding() -> None:
    result = run("explore", "counter-locked", "--replay", "lc1.0000.000000.0*99999999999")
    refused(result, "--replay", f"{MAX_REPLAY_STEPS:,}")


@pytest.mark.parametrize(
    "text",
    [
        "lc1.a.b.0*99999999999",
        "lc1.a.b." + ",".join(["0*999999", "1*999999"]),  # each run allowed, the total not
        "lc1.a.b.0*0",
        "lc1.a.b.0*-5",
        "lc1.a.b.+1",
        "lc1.a.b.zzzzz",
        "lc1.a.b." + "0," * (MAX_REPLAY_STEPS * 6),
    ],
)
def test_schedule_decode_limits(text: str) -> None:
    with pytest.raises(ScheduleFormatError):
        Schedule.decode(text)


def test_schedule_decode_still_round_trips() -> None:
    s = Schedule("3fa2", "91c0de", ((0, 0),) * 4 + ((1, 0), (2, 1), (1, 0), (1, 0)))
    assert Schedule.decode(s.encode()) == s


# ----------------------------------------------------------------------------- link


def test_link_observe_of_an_unknown_event_is_refused() -> None:
    refused(run("link", "compare", "1x1-2w", "--observe", "bogus"), "--observe", "bogus", "post")


@pytest.mark.parametrize(
    ("custom", "words"),
    [
        ("lanes=1000000000", ["lanes", "1 to 4"]),
        ("workers=5", ["workers", "1 to 4"]),
        ("capacity=0", ["capacity"]),
        ("script=00000", ["5 posts", "limit is 4"]),
        ("script=0+0+0+0+0", ["5 producers"]),
        ("stops=drain/drain/drain/drain", ["4 stops"]),
        ("lanes=1,lanes=2", ["twice"]),
        ("lanes=١", ["lanes"]),  # an Arabic-Indic digit is not a lane count
    ],
)
def test_link_custom_fields_are_bounded(custom: str, words: list[str]) -> None:
    refused(run("link", "compare", "--custom", custom), "--custom", *words)


# ----------------------------------------------------------------------------- traces export


def test_export_refuses_an_empty_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    refused(run("traces", "export", ""), "DIR", "empty")
    assert not any(tmp_path.iterdir())


def test_export_refuses_a_file_and_a_path_under_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("keep me")
    refused(run("traces", "export", str(target)), "is a file")
    refused(run("traces", "export", str(target / "sub")), "is a file", "under it")
    assert target.read_text() == "keep me"


def test_export_refuses_an_unwritable_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (root may write anywhere, so the permission check is made to say no)
    monkeypatch.setattr("model_checks.commands.traces.os.access", lambda *_: False)
    refused(run("traces", "export", str(tmp_path / "new")), "permission denied")
    assert not (tmp_path / "new").exists()


def test_export_turns_an_os_refusal_into_a_named_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied", str(tmp_path / "new"))

    monkeypatch.setattr(traces_command, "export", refuse)
    refused(run("traces", "export", str(tmp_path / "new")), "cannot write", "Permission denied")


def test_export_refuses_a_non_empty_directory_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("mine")
    stale = tmp_path / "work-lane-small-999.jsonl"
    stale.write_text("an earlier export's file")
    refused(run("traces", "export", str(tmp_path)), "not empty", "--force")
    assert stale.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt", stale.name]
    result = run("traces", "export", str(tmp_path), "--force")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "mine.txt").read_text() == "mine"  # other files are left alone
    assert not stale.exists()  # the earlier export's files are replaced, not mixed in
    written = sorted(tmp_path.glob("work-lane-small-*.jsonl"))
    assert written and all(validate_file(p).code == 0 for p in written)
    assert not list(tmp_path.glob(".lanecheck-export-*"))


@pytest.mark.parametrize("design", ["schedule-gate", "akka-mailbox"])
def test_export_writes_each_designs_own_header(tmp_path: Path, design: str) -> None:
    target = tmp_path / "out"
    result = run("traces", "export", str(target), "--design", design)
    assert result.exit_code == 0, result.output
    files = sorted(target.glob("*.jsonl"))
    assert files
    for path in files:
        head = json.loads(path.read_text().splitlines()[0])
        assert head["design"] == design
        assert validate_file(path, complete=True).code == 0


def test_export_that_fails_its_own_check_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from model_checks.conformance import validator

    real = validator.validate_lines
    calls = [0]

    def second_fails(lines: Any, *args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(["not json"] if calls[0] == 2 else lines, *args, **kwargs)

    monkeypatch.setattr(validator, "validate_lines", second_fails)
    target = tmp_path / "out"
    result = run("traces", "export", str(target))
    assert result.exit_code == 1 and "does not validate" in result.output, result.output
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_write_all_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Path.write_text
    written = [0]

    def fail_second(self: Path, *args: Any, **kwargs: Any) -> int:
        written[0] += 1
        if written[0] == 2:
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", fail_second)
    with pytest.raises(OSError):
        export_module.write_all(tmp_path / "out", {"a.jsonl": "1\n", "b.jsonl": "2\n"})
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- usage errors and --json


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["check", "--json"], None),
        (["check", "work-lane", "--workers", "0", "--json"], "--workers"),
        (["check", "no-such-design", "--json"], None),
        (["explore", "--json"], None),
        (["explore", "no-such-scenario", "--json"], None),
        (["explore", "counter-locked", "--replay", "lc1.a.b.0*99999999999", "--json"], "--replay"),
        (["link", "compare", "--observe", "bogus", "1x1-2w", "--json"], "--observe"),
        (["verify", "--area", "nowhere", "--json"], "--area"),
        (["check", "work-lane", "--bogus", "--json"], None),
    ],
)
def test_usage_errors_with_json_print_one_json_object(args: list[str], option: str | None) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    assert error["code"] == 2 and error["error"]
    if option is not None:
        assert error["option"] == option


def test_usage_error_without_json_is_one_line_on_stderr() -> None:
    result = run("explore", "counter-locked", "--strategy", "bogus")
    refused(result, "--strategy", "bogus")
    assert result.stdout == "" and result.stderr.strip().count("\n") == 0


def test_an_os_error_inside_a_command_is_a_named_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: object, **__: object) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(check_command, "run_check", broken)
    refused(run("check", "work-lane"), "Too many open files")


def test_an_unexpected_exception_is_reported_as_a_bug_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise AttributeError("no such thing")

    monkeypatch.setattr(check_command, "run_check", broken)
    result = run("check", "work-lane")
    assert result.exit_code == 2 and "internal error AttributeError" in result.output
    assert isinstance(result.exception, SystemExit)


def test_output_files_are_checked_before_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: object, **__: object) -> None:
        raise AssertionError("the search ran although its output could not be written")

    monkeypatch.setattr(check_command, "run_check", never)
    refused(run("check", "work-lane", "--mermaid", str(tmp_path)), "--mermaid", "directory")
    refused(
        run("check", "work-lane", "--counterexample", str(tmp_path / "no" / "x.json")), "--counterexample"
    )


# ----------------------------------------------------------------------------- explore listing (issue 15)


def test_explore_without_a_scenario_lists_them_by_design_and_exits_2() -> None:
    result = run("explore")
    refused(result, "no scenario named")
    for group in ("harness examples:", "work-lane:", "schedule-gate:", "akka-mailbox:"):
        assert group in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: ")


def test_explore_list_names_every_designs_scenarios() -> None:
    result = run("explore", "--list", "--json")
    assert result.exit_code == 0, result.output
    groups = json.loads(result.stdout)
    assert {"harness examples", "work-lane", "schedule-gate", "akka-mailbox"} <= set(groups)
    assert "schedule-gate/mutant/check-then-act" in groups["schedule-gate"]
    assert "akka-mailbox/mutant/no-recheck" in groups["akka-mailbox"]
    text = run("explore", "--list")
    assert text.exit_code == 0 and "akka-mailbox/supervised" in text.stdout


@pytest.mark.timeout(120)
def test_explore_runs_a_gate_and_an_akka_scenario_from_the_list() -> None:
    caught = run("explore", "schedule-gate/mutant/check-then-act", "--time-limit", "30", "--json")
    assert caught.exit_code == 1, caught.output
    assert json.loads(caught.stdout)["failure"]["kind"] == "lost_wakeup"
    akka = run(
        "explore", "akka-mailbox/supervised", "--preemption-bound", "1", "--max-executions", "200", "--json"
    )
    assert akka.exit_code in (0, 3), akka.output
    assert json.loads(akka.stdout)["failure"] is None


def test_unknown_scenario_suggests_near_names() -> None:
    refused(run("explore", "counter-lockd"), "counter-locked")


# ----------------------------------------------------------------------------- progress (issue 15)


def test_progress_figures_name_rate_preemptions_and_bounds() -> None:
    text = progress.execution_figures(500, 2.0, 3, max_executions=1000, time_limit=10)
    assert "500 executions (250/s)" in text and "max 3 preemptions" in text
    assert "500/1,000 executions" in text and "2/10 s" in text
    assert progress.execution_figures(5, 1.0).endswith("no bound")


def test_progress_shows_on_a_terminal_and_never_without_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "REFRESH", 0.0)
    quiet = io.StringIO()
    with progress.executions(Console(file=quiet), "x") as tick:
        assert tick is None
    with progress.executions(Console(file=quiet, force_terminal=True), "x", enabled=False) as tick:
        assert tick is None  # --json
    shown = io.StringIO()
    with progress.executions(
        Console(file=shown, force_terminal=True, width=200), "scenario", max_executions=10
    ) as tick:
        assert tick is not None
        tick(7, 2)
    assert "7 executions" in shown.getvalue() and "7/10 executions" in shown.getvalue()
    assert quiet.getvalue() == ""


def test_explore_json_stays_quiet() -> None:
    result = run("explore", "counter-locked", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verdict"] == "exhaustive"
    assert result.stderr == ""


def test_link_counts_executions_for_its_progress() -> None:
    from model_checks.designs.work_lane.link_command import _counting_build

    seen: list[int] = []
    build = _counting_build(lambda n, _: seen.append(n))
    assert _counting_build(None) is not build
    from model_checks.designs.work_lane.link.scenario import LINK_SCENARIOS
    from model_checks.designs.work_lane.link.spec_to_impl import compare

    c = compare(LINK_SCENARIOS["1x1-2w"], build=build)
    assert seen and seen[-1] == c.executions and seen == list(range(1, c.executions + 1))


def test_typer_is_the_one_doing_range_checks() -> None:
    # the layer relies on typer refusing NaN when a bound is set: if typer changes, this says so
    probe = typer.Typer()

    @probe.command()
    def one(x: Annotated[float, commands.seconds("t")] = 1.0) -> None:
        return None

    assert runner.invoke(probe, ["--x", "nan"]).exit_code == 2


# -- found by the rerun of the probe (tests/fuzz/probe_bad_input/) ---------------------------------


@pytest.mark.parametrize("design", ["job-pool"])
def test_export_of_a_design_without_a_trace_format_is_refused(design: str, tmp_path: Path) -> None:
    result = run("traces", "export", str(tmp_path / "out"), "--design", design)
    refused(result, design, "no trace format")
    assert not (tmp_path / "out").exists()


def test_export_of_a_design_whose_spec_gives_no_trace_header_is_refused(tmp_path: Path) -> None:
    # admission's traces come from the job store; its spec's constants cannot write their header.
    result = run("traces", "export", str(tmp_path / "out"), "--design", "admission")
    refused(result, "--design", "no exporter of its own")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["validate", "{missing}", "--json"], None),
        (["validate", "{dir}", "--json"], None),
        (["validate", "-", "--engine", "bogus", "--json"], "--engine"),
    ],
)
def test_validate_usage_errors_honour_json(args: list[str], option: str | None, tmp_path: Path) -> None:
    places = {"{missing}": str(tmp_path / "nope.jsonl"), "{dir}": str(tmp_path)}
    result = run(*[places.get(a, a) for a in args])
    assert result.exit_code == 2, result.output
    doc = json.loads(result.stdout.strip().splitlines()[-1])
    assert doc["code"] == 2 and doc["option"] == option and doc["error"]


@pytest.mark.timeout(30)
@pytest.mark.parametrize("custom", ["", " ", ",,"])
def test_an_empty_custom_scenario_is_refused_not_run_as_the_default(custom: str) -> None:
    refused(run("link", "compare", "--custom", custom), "--custom", "script")


@pytest.mark.parametrize("replay", ["", "  "])
def test_an_empty_replay_is_refused_not_taken_as_no_replay(replay: str) -> None:
    refused(run("explore", "counter-locked", "--replay", replay), "--replay", "empty")
