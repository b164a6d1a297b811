"""Fuzz the `lanecheck` command line: every command, random argument vectors.

Argument vectors are drawn from each command's real option names (and a few bogus ones), with
values of the wrong type, extreme and non-finite numbers, odd Unicode, replay strings with huge
repeat counts, ``--custom`` scenarios, and paths that are files, directories, missing, or under a
file. The property: the exit code is one the command documents, nothing escapes as an exception
other than ``SystemExit`` (no traceback, no "internal error"), and a usage error under ``--json``
is printed as a JSON object.

Only the validation layer is fuzzed: each command's work function is replaced (module fixture
``stubbed``) by one that ends the command with exit 0 as soon as it is reached, so no argument
vector starts a real search, and every example finishes in milliseconds. ``explore``'s stub
still decodes ``--replay`` (the replay bound is part of what is fuzzed); ``validate`` runs for real
on small files (it is fast, and its input handling is under test too).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from model_checks.cli import app
from tests.fuzz.conftest import PROFILE

# documented exit codes, by command path
CODES: dict[tuple[str, ...], set[int]] = {
    ("check",): {0, 1, 2, 3},
    ("verify",): {0, 1, 2, 3},
    ("diagram",): {0, 2},
    ("explore",): {0, 1, 2, 3},
    ("validate",): {0, 1, 2},
    ("traces", "export"): {0, 1, 2},
    ("link", "compare"): {0, 1, 2, 3},
    ("link", "mbt"): {0, 1, 2, 3},
    ("certificate", "check"): {0, 1, 2},
    **{
        ("bench", name): {0, 2}
        for name in ("scheduler", "explorer", "harness", "harness-ab", "validate", "designs")
    },
}
BOGUS_OPTIONS = ["--bogus", "--json", "--help", "-c", "--", "-"]


def _commands() -> dict[tuple[str, ...], list[tuple[str, bool]]]:
    """Every leaf command with its option names (and whether each takes a value), from the real CLI."""
    found: dict[tuple[str, ...], list[tuple[str, bool]]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
            return
        names: list[tuple[str, bool]] = []
        for param in command.params:
            takes_value = not getattr(param, "is_flag", False)
            names += [(n, takes_value) for n in [*param.opts, *getattr(param, "secondary_opts", [])]]
        found[path] = [(n, v) for n, v in names if n.startswith("-")]

    walk(typer.main.get_command(app), ())
    return found


ALL_COMMANDS = _commands()
# Commands that do real work even at valid values (a job worker polls its store; a simulation or a
# design's benchmark at the edge of its ranges runs for minutes; `serve` listens on a port until
# stopped; `report` runs the verify plan and lays out every design's graphs): their argument errors
# are tested in their own tests (tests/jobs/test_cli.py, tests/work_stealing/test_simulator.py,
# tests/*/test_bench*.py, tests/serve/test_command.py, the report's tests).
NOT_FUZZED_GROUPS = ("jobs", "simulate", "serve", "report")
BENCHES_OF_DESIGNS = (
    "schedule-gate", "akka-mailbox", "akka-vs-pykka", "work-stealing", "work-stealing-simulator",
    "work-stealing-trace", "event-pool", "event-pool-trace", "jobs", "jobs-soak", "work-lane-lockfree-trace",
)  # fmt: skip
# `bench all` reruns every benchmark at any valid values (its refusals: tests/bench/test_bench_docs.py).
EVERY_BENCH = ("bench", "all")


def _fuzzed(path: tuple[str, ...]) -> bool:
    return path in CODES


COMMANDS = {path: options for path, options in ALL_COMMANDS.items() if _fuzzed(path)}
NAMES = [
    "work-lane", "schedule-gate", "akka-mailbox", "small", "standard", "large", "lane", "worker",
    "counter-locked", "counter-racy", "work-lane/lane-at-capacity", "schedule-gate/one-producer",
    "1x1-2w", "small", "dpor", "pct", "random", "dfs", "threads", "greenlet", "post,invoke", "post",
    "spec", "harness",
]  # fmt: skip
NUMBERS = ["0", "-1", "1", "2", "nan", "NaN", "inf", "-inf", "1e400", "1.5", "0x10", "True", "", " ", "١"]


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("fuzz-cli")
    (root / "file").write_text("not a trace\n")
    (root / "empty").write_text("")
    (root / "dir").mkdir()
    (root / "full").mkdir()
    (root / "full" / "x").write_text("x")
    corpus = Path(__file__).parents[1] / "conformance" / "corpus" / "valid_basic_drain.jsonl"
    return {
        "file": str(root / "file"),
        "empty": str(root / "empty"),
        "dir": str(root / "dir"),
        "full": str(root / "full"),
        "missing": str(root / "missing" / "deeper"),
        "under-file": str(root / "file" / "sub"),
        "trace": str(corpus),
        "blank": "",
        "new": str(root / "fresh" / "export"),
    }


@pytest.fixture(scope="module", autouse=True)
def stubbed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Replace every command's work by an immediate exit 0 (see the module docstring)."""
    from hypothesis import stateful

    from model_checks.commands import bench, check, diagram, explore, traces, verify
    from model_checks.designs.work_lane.link import model_based, spec_to_impl
    from model_checks.harness.schedule import Schedule

    def reached(*_: object, **__: object) -> Any:
        raise typer.Exit(0)

    def explore_check(program: object, options: Any, **_: object) -> Any:
        if options.replay is not None:
            Schedule.decode(options.replay)
        raise typer.Exit(0)

    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("cwd"))  # a relative path drawn below lands here
        mp.setattr(check, "run_check", reached)
        mp.setattr(explore, "check", explore_check)
        mp.setattr(spec_to_impl, "compare", reached)
        mp.setattr(spec_to_impl, "compare_by_automaton", reached)
        mp.setattr(model_based, "machine_for", lambda *a, **k: None)
        mp.setattr(stateful, "run_state_machine_as_test", lambda *a, **k: None)
        mp.setattr(traces, "export", lambda *a, **k: [])
        mp.setattr(diagram, "projected_edges", reached)
        mp.setattr(verify, "collect", reached)
        mp.setattr(verify, "collect_timed", reached)  # what the command calls
        mp.setattr(bench, "run_bench", lambda *a, **k: {"figure": 1})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield


