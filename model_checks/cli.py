"""The `lanecheck` command line: one sub-command per job, each defined in ``model_checks.commands``.

Errors at this boundary never end in a traceback. ``LanecheckGroup.main`` is the one place they
are rendered:

* a usage error (a bad option value, an unknown name, ``CommandError``) exits 2;
* a ``ValueError``, ``OSError``, ``MemoryError`` or ``RecursionError`` escaping a command
  (a path that cannot be written, input too large) exits 2 with one line naming it;
* anything else is a bug in lanecheck: one line saying so, exit 2 (``LANECHECK_TRACEBACK=1``
  re-raises it, with its traceback).

With ``--json`` anywhere on the command line (before a ``--``) such an error is printed on
**stdout** as one JSON object, ``{"error": "<message>", "code": 2, "option": "--name" | null}``,
so that a script reading the JSON output always gets JSON; otherwise it goes to stderr.

Start-up is kept short (``lanecheck --help`` and ``lanecheck validate`` are run often, by scripts
too): a command's module is imported only when that command runs (``BUILT_IN``, ``LanecheckRoot``),
and the designs' own commands only when the name asked for may be one of theirs.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NoReturn

import typer
import typer.main
from typer import _click
from typer._coercion import RuntimeParam, build_runtime_param
from typer.core import TyperCommand, TyperGroup

from model_checks.commands import EXIT_USAGE, CommandError

# Errors a command may raise on bad input or a bad environment: a named error, exit 2.
INPUT_ERRORS = (ValueError, OSError, MemoryError, RecursionError, UnicodeError)


def _wants_json(argv: Sequence[str]) -> bool:
    end = list(argv).index("--") if "--" in argv else len(argv)
    return "--json" in argv[:end]


def _option_of(error: Exception) -> str | None:
    if isinstance(error, CommandError):
        return error.option
    param = getattr(error, "param", None)
    opts = getattr(param, "opts", None)
    if opts:
        return str(max(opts, key=len))
    hint = getattr(error, "param_hint", None)
    return hint if isinstance(hint, str) else None


def _describe(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = f" {error.filename!s}" if error.filename is not None else ""
        return f"{error.strerror}:{where}" if where else error.strerror
    if isinstance(error, MemoryError):
        return "out of memory (the input asks for more than this machine has)"
    if isinstance(error, RecursionError):
        return "input nested too deeply"
    text = str(error) or type(error).__name__
    return text.splitlines()[0] if text.strip() else type(error).__name__


def _fail(message: str, option: str | None, as_json: bool, code: int = EXIT_USAGE) -> NoReturn:
    if as_json:
        sys.stdout.write(json.dumps({"error": message, "code": code, "option": option}) + "\n")
    else:
        sys.stderr.write(f"error: {message}\n")
    sys.exit(code)


class LanecheckGroup(TyperGroup):
    """The root command: runs the chosen command and turns every error into exit 2 and one line."""

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        as_json = _wants_json(argv)
        _all_as_given_root(self)
        try:
            rv = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except CommandError as error:
            _fail(error.format_message(), error.option, as_json)
        except typer.TyperException as error:  # click's own usage errors
            code = int(getattr(error, "exit_code", EXIT_USAGE))
            if as_json:
                _fail(error.format_message(), _option_of(error), as_json, code)
            _show_usage_error(error)
            sys.exit(code)
        except typer.Abort:
            sys.stderr.write("Aborted!\n")
            sys.exit(1)
        except INPUT_ERRORS as error:
            _fail(_describe(error), None, as_json)
        except Exception as error:
            if os.environ.get("LANECHECK_TRACEBACK"):
                raise
            _fail(
                f"internal error {type(error).__name__}: {_describe(error)} (a bug in lanecheck)",
                None,
                as_json,
            )
        if not standalone_mode:
            return rv
        sys.exit(rv if isinstance(rv, int) else 0)


def _show_usage_error(error: typer.TyperException) -> None:
    """As typer shows it (usage line, hint, the message in a panel)."""
    try:
        from typer import rich_utils

        rich_utils.rich_format_error(error)  # type: ignore[arg-type]
    except ImportError:  # typer without rich
        show = getattr(error, "show", None)
        if show is not None:
            show()


@dataclass(frozen=True)
class BuiltIn:
    """A command of ``model_checks.commands``, imported only when it runs (or its own help is asked)."""

    module: str
    # The line `lanecheck --help` shows for it (the first paragraph of the command's own help: a
    # test keeps the two equal), so that listing the commands imports none of them.
    summary: str
    # Each module defines ``register(app)``; the bench module ``register_bench(bench_app)``.
    hook: str = "register"
    # Designs' commands may add to it (``lanecheck simulate DESIGN``): they are loaded first.
    designs_extend: bool = False


BENCH_HELP = "Benchmarks: ratios against baselines measured in the same run."
# In the order `lanecheck --help` lists them; the designs' own commands come after.
BUILT_IN: dict[str, BuiltIn] = {
    "check": BuiltIn(
        "model_checks.commands.check",
        "Explore every reachable state; exit 0 holds, 1 violated, 2 usage/spec error, 3 incomplete.",
    ),
    "verify": BuiltIn(
        "model_checks.commands.verify",
        "Check every spec at its standard configuration, every mutant, the harness and conformance.",
    ),
    "diagram": BuiltIn(
        "model_checks.commands.diagram",
        "Print the state machine of one component, as the spec allows it (Mermaid).",
    ),
    "explore": BuiltIn(
        "model_checks.commands.explore",
        "Explore the interleavings of a built-in scenario under the controlled scheduler.",
    ),
    "validate": BuiltIn(
        "model_checks.commands.validate",
        "Does some behaviour of the spec produce each trace? Exit 0 every trace allowed (or an "
        "allowed prefix), 1 some not allowed, 2 some not well-formed or unreadable.",
    ),
    "bench": BuiltIn("model_checks.commands.bench", BENCH_HELP, hook="register_bench"),
    "traces": BuiltIn("model_checks.commands.traces", "Traces generated from the spec."),
    "simulate": BuiltIn(
        "model_checks.commands.simulate",
        "Step simulators of the designs: `lanecheck simulate DESIGN --help` for one's options.",
        designs_extend=True,
    ),
    "jobs": BuiltIn(
        "model_checks.commands.jobs", "A job queue with resource-aware admission (docs/jobs.md)."
    ),
    "report": BuiltIn(
        "model_checks.commands.report",
        "Write the design-review site: specs, state graphs, verdicts, counterexamples as sequence diagrams.",
    ),
    "serve": BuiltIn(
        "model_checks.commands.serve",
        "Explore a design's spec in the browser: step through states, see the invariants, share the path.",
    ),
    "certificate": BuiltIn(
        "model_checks.commands.certificate",
        "Check a certificate of `lanecheck verify` against the code, re-running a sample of its rows.",
    ),
}


def _terminal() -> bool:
    """Whether stdout is a person's terminal (Rich's panels are drawn only there: it costs start-up)."""
    return sys.stdout.isatty() or bool(os.environ.get("FORCE_COLOR"))


@dataclass(frozen=True)
class _AsGiven(RuntimeParam):
    """A parameter's conversion that needs pydantic only for values that need converting.

    typer converts every value through a pydantic ``TypeAdapter``, built when the parameter is
    first parsed even if no value was given, and importing pydantic is about a third of
    `lanecheck validate`'s start-up. No value stays none (``RuntimeParam.coerce``), and text for a
    plain ``str``/``list[str]`` parameter is its own value; anything else goes to typer's own
    conversion, so nothing it refuses is let through here.
    """

    descriptor: Any = None

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        if _is_text(self.descriptor):
            if self.annotation is str and isinstance(value, str):
                return value
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return list(value)
        own = build_runtime_param(self.descriptor)
        return own._coerce_value(value, param=param, ctx=ctx)


def _is_text(descriptor: Any) -> bool:
    if descriptor.parameter_info.parser is not None or descriptor.is_choice or descriptor.is_file:
        return False
    return descriptor.annotation is str or descriptor.annotation == list[str]


def _convert_as_given(params: Sequence[Any]) -> None:
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is not None and getattr(param, "_runtime_param", "") is None:
            param._runtime_param = _AsGiven(descriptor.parameter_info, descriptor.annotation, descriptor)


def _all_as_given_root(root: Any) -> None:
    """``_AsGiven`` for the root's own parameters (its sub-commands' when they are built)."""
    _convert_as_given(root.params)
    if not isinstance(root.get_help_option, partial):
        root.get_help_option = partial(_help_as_given, root.get_help_option)


def _help_as_given(own: Any, ctx: Any) -> Any:
    """A command's ``get_help_option``, its ``--help`` (made on first parse) converted as given."""
    option = own(ctx)
    _convert_as_given([option] if option is not None else [])
    return option


