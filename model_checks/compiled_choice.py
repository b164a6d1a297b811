"""Whether a group of modules that ``pip install`` compiles with mypyc runs compiled or as Python.

mypyc compiles a group of plain, typed modules into one shared library (``<hash>__mypyc.*``
beside the packages) and a small loader per module. The modules of a group share native
classes, so they are used all together or not at all: the Python sources run instead when

* ``LANECHECK_PURE=1`` is set (to debug or profile them as Python), or
* any compiled module is older than its source (an edited checkout: the edit is what runs,
  with a warning saying how to rebuild), or
* the group's shared library cannot be imported (an editable install made before the group
  existed maps no such top-level module), or
* nothing, or only part of the group, was compiled.

The decision is taken when a group is declared, before any of its modules is imported; a
compiled module's body runs before the import system files it, too late to step aside, so the
module that declares a group stays Python itself.

A *hidden* group's loaders are built under a name the import system never looks for
(``function.mypyc.<suffix>`` beside ``function.py``): a plain ``import`` always loads the source,
and only a group decided "compiled" loads them (``install``). It suits modules that anything may
import before the decision is taken (``spec/function.py``: the spec imports nothing of ours, so
nothing of ours can decide before it): such an import runs the source, correct and slower.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


HIDDEN = ".mypyc"  # between a hidden group's module name and its extension suffix


def paths(name: str, root: str = ROOT, hidden: bool = False) -> tuple[str, list[str]]:
    """Module ``name``'s source and the paths its compiled loader may have."""
    base = os.path.join(root, *name.split("."))
    tag = HIDDEN if hidden else ""
    return base + ".py", [base + tag + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES]


def group_of(loader: str) -> str | None:
    """The shared library's module (``<hash>__mypyc``, or ``<package>.<module>__mypyc`` for a group
    of one module) that a compiled module's loader names: only that file counts (another package's
    library beside ours must not pass for ours)."""
    with open(loader, "rb") as f:
        found = re.search(rb"([A-Za-z0-9_.]+__mypyc)", f.read())
    return None if found is None else found[1].decode()


def group_built(group: str, root: str = ROOT) -> float:
    """When ``group``'s shared library was built (0 if it is not there). A rebuild after an edit
    relinks it while a module's own loader is left as it was when nothing in it changed: that
    loader's time alone would call a freshly rebuilt group stale."""
    base = os.path.join(root, *group.split("."))  # a group of one module is in its package
    found = [base + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES]
    return max((os.path.getmtime(p) for p in found if os.path.exists(p)), default=0.0)


ASKED, NOT_BUILT = "LANECHECK_PURE=1", "not compiled at install"
QUIET = frozenset((ASKED, NOT_BUILT))
"""The reasons for the sources that are what the user chose (or a machine without mypyc): no
warning. Every other reason is a build gone stale, partial or unreachable."""


def _reachable(group: str, root: str) -> bool:
    """Can the loaders import their group's library? A top-level one (``<hash>__mypyc``) is found
    the way an install maps it; one in a package (a group of one module) beside its module, looked
    for as a file: ``find_spec`` would import the package, and deciding must import nothing."""
    if "." in group:
        return group_built(group, root) > 0
    return importlib.util.find_spec(group) is not None


def decide(modules: Sequence[str], what: str, root: str = ROOT, hidden: bool = False) -> tuple[str, str]:
    """("compiled" | "pure", why) for the group ``modules`` (``what`` names it in the reason)."""
    if os.environ.get("LANECHECK_PURE") == "1":
        return "pure", ASKED
    compiled = 0
    for name in modules:
        source, built = paths(name, root, hidden)
        found = [p for p in built if os.path.exists(p)]
        if not found:
            continue
        compiled += 1
        group = group_of(found[0])
        if group is not None and not _reachable(group, root):
            return "pure", f"{group} is not importable (the install predates it)"
        built_at = max(os.path.getmtime(found[0]), 0.0 if group is None else group_built(group, root))
        if os.path.exists(source) and os.path.getmtime(source) > built_at:
            return "pure", f"{os.path.relpath(source, root)} is newer than its compiled module"
    if compiled == 0:
        return "pure", NOT_BUILT
    if compiled < len(modules):
        return "pure", f"only some of {what}'s modules were compiled"
    return "compiled", "built at install"


class _GroupFinder:
    """A meta-path finder that loads a group's modules from their ``.py`` files, or (``compiled``)
    a hidden group's modules from their compiled loaders."""

    def __init__(self, modules: Sequence[str], root: str, compiled: bool = False) -> None:
        self.modules = frozenset(modules)
        self.root = root
        self.compiled = compiled

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in self.modules:
            return None
        source, built = paths(name, self.root, hidden=self.compiled)
        if not self.compiled:
            return importlib.util.spec_from_file_location(name, source)
        found = [p for p in built if os.path.exists(p)]
        if not found:  # removed since the decision: the plain import finds the source
            return None
        loader = importlib.machinery.ExtensionFileLoader(name, found[0])
        return importlib.util.spec_from_file_location(name, found[0], loader=loader)

    @staticmethod
    def first(modules: Sequence[str], root: str, compiled: bool) -> None:
        """Put a finder for ``modules`` first on ``sys.meta_path`` (once)."""
        mine = frozenset(modules)
        if not any(
            isinstance(f, _GroupFinder) and f.modules == mine and f.compiled == compiled
            for f in sys.meta_path
        ):
            sys.meta_path.insert(0, _GroupFinder(modules, root, compiled))


EARLIER = "imported before the decision: its source runs"


class CompiledGroup:
    """One group's decision (taken at construction) and the means to act on it."""

    def __init__(
        self,
        modules: Sequence[str],
        what: str,
        warning: type[Warning],
        root: str = ROOT,
        *,
        hidden: bool = False,
    ) -> None:
        self.modules = tuple(modules)
        self.what = what
        self.warning = warning
        self.root = root
        self.hidden = hidden
        self.kind, self.why = decide(self.modules, what, root, hidden)

    def describe(self) -> str:
        return f"{self.kind} {self.what} ({self.why})"

    def install(self, slower: str) -> None:
        """With the decision "pure", make the sources the modules imported (``slower`` says what
        that costs, in the warning given when a build is stale or unreachable); for a hidden
        group decided "compiled", its compiled modules."""
        if self.hidden and self.kind == "compiled":
            loaded = [sys.modules[name] for name in self.modules if name in sys.modules]
            if any((getattr(m, "__file__", None) or "").endswith(".py") for m in loaded):
                # A plain import came first and loaded the sources; they stay (no warning: the
                # same code, slower), and the group says which run.
                self.kind, self.why = "pure", EARLIER
                return
            _GroupFinder.first(self.modules, self.root, compiled=True)
            return
        if self.kind == "compiled" or any(name in sys.modules for name in self.modules):
            return  # compiled, or already imported (a reload): leave them as they are
        if self.why not in QUIET:  # something went wrong with a build: say so
            warnings.warn(
                f"lanecheck: {self.why}; running {self.what} as Python ({slower}). "
                "Rebuild it with `pip install -e .`.",
                self.warning,
                stacklevel=3,
            )
        _GroupFinder.first(self.modules, self.root, compiled=False)


__all__ = [
    "ASKED",
    "EARLIER",
    "HIDDEN",
    "NOT_BUILT",
    "QUIET",
    "ROOT",
    "CompiledGroup",
    "decide",
    "group_built",
    "group_of",
    "paths",
]
