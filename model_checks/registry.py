"""The designs lanecheck knows: the built-in folders and third-party plug-ins.

Built-in designs are the folders of ``model_checks/designs/`` named in ``BUILT_IN``,
imported by name: nothing generic imports a design statically (import-linter keeps it so).
A third party (a port team checking its own design without forking) declares
its design in its own package's metadata::

    [project.entry-points."lanecheck.designs"]
    handoff = "my_port.lanecheck_design:DESIGN"

The entry point names a ``Design`` (or a function returning one). Designs are
loaded on first use. A plug-in that fails to load is skipped with a warning
naming it, so one broken plug-in never takes the built-in designs down; its
error stays in ``load_errors()``.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points

from model_checks.design import Design

ENTRY_POINT_GROUP = "lanecheck.designs"
# The built-in design folders, in the order listings and `lanecheck verify` show them.
BUILT_IN: tuple[str, ...] = (
    "work_lane",
    "schedule_gate",
    "akka_mailbox",
    "work_stealing",
    "event_pool",
    "admission",
    "work_lane_lockfree",
    "job_wakeup",
    "job_pool",
)

_loaded: dict[str, Design] | None = None
_errors: list[str] = []
# Set by `lanecheck` (``say_load_errors_once``) to the id of the process that prints each broken
# plug-in as one line; the worker processes it starts (which load the registry again) inherit it
# and stay quiet, so a command says it once, not once per process. A process id, not a flag: the
# command re-runs itself under its hash seed by ``os.execve``, the same process, which must speak.
QUIET = "LANECHECK_PLUGIN_ERRORS_SAID"
_say: bool = False


class PluginNotLoaded(UserWarning):
    """A design plug-in that failed to load (skipped; the other designs load)."""


def say_load_errors_once() -> None:
    """For the command line: a broken plug-in is one ``warning:`` line on stderr, in this process
    only, instead of a Python warning with its source line in every process."""
    global _say
    speaker = os.environ.get(QUIET)
    _say = speaker is None or speaker == str(os.getpid())
    if _say:
        os.environ[QUIET] = str(os.getpid())


def _report(message: str) -> None:
    _errors.append(message)
    if _say:
        sys.stderr.write(f"warning: {message}\n")
    elif os.environ.get(QUIET) is None:
        warnings.warn(message, PluginNotLoaded, stacklevel=4)


def _as_design(obj: object, origin: str) -> Design:
    if callable(obj) and not isinstance(obj, Design):
        obj = obj()
    if not isinstance(obj, Design):
        raise TypeError(f"{origin} is not a lanecheck Design (got {type(obj).__name__})")
    return obj


def _add(found: dict[str, Design], design: Design, origin: str) -> None:
    if design.name in found:
        raise ValueError(f"two designs are named {design.name!r}; the second comes from {origin}")
    found[design.name] = design


def _load() -> dict[str, Design]:
    found: dict[str, Design] = {}
    for package in BUILT_IN:
        module = importlib.import_module(f"model_checks.designs.{package}")
        _add(found, _as_design(module.DESIGN, f"model_checks.designs.{package}"), package)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP})"
        try:
            _add(found, _as_design(ep.load(), origin), origin)
        except Exception as problem:  # a plug-in's bug must not hide the other designs
            _report(f"design plug-in {ep.name} not loaded: {type(problem).__name__}: {problem} [{origin}]")
    return found


def designs() -> dict[str, Design]:
    """Every registered design by name: the built-in ones first, then the plug-ins."""
    global _loaded
    if _loaded is None:
        _loaded = _load()
    return _loaded


def load_errors() -> list[str]:
    designs()
    return list(_errors)


def design(name: str) -> Design:
    try:
        return designs()[name]
    except KeyError:
        raise KeyError(f"no design {name!r}; known: {', '.join(designs())}") from None


class _Designs(Mapping[str, Design]):
    """``DESIGNS``: the registry as a read-only mapping, loaded on first access."""

    def __getitem__(self, name: str) -> Design:
        return designs()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(designs())

    def __len__(self) -> int:
        return len(designs())


DESIGNS: Mapping[str, Design] = _Designs()

__all__ = ["BUILT_IN", "DESIGNS", "ENTRY_POINT_GROUP", "Design", "design", "designs", "load_errors"]
