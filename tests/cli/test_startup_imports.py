"""What `lanecheck --help` and `lanecheck validate` import: only what they use.

Start-up time is kept short by not importing: each command's module is imported when it runs,
a design's spec, configurations and mutants when first used (``Design`` fields given as
"module:attribute"), a trace format when a header names it. These tests look at ``sys.modules``
of a fresh interpreter after the command (never at a clock), so they fail when an eager import
comes back.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from model_checks import cli
from model_checks.design import Design

pytestmark = pytest.mark.timeout(120)

TRACE = Path(__file__).resolve().parents[1] / "conformance" / "corpus" / "invalid_r5_lost_wakeup.jsonl"
RUN = """
import json, sys
sys.argv = ["lanecheck", *sys.argv[1:]]
from model_checks.cli import main
try:
    main()
except SystemExit:
    pass
sys.stdout.flush()
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""
# Never needed by listing the commands or by judging a trace.
HEAVY = ("model_checks.explorer", "model_checks.harness", "hypothesis", "model_checks.verify", "reference")
# The spec modules the Work Lane's trace format imports today, for its `spec` engine (see below).
WORK_LANE_SPEC = {"spec", "spec.language", "spec.work_lane", "spec.work_lane_state"}
# Costly libraries neither listing the commands nor judging a trace needs: pydantic (typer's value
# conversion, cli._AsGiven), jsonschema (wording a bad line only), Rich's panels (a terminal only).
NOT_AT_START = (
    "pydantic",
    "pydantic_core",
    "typer._adapters",
    "typer.rich_utils",
    "rich.console",
    "jsonschema",
)
# The built-in commands that are not asked for: their modules (and what they import) stay out.
OTHER_COMMANDS = tuple(
    f"model_checks.commands.{n}" for n in ("report", "serve", "certificate", "verify", "bench")
)
FEATURES = ("model_checks.report", "model_checks.serve", "model_checks.certificate", "starlette", "uvicorn")
SCHEDULE_GATE = Path(__file__).resolve().parents[1] / "gate" / "fixtures" / "surplus_after_idle.jsonl"


def modules_after(*args: str, code: str = RUN) -> tuple[set[str], str]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=100, check=False
    )
    line = done.stderr.rsplit("MODULES ", 1)
    assert len(line) == 2, done.stderr
    return set(json.loads(line[1])), done.stdout


def under(modules: set[str], *prefixes: str) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


def test_help_imports_no_command_no_spec_and_no_checker() -> None:
    modules, out = modules_after("--help")
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line[2:3].strip()]
    assert listed == [*cli.BUILT_IN, "link"], out  # every command, the designs' own too, in plain text
    assert under(modules, *HEAVY, "spec", "model_checks.conformance") == set()
    # the built-in commands' modules are not imported to list them (a design's simulator adds
    # itself to `simulate`, so that group's module comes with it)
    commands = {m for m in under(modules, "model_checks.commands") if m.count(".") == 2}
    assert commands <= {"model_checks.commands.simulate"}, commands
    assert under(modules, *NOT_AT_START, *OTHER_COMMANDS, *FEATURES) == set()


def test_validate_of_a_work_lane_trace_imports_its_format_only() -> None:
    modules, out = modules_after("validate", str(TRACE))
    assert out.startswith("NOT ALLOWED seq 7"), out
    assert under(modules, *HEAVY) == set()
    assert under(modules, "spec") <= WORK_LANE_SPEC, under(modules, "spec")
    # no other command, no other design's trace format, no Rich without a terminal
    commands = {m for m in under(modules, "model_checks.commands") if m.count(".") == 2}
    assert commands == {"model_checks.commands.validate"}
    formats = {m.split(".")[2] for m in under(modules, "model_checks.designs") if m.count(".") >= 3}
    assert formats == {"work_lane"}, formats
    assert under(modules, "rich") == set()
    assert under(modules, "jsonschema") == set()  # a well-formed trace: the schema words nothing
    assert under(modules, *NOT_AT_START[:-1], *OTHER_COMMANDS, *FEATURES) == set()


def test_validate_of_a_schema_checked_header_imports_no_jsonschema() -> None:
    """A header the fast reading finds conforming needs no jsonschema (trace_schema.conforms)."""
    modules, out = modules_after("validate", str(SCHEDULE_GATE))
    assert out.startswith("ALLOWED"), out
    assert under(modules, "pydantic", "typer._adapters", "rich", *OTHER_COMMANDS, *FEATURES) == set()
    assert under(modules, "jsonschema") == set()


