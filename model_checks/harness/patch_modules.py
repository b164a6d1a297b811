"""The modules ``patched(module)`` patches beside the ones it is given: what they reach.

A program's module imports others: a helper beside it, its project's package found through
``PYTHONPATH``, a ``src/`` layout or an editable install. The race detector traces every one of
them that is code under test (``race_sites.under_test``), so each must be patched as the
program's own is: its locks made at import stood in for (``patch_imported``), its by-name imports
of ``threading`` replaced, its globals restored before each execution (``patch_state``). An outside
review (session 38) found a module on ``PYTHONPATH`` traced but not patched: its correctly locked
counter was a data race (its lock real), its globals carried one execution's values into the next
(``AssertionError: 6``), and a ``time.sleep`` under its real lock hung the check past its time
limit (the other greenlet blocked the one OS thread on the lock).

``reached(modules)`` walks the modules' globals, transitively: a module among them (``import
extlib``, ``import pkg.sub``), and the module of a function, class or object imported by name
(``from extlib import bump``: ``bump.__module__``). It keeps those that are code under test and
not lanecheck's own, and walks on only through them, so it reads the globals of the program's
own modules only (the standard library and installed packages are not entered).
"""

from __future__ import annotations

import os
import sys
import types

import model_checks
from model_checks.harness.race_sites import SKIP_FILES, under_test

# lanecheck's own packages (in its source tree: the harness, its commands, the designs' specs and
# reference implementations), never patched as a program's: their objects are the explorer's
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(model_checks.__file__)))
OURS = tuple(os.path.join(_ROOT, name, "") for name in ("model_checks", "spec", "reference"))


def program_file(module: types.ModuleType) -> bool:
    """Is ``module`` one of the program's: loaded from a file that is code under test, not from
    the standard library, an installed package or lanecheck's own packages?"""
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or not file:
        return False
    # (``under_test`` holds some of the standard library's files: its algorithms are traced)
    return not file.startswith(SKIP_FILES) and under_test(file) and not os.path.abspath(file).startswith(OURS)


def reached(modules: tuple[types.ModuleType, ...]) -> list[types.ModuleType]:
    """The program's modules that ``modules`` reach through their globals, transitively (not
    ``modules`` themselves), in the order found."""
    seen = {id(module) for module in modules}
    found: list[types.ModuleType] = []
    pending = list(modules)
    loaded = sys.modules
    while pending:
        module = pending.pop()
        for value in list(vars(module).values()):
            if isinstance(value, types.ModuleType):
                other: object = value
            else:
                # a function's or class's module; an object's class's (``from extlib import REGISTRY``)
                named = isinstance(value, (type, types.FunctionType))
                owner = getattr(value, "__module__", None) if named else type(value).__module__
                other = loaded.get(owner) if isinstance(owner, str) else None
            if not isinstance(other, types.ModuleType) or id(other) in seen:
                continue
            seen.add(id(other))
            if program_file(other):
                found.append(other)
                pending.append(other)
    return found