def _all_as_given(command: Any) -> None:
    """``_AsGiven`` for every parameter of ``command`` and of its sub-commands."""
    _convert_as_given(getattr(command, "params", ()))
    if hasattr(command, "get_help_option"):
        command.get_help_option = partial(_help_as_given, command.get_help_option)
    for sub in dict(getattr(command, "commands", None) or {}).values():
        _all_as_given(sub)


def _sub_app() -> typer.Typer:
    return typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def _built(sub: typer.Typer) -> dict[str, Any]:
    """The click commands of everything registered on ``sub``, by name."""
    if not (sub.registered_commands or sub.registered_groups):
        return {}
    commands = dict(typer.main.get_group(sub).commands)
    for command in commands.values():
        _all_as_given(command)
    return commands


def build_builtin(name: str) -> dict[str, Any]:
    """The click command(s) the built-in command ``name`` registers, its module imported now."""
    entry = BUILT_IN[name]
    module = importlib.import_module(entry.module)
    sub = _sub_app()
    if entry.hook == "register_bench":
        bench_app = typer.Typer(help=BENCH_HELP, no_args_is_help=True)
        module.register_bench(bench_app)
        sub.add_typer(bench_app, name=name)
    else:
        getattr(module, entry.hook)(sub)
    return _built(sub)


