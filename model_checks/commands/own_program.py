"""A program of the user's own for `lanecheck explore MODULE:FUNCTION` (or ``FILE.py:FUNCTION``):
code written against plain ``threading``, run in patch mode (docs/harness.md, "Patch mode").

``FUNCTION`` is the program's main thread: it takes no argument (plain ``threading`` code), or
one, the controlled runtime (code written against the harness's API). What cannot be loaded is a
``CommandError`` that names the problem.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from model_checks.commands import CommandError
from model_checks.harness import patch_modules, patch_random
from model_checks.harness.runtime import ControlledRuntime

Program = Callable[[ControlledRuntime], object]


class Loaded(NamedTuple):
    module: ModuleType
    program: Program
    # the module generator as the import left it: each execution's start (``patch_random.from_import``)
    draws: patch_random.ImportDraws


def is_own(name: str) -> bool:
    """Does ``name`` name a program of the user's own (``MODULE:FUNCTION``)?"""
    return ":" in name


def load(name: str, seed: int = 0) -> Loaded:
    """The module of ``MODULE:FUNCTION`` and its function as a harness program. The ``random``
    module's generator is seeded ``seed`` (``--seed``) before the import, as the OS seeds a real
    run's: a draw at import is the seed's (review 8, r043), and a seed at import is the program's
    (r044): every execution starts from the state the import left."""
    where, _, function = name.rpartition(":")
    if not where or not function:
        raise CommandError(f"{name!r}: give MODULE:FUNCTION or FILE.py:FUNCTION")
    before = set(sys.modules)
    module, draws = patch_random.seeded_import(seed, lambda: _module(where))
    _IMPORTED[module.__name__] = frozenset(sys.modules) - before
    fn = getattr(module, function, None)
    if fn is None:
        raise CommandError(f"{where} has no {function!r}")
    if not callable(fn):
        raise CommandError(f"{where}.{function} is a {type(fn).__name__}, not a function")
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        raise CommandError(
            f"{where}.{function} is an async function: lanecheck explores threads, not an event "
            "loop's tasks; give the function that starts the program's threads"
        )
    takes_rt = _takes_runtime(fn, f"{where}.{function}")

    def program(rt: ControlledRuntime) -> object:
        if takes_rt:
            return fn(rt)  # the harness's API: it may return final checks
        fn()  # a plain program's main: what it returns is no check (as a real run ignores it)
        return None

    # schedule strings and reports name the program
    program.__qualname__ = f"program:{name}"
    return Loaded(module, program, draws)


# per program module ``load`` imported: the modules its import loaded
_IMPORTED: dict[str, frozenset[str]] = {}


def siblings(module: ModuleType) -> list[ModuleType]:
    """The modules loaded from the program's own folder and the folders below it (its helpers,
    its packages' modules): patched with it, so that their locks made at import stand in for
    controlled ones and their globals start each execution afresh, as the program's own do.
    Installed packages (a virtual environment inside the folder) and lanecheck's own modules are
    not the program's. Where ``load`` imported it, only the modules its import loaded: in a
    process that had loaded others from that folder (a test run calling the command in-process)
    they are not the program's, and one of them made a lock subclass at import refused the check.
    (``patched`` adds the program's modules these reach, wherever they are: ``patch_modules``.)"""
    file = getattr(module, "__file__", None)
    if not file:
        return []
    below = _folder(os.path.dirname(file))
    imported = _IMPORTED.get(module.__name__)
    found = []
    for other in list(sys.modules.values()):
        path = getattr(other, "__file__", None)
        if other is module or not path or (imported is not None and other.__name__ not in imported):
            continue
        if os.path.abspath(path).startswith(below) and patch_modules.program_file(other):
            found.append(other)
    return found


def _folder(path: str) -> str:
    return os.path.join(os.path.abspath(path), "")  # ends in a separator: a prefix of what it holds


def _module(where: str) -> ModuleType:
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise CommandError(f"no such file: {where}")
        # The modules beside the file import as under `python FILE.py`, but from the end of the
        # path, not its start: a file there named like a standard module (queue.py) must not
        # replace it for lanecheck, nor for the processes it starts, which inherit the path.
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.append(folder)
        # registered by name (dataclasses and pickling look a module up), but never over a module
        # already loaded: a file called queue.py must not replace the standard library's
        name = path.stem if path.stem not in sys.modules else f"_lanecheck_program_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CommandError(f"{where} cannot be imported")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        _import(lambda: spec.loader.exec_module(module), where)  # type: ignore[union-attr]
        return module
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: a module of the current folder
    found: list[ModuleType] = []
    _import(lambda: found.append(importlib.import_module(where)), where)
    return found[0]


def _import(run: Callable[[], object], where: str) -> None:
    try:
        run()
    except ModuleNotFoundError as error:
        raise CommandError(f"cannot import {where}: {error}") from None
    except Exception as error:  # the user's module failed while it was imported
        raise CommandError(f"importing {where} raised {type(error).__name__}: {error}") from None


def _takes_runtime(fn: Callable[..., object], shown: str) -> bool:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    required = [
        p
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if len(required) > 1:
        raise CommandError(
            f"{shown} needs {len(required)} arguments: the program's main thread takes none (plain "
            "threading) or one, the controlled runtime"
        )
    return len(required) == 1


__all__ = ["Loaded", "is_own", "load", "siblings"]
