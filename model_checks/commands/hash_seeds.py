"""`lanecheck explore`'s str/bytes hash seed: a chosen one (``--hash-seed``), or several
(``--hash-seeds N``).

A set of strings iterates in an order its hashes decide, and CPython seeds those hashes at
start-up (``PYTHONHASHSEED``, random when unset); it cannot be changed afterwards. A check holds
for the seed of its process (``harness/hash_seed.py`` names it in every exhaustive verdict), so:

* ``fix``: the command runs under ``--hash-seed`` (default: the environment's
  ``PYTHONHASHSEED``, else 0). When the process runs under another seed (or an unknown random
  one), the command line re-runs itself under the chosen one (``os.execve``: the interpreter's
  start and lanecheck's imports again, about a quarter of a second; none when the process
  started under the chosen seed); called in-process (a test's ``CliRunner``) it runs in a child
  process instead when ``--hash-seed`` asks for a seed, and otherwise stays (the verdict then
  names the process's seed, or says it is a random one);
* ``--hash-seeds N``: the check again in a child process under each of the seeds ``--hash-seed``
  ... ``--hash-seed + N - 1``, until one fails; the command fails if any does. N checks cost N
  times one: not the default (nothing tells cheaply whether a program iterates a set of strings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import typer
from typer._click.globals import get_current_context
from typer.core import TyperArgument, TyperOption

from model_checks.commands import CommandError
from model_checks.harness import hash_seed as process_seed

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_BOUNDED = 0, 1, 2, 3


def wanted(option: int | None) -> int:
    """The hash seed the command runs under: ``--hash-seed``, else the environment's, else 0."""
    if option is not None:
        return option
    return process_seed.SEED if process_seed.SEED is not None else 0


def is_command_line() -> bool:
    """Is this process lanecheck's command line itself (not a test calling the command)?"""
    entry = os.path.normpath(sys.argv[0]) if sys.argv else ""
    return os.path.basename(entry) == "lanecheck" or entry.endswith(
        (os.path.join("model_checks", "__main__.py"), os.path.join("commands", "explore.py"))
    )


def fix(option: int | None, many: int | None, as_json: bool) -> None:
    """Run the command under its hash seed (see the module's docstring); returns when this
    process is the one to run it, else ends the command with the outcome of the child(ren)."""
    seed = wanted(option)
    if many is not None:
        check_range(seed, many)
        raise typer.Exit(_run_children(list(range(seed, seed + many)), as_json))
    if seed == process_seed.SEED:
        return
    if is_command_line() and hasattr(sys, "orig_argv"):
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
    if option is not None:
        raise typer.Exit(_run_children([seed], as_json))


def check_range(first: int, many: int) -> None:
    """Refuse a range of seeds past ``PYTHONHASHSEED``'s bound before any child runs (a child
    under seed 2**32 died with "Fatal Python error" and the command read it as a failure)."""
    last = first + many - 1
    if last > process_seed.MAX_SEED:
        raise CommandError(
            f"seeds {first}..{last} go past {process_seed.MAX_SEED:,}, the largest PYTHONHASHSEED"
            f" (with --hash-seed {first}, give at most {process_seed.MAX_SEED - first + 1:,})",
            "--hash-seeds",
        )


def replay_flag() -> str:
    """What a replay command line needs to run under this process's hash seed ("" if unknown)."""
    return "" if process_seed.SEED is None else f" --hash-seed {process_seed.SEED}"


def _argv() -> list[str]:
    """The explore command's arguments, from its parsed parameters (a test calling it in-process
    has no command line of its own), without ``--hash-seed`` and ``--hash-seeds``."""
    ctx = get_current_context()
    out: list[str] = []
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if param.name in ("hash_seed", "hash_seeds") or value is None:
            continue
        if isinstance(param, TyperArgument):
            out.append(str(value))
        elif isinstance(param, TyperOption):
            if value == param.default:
                continue
            if param.is_flag:
                out.append(param.opts[0] if value else param.secondary_opts[0])
            else:
                out += [param.opts[0], str(value)]
    return out


def _run_children(seeds: list[int], as_json: bool) -> int:
    """The check under each seed in a child process, in turn, until one fails (or is refused):
    its output is printed, or the last one's if none fails; each seed's verdict is listed."""
    args = _argv()
    runs: list[dict[str, Any]] = []
    shown: subprocess.CompletedProcess[str] | None = None
    code = EXIT_OK
    for seed in seeds:
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        command = [sys.executable, "-m", "model_checks", "explore", *args, "--hash-seed", str(seed)]
        child = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        runs.append({"hash_seed": seed, "exit": child.returncode, "verdict": _verdict(child.stdout, as_json)})
        shown = child
        if child.returncode == EXIT_BOUNDED:
            code = EXIT_BOUNDED
        elif child.returncode != EXIT_OK:
            code = child.returncode
            break
    assert shown is not None
    sys.stderr.write(shown.stderr)
    if as_json:
        try:
            data = json.loads(shown.stdout)
        except ValueError:
            typer.echo(shown.stdout, nl=False)
        else:
            typer.echo(json.dumps({**data, "hash_seeds": runs}, indent=2))
        return code
    for run in runs:
        typer.echo(f"PYTHONHASHSEED={run['hash_seed']}: {run['verdict'][:200]}")
    outcome = {EXIT_OK: "exhaustive under each", EXIT_BOUNDED: "not failed, bounded under some"}
    typer.echo(
        f"hash seeds {seeds[0]}..{seeds[-1]}: {outcome.get(code, 'stopped at the first failure')}"
        f" ({len(runs)} of {len(seeds)} run)\n"
    )
    typer.echo(shown.stdout, nl=False)
    return code


def _verdict(output: str, as_json: bool) -> str:
    """A child's verdict: its JSON's ``verdict``, or its report's first line."""
    if as_json:
        try:
            return str(json.loads(output).get("verdict", ""))
        except (ValueError, AttributeError):
            return ""
    return output.strip().splitlines()[0] if output.strip() else ""
