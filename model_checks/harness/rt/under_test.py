"""Which files and modules are code under test, for the state fingerprint (``fingerprint.py``):
their globals and class data are state; the harness's machinery, the standard library and
installed packages are not."""

from __future__ import annotations

import os
import sys
import types

from model_checks.harness import own_code

_STDLIB = tuple(
    {os.path.dirname(os.__file__) + os.sep}
    | {p + os.sep for p in sys.path if p.endswith(("site-packages", "dist-packages"))}
)


def _program_module(m: types.ModuleType) -> bool:
    """Is ``m`` code under test? A module with no file is, unless the interpreter made it: a
    built-in or frozen module (``sys``, ``builtins``, ``_thread``, ...) or a namespace package.
    So ``__main__`` of ``python -c`` is, and so is a module the program made itself
    (``types.ModuleType("stats")`` used as a namespace: its attributes were no state, and a
    lock-order bug kept in one was proved absent by the state search; outside review 17)."""
    name = getattr(m, "__file__", None)
    if not isinstance(name, str):
        spec = getattr(m, "__spec__", None)
        if spec is None:
            return m.__name__ not in sys.builtin_module_names
        return spec.origin not in ("built-in", "frozen") and spec.submodule_search_locations is None
    return _program_file(name)


# The harness's machinery keeps nothing across a scheduling point that the pending operation does
# not say: its frames are skipped (``own_code.py`` names it). The other modules call it as
# ``under_test._machinery``, looked up at each call: a test swaps it here, for all of them.
_machinery = own_code.machinery


def _program_file(name: str) -> bool:
    known = _PROGRAM_FILES.get(name)
    if known is None:
        known = _PROGRAM_FILES[name] = _is_program_file(name)
    return known


_PROGRAM_FILES: dict[str, bool] = {}


def _is_program_file(name: str) -> bool:
    """Is ``name`` the file of code under test (its globals and class attributes are state)?
    Not the standard library, installed packages, frozen modules or the harness's own code (its
    machinery, and ``patch.py``'s wrappers: their frames are walked, but their globals are the
    harness's bookkeeping, the real ``threading`` objects and the table of wrapped threads); code
    compiled from a string (``<string>``, ``<stdin>``) is code under test."""
    return (
        not name.startswith((*_STDLIB, "<frozen")) and not _machinery(name) and name not in own_code.WRAPPERS
    )
