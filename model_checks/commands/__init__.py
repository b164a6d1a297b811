"""The sub-commands of ``lanecheck``, and the one validation layer their options share.

Every numeric option is declared through ``count``, ``at_least_zero`` or ``seconds`` below, so
its range is checked by the CLI library itself (typer's ``min=``/``max=``; NaN and infinity fail
the range check too) before a command starts any work, and its limit is printed in ``--help``.
A command refuses anything else it cannot use by raising ``CommandError``: a usage error (exit 2)
that names the option, rendered by ``model_checks.cli`` as one line (or as JSON with ``--json``).
"""

from __future__ import annotations

import os
import resource
from pathlib import Path
from typing import Annotated, Any

import typer

EXIT_USAGE = 2

# Limits of the command line (documented in each option's help and in README.md).
MAX_SECONDS = 7 * 24 * 3600.0  # one week: a longer --time-limit is a typo, not a plan
MAX_COUNT = 10**12  # states, executions, depths, examples: beyond any run that can finish
MAX_SEED = 2**63 - 1
# A search in N processes connects every pair of them: N*(N-1) descriptors in the parent.
MAX_WORKERS = 64


class CommandError(typer.BadParameter):
    """Bad input a command refuses before (or instead of) doing work: exit 2, naming ``option``."""

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message, param_hint=option)
        self.option = option

    def format_message(self) -> str:
        return f"{self.option}: {self.message}" if self.option else self.message


def count(help: str, *decls: str, low: int = 1, high: int = MAX_COUNT) -> Any:
    """An integer option checked by typer to lie in ``[low, high]``; the bounds go into its help."""
    return typer.Option(*decls, min=low, max=high, help=f"{help} [{low}..{high:,}]")


def at_least_zero(help: str, *decls: str, high: int = MAX_COUNT) -> Any:
    return count(help, *decls, low=0, high=high)


def seconds(help: str, *decls: str) -> Any:
    """A time limit: a finite number of seconds in ``[0, MAX_SECONDS]`` (NaN and inf refused)."""
    return typer.Option(*decls, min=0.0, max=MAX_SECONDS, help=f"{help} [0..{MAX_SECONDS:g} s]")


def seed(help: str, *decls: str) -> Any:
    return typer.Option(*decls, min=0, max=MAX_SEED, help=f"{help} [0..2**63-1]")


SEARCH_ENGINES = ("local", "ray")
"""Where `check` and `explore` search: here, or on Ray workers (the ray extra, docs/scale-out.md)."""

RayAddressOption = Annotated[
    str | None,
    typer.Option("--address", help="with --engine ray: the Ray cluster to join (default: start a local Ray)"),
]


def check_engine(engine: str, address: str | None) -> None:
    """Refuse an ``--engine`` not in ``SEARCH_ENGINES`` and an empty ``--address``; which of its
    other options need Ray, each command says in its own words."""
    if engine not in SEARCH_ENGINES:
        raise CommandError(f"{engine!r} is not one of {', '.join(SEARCH_ENGINES)}", "--engine")
    if address is not None and not address.strip():
        raise CommandError("an empty address names no cluster (omit it for a local Ray)", "--address")


def worker_limit() -> int:
    """The most processes a search may use here: ``MAX_WORKERS``, or fewer when the open-file
    limit would not hold their pipes (each pair of processes shares one socket pair)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_WORKERS
    spare = soft - 64  # what the process itself keeps open (streams, modules, the interpreter)
    n = 1
    while n < MAX_WORKERS and (n + 1) * n <= spare:
        n += 1
    return n


def check_workers(workers: int) -> None:
    limit = worker_limit()
    if workers > limit:
        raise CommandError(
            f"{workers} processes is more than this machine allows ({limit}: at most {MAX_WORKERS}, "
            "fewer when the open-file limit (ulimit -n) cannot hold a pipe between every pair)",
            "--workers",
        )


def output_file(path: Path | None, option: str) -> None:
    """Refuse, before any work, a file the command could not write at the end (the work would be lost)."""
    if path is None:
        return
    if str(path) == "":
        raise CommandError("an empty path names no file", option)
    if path.is_dir():
        raise CommandError(f"{path} is a directory, not a file", option)
    parent = path.parent
    if not parent.exists():
        raise CommandError(f"no such directory: {parent}", option)
    if not parent.is_dir():
        raise CommandError(f"{parent} is a file, not a directory", option)
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CommandError(f"cannot write {path}: permission denied", option)
