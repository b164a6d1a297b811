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
import warnings
from collections.abc import Iterator
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
    **{("bench", name): {0, 2} for name in ("scheduler", "explorer", "harness", "validate", "designs")},
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


COMMANDS = _commands()
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
    "--strategy": ["dpor", "pct", "random"],
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
    # each command about equally often (the five benches share one share; compare, with most
    # options, gets two)
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
            st.sampled_from(FIRST.get(path, sorted(places.values()))).map(lambda n: [n]),
            st.just([]),
            anything.map(lambda v: [v]),
        )
    )

    # mostly well-formed pairs of a real option and a value, so that each option's check is
    # reached; sometimes a junk token anywhere
    # a value the option accepts, half the time: the checks after the first one get reached
    def value_for(option: str) -> st.SearchStrategy[str]:
        return st.one_of(st.sampled_from(VALID.get(option, ["1", "2", "0.5"])), anything)

    pair = st.sampled_from(COMMANDS[path]).flatmap(
        lambda opt: value_for(opt[0]).map(lambda v: [opt[0], v]) if opt[1] else st.just([opt[0]])
    )
    junk = st.one_of(st.sampled_from(BOGUS_OPTIONS + real), anything).map(lambda t: [t])
    groups = draw(st.lists(pair, min_size=1, max_size=4)) + draw(st.lists(junk, max_size=2))
    groups = draw(st.permutations(groups))
    return path, [*path, *head, *(token for group in groups for token in group)]


def check_one(path: tuple[str, ...], args: list[str]) -> None:
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


def test_every_command_is_fuzzed() -> None:
    assert set(COMMANDS) == set(CODES)


@pytest.mark.timeout(120)
def test_fuzz_cli_arguments(places: dict[str, str]) -> None:
    @settings(
        parent=settings.get_profile(PROFILE), max_examples=settings.get_profile(PROFILE).max_examples * 5
    )
    @given(argv(places))
    def prop(drawn: tuple[tuple[str, ...], list[str]]) -> None:
        check_one(*drawn)

    prop()


@pytest.mark.soak
@pytest.mark.timeout(3600)
def test_fuzz_cli_arguments_soak(places: dict[str, str]) -> None:
    @settings(parent=settings.get_profile(PROFILE), max_examples=20_000)
    @given(argv(places))
    def prop(drawn: tuple[tuple[str, ...], list[str]]) -> None:
        check_one(*drawn)

    prop()