def values(places: dict[str, str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(NUMBERS),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.text(max_size=24),
        st.sampled_from(NAMES),
        st.sampled_from(sorted(places.values())),
        st.integers(min_value=0, max_value=10**15).map(lambda n: f"lc1.0000.000000.0*{n},1"),
        st.lists(st.sampled_from(["0", "1", "x"]), max_size=6).map(lambda s: "lc1.a.b." + ",".join(s)),
        st.builds(
            lambda k, v: f"{k}={v}",
            st.sampled_from(["lanes", "workers", "capacity", "budget", "script", "stops", "bogus"]),
            st.one_of(
                st.sampled_from(["1", "0", "00+0x", "drain/discard", "1000000000", "", "٣"]),
                st.text(max_size=8),
            ),
        ),
    )


# values each option accepts (anything else: small numbers)
VALID = {
    "--config": ["small"],
    "-c": ["small"],
    "--component": ["lane", "worker", "gate"],
    "--strategy": ["dpor", "dpor-ipb", "pct", "random"],
    "--backend": ["greenlet", "threads"],
    "--observe": ["post,invoke", "post", "take"],
    "--custom": ["lanes=1,workers=1,capacity=1,budget=1,script=0", "lanes=2,script=01+x,stops=drain"],
    "--design": ["work-lane", "schedule-gate", "akka-mailbox"],
    "--engine": ["fast", "spec"],
    "--area": ["spec", "harness"],
    "--replay": ["lc1.0000.000000.0,1", "lc1.0000.000000.0*3"],
}

# the names a command's first argument is usually one of
FIRST = {
    ("check",): ["work-lane", "schedule-gate", "akka-mailbox"],
    ("diagram",): ["work-lane", "schedule-gate", "akka-mailbox"],
    ("explore",): ["counter-locked", "work-lane/lane-at-capacity", "schedule-gate/one-producer"],
    ("link", "compare"): ["1x1-2w", "small", "2x1-budget1"],
}


@st.composite
def argv(draw: st.DrawFn, places: dict[str, str]) -> tuple[tuple[str, ...], list[str]]:
    """A loose vector: real options, junk tokens, in any order (the parser's own robustness)."""
    benches = sorted(p for p in COMMANDS if p[0] == "bench")
    others = sorted(p for p in COMMANDS if p[0] != "bench")
    path = draw(st.sampled_from([*others, ("link", "compare"), ("bench",)]))
    if path == ("bench",):
        path = draw(st.sampled_from(benches))
    real = [name for name, _ in COMMANDS[path]]
    anything = values(places)
    head = draw(
        st.one_of(
            st.sampled_from(FIRST.get(path, sorted(places.values()))).map(lambda n: [n]),
            st.just([]),
            anything.map(lambda v: [v]),
        )
    )

    def value_for(option: str) -> st.SearchStrategy[str]:
        return st.one_of(st.sampled_from(VALID.get(option, ["1", "2", "0.5"])), anything)

    pair = st.sampled_from(COMMANDS[path]).flatmap(
        lambda opt: value_for(opt[0]).map(lambda v: [opt[0], v]) if opt[1] else st.just([opt[0]])
    )
    junk = st.one_of(st.sampled_from(BOGUS_OPTIONS + real), anything).map(lambda t: [t])
    groups = draw(st.lists(pair, min_size=1, max_size=4)) + draw(st.lists(junk, max_size=2))
    groups = draw(st.permutations(groups))
    return path, [*path, *head, *(token for group in groups for token in group)]


# -------------------------------------------------------------- vectors built from the parameters


def _leaves() -> dict[tuple[str, ...], Any]:
    found: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        else:
            found[path] = command

    walk(typer.main.get_command(app), ())
    return found


LEAVES = _leaves()
# a valid positional for each command that takes one ({new}: a path that does not exist yet)
POSITIONAL = {
    ("check",): "work-lane",
    ("diagram",): "work-lane",
    ("explore",): "counter-locked",
    ("validate",): "{trace}",
    ("traces", "export"): "{new}",
    ("link", "compare"): "1x1-2w",
}
VALID_MULTI = {"--area": ["spec", "harness"], "--design": ["work-lane", "schedule-gate"]}


def _numeric(param: Any) -> type | None:
    annotation = param.type_descriptor.annotation
    return annotation if annotation in (int, float) else None


def _bounded_values(param: Any) -> st.SearchStrategy[str]:
    """Values around and beyond the declared range of a numeric option (and non-numbers)."""
    low, high = param.min, param.max
    kind = _numeric(param)
    edges = [str(v) for v in (low, high) if v is not None]
    beyond = [
        str(v) for v in ((low - 1) if low is not None else None, (high + 1) if high is not None else None)
    ]
    ints = st.integers(
        min_value=(low if low is not None else -(2**70)) - 5,
        max_value=(high if high is not None else 2**70) + 5,
    )
    choices = [
        st.sampled_from([*edges, *[b for b in beyond if b != "None"]]),
        ints.map(str),
        st.sampled_from(["-1", "-5", str(2**64), str(10**30), "nan", "inf", "-inf", "1e400", "x", "", "١"]),
    ]
    if kind is float:
        choices.append(st.floats(allow_nan=True, allow_infinity=True).map(repr))
    return st.one_of(*choices)


def _out_of_range(param: Any, text: str) -> bool | None:
    """True if ``text`` is a number the option must refuse, False if it must take it, None if not a
    plain number. Beyond the declared range, every numeric option refuses what no count or time
    can be: negatives, NaN, infinities and numbers past 2**63 (a rule of its own, so that a range
    check removed from an option is still caught)."""
    kind = _numeric(param)
    try:
        value: float = int(text, 10) if kind is int else float(text)
    except ValueError:
        return None
    if kind is int and not text.strip().lstrip("-").isascii():
        return None  # int() takes other digits; click may or may not: only the error class is checked
    if math.isnan(value) or math.isinf(value) or value < 0 or abs(value) > 2**63:
        return True
    return (param.min is not None and value < param.min) or (param.max is not None and value > param.max)


def _valid_value(option: str, param: Any) -> str:
    if option in VALID:
        return VALID[option][0]
    if option in VALID_MULTI:
        return VALID_MULTI[option][0]
    if _numeric(param) is not None:
        low = param.min if param.min is not None else 1
        return str(max(low, 1) if param.max is None or param.max >= 1 else low)
    return "x"


@st.composite
def targeted(draw: st.DrawFn, places: dict[str, str]) -> tuple[tuple[str, ...], list[str], Any, str]:
    """A well-formed vector of one command aiming at one option: its positional (valid), a few
    other options with valid values, and the target option with a hostile value."""
    # only the commands in CODES: the others run real work at valid edges (a job worker polls a
    # store, a simulation of 10^8 tasks, a full benchmark), so their ranges are tested in their own tests
    path = draw(st.sampled_from(sorted(p for p in LEAVES if p in CODES)))
    command = LEAVES[path]
    options = [
        p for p in command.params if p.param_type_name == "option" and not getattr(p, "is_flag", False)
    ]
    flags = [p for p in command.params if getattr(p, "is_flag", False) and "--help" not in p.opts]
    head = [POSITIONAL[path].format(**places)] if path in POSITIONAL else []
    tokens: list[str] = []
    for flag in draw(st.lists(st.sampled_from(flags), max_size=2, unique_by=id)) if flags else []:
        if not {"--list", "--docs", "--tlc", "--ci", "--all"} & set(flag.opts):  # each changes the job
            tokens.append(flag.opts[0])
    if not options:
        return path, [*path, *head, *tokens], None, ""
    target = draw(st.sampled_from(options))
    for other in draw(st.lists(st.sampled_from(options), max_size=3, unique_by=id)):
        if other is not target:
            tokens += [other.opts[0], _valid_value(other.opts[0], other)]
    name = draw(st.sampled_from(target.opts))
    if _numeric(target) is not None:
        value = draw(_bounded_values(target))
    else:
        value = draw(
            st.one_of(st.sampled_from(VALID.get(name, VALID_MULTI.get(name, ["x"]))), values(places))
        )
    tokens += [name, value]
    return path, [*path, *head, *tokens], target, value


def check_targeted(path: tuple[str, ...], args: list[str], target: Any, value: str) -> None:
    result = check_one(path, args)
    if target is None or _numeric(target) is None:
        return
    verdict = _out_of_range(target, value)
    if verdict:
        assert result.exit_code == 2, (args, "an out-of-range value was accepted", result.output)
        assert any(opt in result.output for opt in target.opts), (args, result.output)
    elif verdict is False and result.exit_code == 2:
        # refused for another reason: never for the range of this option
        assert "not in the range" not in result.output or not any(
            opt in result.output for opt in target.opts
        ), (args, result.output)


def test_every_numeric_option_is_bounded() -> None:
    """A range check removed from an option shows here before any fuzzing."""
    loose = [
        (path, param.opts[0])
        for path, command in LEAVES.items()
        for param in command.params
        if _numeric(param) is not None and (param.min is None or param.max is None)
    ]
    assert not loose, loose


def check_one(path: tuple[str, ...], args: list[str]) -> Any:
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
    assert result.exit_code in CODES[path], (args, result.exit_code, result.output)
    assert "internal error" not in result.output and "Traceback" not in result.output, (args, result.output)
    end = args.index("--") if "--" in args else len(args)
    if result.exit_code == 2 and "--json" in args[:end] and path != ("validate",):
        # validate's own usage errors are printed by validate.py (not this layer)
        last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
        if "--help" not in args[:end]:
            assert json.loads(last)["code"] == 2, (args, result.output)
    return result


def test_every_command_is_fuzzed() -> None:
    assert set(COMMANDS) == set(CODES)
    left_out = {path for path in ALL_COMMANDS if not _fuzzed(path)}
    design_benches = {("bench", name) for name in BENCHES_OF_DESIGNS}
    assert left_out == {p for p in ALL_COMMANDS if p[0] in NOT_FUZZED_GROUPS} | design_benches | {EVERY_BENCH}


def _fuzz(drawn: st.SearchStrategy[tuple[Any, ...]], check: Callable[..., object], examples: int) -> None:
    """Run ``check`` on ``examples`` draws, under the module's profile."""

    @settings(parent=settings.get_profile(PROFILE), max_examples=examples)
    @given(drawn)
    def prop(args: tuple[Any, ...]) -> None:
        check(*args)

    prop()


CI_EXAMPLES = settings.get_profile(PROFILE).max_examples
# Each property: its draws, its check, and how many times the profile's examples it runs in CI.
Property = tuple[Callable[[dict[str, str]], st.SearchStrategy[Any]], Callable[..., object], int]
PROPERTIES: dict[str, Property] = {
    "arguments": (argv, check_one, 5),
    "options-one-at-a-time": (targeted, check_targeted, 3),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("prop", list(PROPERTIES))
def test_fuzz_cli(places: dict[str, str], prop: str) -> None:
    drawn, check, times = PROPERTIES[prop]
    _fuzz(drawn(places), check, CI_EXAMPLES * times)


@pytest.mark.soak
@pytest.mark.timeout(3600)
@pytest.mark.parametrize("prop", list(PROPERTIES))
def test_fuzz_cli_soak(places: dict[str, str], prop: str) -> None:
    drawn, check, _ = PROPERTIES[prop]
    _fuzz(drawn(places), check, 20_000)
