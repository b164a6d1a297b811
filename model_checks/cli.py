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
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from model_checks import registry
from model_checks.commands import EXIT_USAGE, CommandError
from model_checks.design import load

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


app = typer.Typer(
    name="lanecheck",
    cls=LanecheckGroup,
    help="Formally checked work-lane schedulers: explore specs, run the reference under a "
    "controlled scheduler, validate traces. Usage errors exit 2; with --json they are printed "
    'on stdout as {"error": ..., "code": 2, "option": ...}.',
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(
    help="Benchmarks: ratios against baselines measured in the same run.", no_args_is_help=True
)
app.add_typer(bench_app, name="bench")

# Each module defines ``register(app)``; bench modules ``register_bench(bench_app)``.
COMMANDS = ["check", "verify", "diagram", "explore", "validate", "traces"]
BENCHES = ["bench"]

for _name in COMMANDS:
    importlib.import_module(f"model_checks.commands.{_name}").register(app)
for _name in BENCHES:
    importlib.import_module(f"model_checks.commands.{_name}").register_bench(bench_app)
# A design may bring commands of its own (`lanecheck link`: the Work Lane's spec<->implementation
# comparisons); each is "module:register", called with the app.
for _design in registry.designs().values():
    for _target in _design.commands:
        load(_target)(app)


def main() -> None:
    app()