def test_a_value_that_needs_converting_is_still_converted_and_refused() -> None:
    """cli._AsGiven passes only text through: typer's own conversion still refuses a bad number."""
    modules, out = modules_after("validate", "--json", "--jobs", "x", str(SCHEDULE_GATE))
    error = json.loads(out.strip().splitlines()[-1])
    assert error["code"] == 2 and error["option"] == "--jobs" and "integer" in error["error"], out
    assert "pydantic" in modules  # converted by typer, through pydantic, as before


def test_validate_with_the_fast_engine_imports_no_spec() -> None:
    modules, _ = modules_after("validate", str(TRACE))
    assert under(modules, "spec") == set()


def test_listing_the_designs_imports_no_spec() -> None:
    code = (
        "import json, sys\nfrom model_checks import registry\nnames = list(registry.designs())\n"
        "sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
    )
    modules, _ = modules_after(code=code)
    assert under(modules, "spec", "model_checks.mutant", *HEAVY) == set()
    # ... and each built-in design still gives its spec, configurations and mutants when asked
    checked = modules_after(
        code="import json, sys\nfrom model_checks import registry\n"
        "for d in registry.designs().values():\n"
        "    assert d.spec.name and d.configs[d.standard] is not None and isinstance(dict(d.mutants), dict)\n"
        "sys.stderr.write('MODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
    )[0]
    assert "spec.work_lane" in checked and "spec.work_stealing" in checked


def test_the_listed_summary_is_each_command_s_own_help() -> None:
    """``BUILT_IN`` repeats each command's first help paragraph so that listing imports nothing."""
    for name in cli.BUILT_IN:
        built = cli.build_builtin(name)[name]
        own = inspect.cleandoc(built.help or "").split("\n\n")[0].replace("\n", " ").strip()
        assert own == cli.BUILT_IN[name].summary, name


def test_a_design_field_may_name_its_value() -> None:
    from spec.work_lane import SPEC

    sys.modules.pop("colorsys", None)  # a small standard module, to see when it is imported
    lazy = Design(name="x", spec="spec.work_lane:SPEC", configs={"small": 1}, mutants="colorsys:__dict__")
    assert "colorsys" not in sys.modules  # named, not imported
    names: Any = lazy.mutants  # (a module's namespace standing in for a mapping of mutants)
    assert names["ONE_THIRD"] == 1.0 / 3.0 and "colorsys" in sys.modules  # imported when read
    assert lazy.mutants is lazy.mutants and lazy.spec is SPEC  # resolved once
    assert lazy.configs == {"small": 1}  # a value given is the value
    with pytest.raises(ModuleNotFoundError):
        _ = Design(name="y", spec="no_such_module_here:SPEC", configs={}, mutants={}).spec
    with pytest.raises(TypeError, match="spec"):
        Design(name="z")  # the lazy fields are required (mypy cannot see that through the descriptor)


def test_the_fast_header_reading_says_conforms_only_when_jsonschema_does() -> None:
    """``trace_schema.conforms`` lets a header skip jsonschema: it must never pass one jsonschema refuses."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    from model_checks.conformance.trace_schema import TraceSchema, conforms

    schema = TraceSchema("model_checks.designs.event_pool", "event-pool")
    doc = schema.document()
    good = {"trace": "lanecheck", "version": 1, "design": "event-pool", "config": {"threads": 2}}
    bad = [
        {**good, "version": True},  # a boolean is not the number 1 to JSON Schema
        {**good, "version": 2},
        {**good, "design": "work-lane"},
        {**good, "config": {"threads": 0}},
        {**good, "config": {"threads": 65537}},
        {**good, "config": {"threads": "2"}},
        {**good, "config": {}},
        {k: v for k, v in good.items() if k != "config"},
        [good],
    ]
    unsure = [{**good, "config": {"threads": 2.0}}]  # an integer to JSON Schema: left to jsonschema
    root = {"$schema": doc["$schema"], "$defs": doc["$defs"], "$ref": "#/$defs/header"}
    check = Draft202012Validator(root)
    assert conforms(doc["$defs"]["header"], good, doc["$defs"]) and check.is_valid(good)
    assert schema.header_problem(good) is None
    for obj in [*bad, *unsure]:
        assert not conforms(doc["$defs"]["header"], obj, doc["$defs"]), obj
        assert (schema.header_problem(obj) is None) == check.is_valid(obj), obj
    assert schema.header_problem(unsure[0]) is None  # jsonschema decided
    assert (
        schema.header_problem(bad[0])
        == "not a lanecheck event-pool header: version: true where 1 was expected"
    )
    # a keyword it does not know is never taken as satisfied
    assert not conforms({"pattern": "^x$"}, "x", {}) and not conforms({"$ref": "#/$defs/none"}, 1, {})