def build_design_commands() -> dict[str, Any]:
    """The commands the registered designs bring (``Design.commands``: "module:register" each)."""
    from model_checks import registry
    from model_checks.design import load

    sub = _sub_app()
    for design in registry.designs().values():
        for target in design.commands:
            load(target)(sub)
    return _built(sub)


class LanecheckRoot(LanecheckGroup):
    """The root command, its sub-commands built on first use.

    ``commands`` read from outside (a test walking the command tree, shell completion) is every
    command, built; the group itself looks up only the one it runs. Listing them for ``--help``
    builds none: it shows each built-in command's ``summary``.
    """

    _have: dict[str, Any]
    _designs_loaded: bool = False
    _listing: bool = False

    @property
    def commands(self) -> MutableMapping[str, Any]:
        self._build_all()
        return self._have

    @commands.setter
    def commands(self, value: MutableMapping[str, Any]) -> None:
        self._have = dict(value)

    def _load_designs(self) -> None:
        if not self._designs_loaded:
            self._designs_loaded = True
            for name, command in build_design_commands().items():
                # A built-in name stays the built-in command, unless designs add to it (simulate).
                if name not in BUILT_IN or BUILT_IN[name].designs_extend:
                    self._have.setdefault(name, command)

    def _build(self, name: str) -> Any:
        if name not in self._have and name in BUILT_IN:
            if BUILT_IN[name].designs_extend:
                self._load_designs()
            for built_name, command in build_builtin(name).items():
                self._have.setdefault(built_name, command)
        return self._have.get(name)

    def _build_all(self) -> None:
        self._load_designs()
        for name in BUILT_IN:
            self._build(name)

    def add_command(self, cmd: Any, name: str | None = None) -> None:
        name = name or cmd.name
        if name is None:
            raise TypeError("Command has no name.")
        self._have[name] = cmd

    def list_commands(self, ctx: Any) -> list[str]:
        self._load_designs()
        return [*BUILT_IN, *(name for name in self._have if name not in BUILT_IN)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name in self._have:
            return self._have[cmd_name]
        if cmd_name in BUILT_IN:
            if self._listing:  # a stand-in with the summary line: listing imports no command
                summary = BUILT_IN[cmd_name].summary
                return TyperCommand(name=cmd_name, help=summary, short_help=summary)
            return self._build(cmd_name)
        self._load_designs()
        return self._have.get(cmd_name)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self._listing = True
        try:
            if _terminal():
                super().format_help(ctx, formatter)
            else:  # click's plain listing: a script or a pipe gets the same text without Rich
                _click.Command.format_help(self, ctx, formatter)
        finally:
            self._listing = False


app = typer.Typer(
    name="lanecheck",
    cls=LanecheckRoot,
    help="Formally checked work-lane schedulers: explore specs, run the reference under a "
    "controlled scheduler, validate traces. Usage errors exit 2; with --json they are printed "
    'on stdout as {"error": ..., "code": 2, "option": ...}.',
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    # The sub-commands are built by ``LanecheckRoot`` on first use; a callback makes typer build
    # the root as a group although no command is registered on ``app`` itself.
    return None


def main() -> None:
    from model_checks.registry import say_load_errors_once

    say_load_errors_once()
    app()
