"""Which harness core runs: the compiled one (mypyc, built at install) or its Python source.

The scheduler, the primitives' model and the strategies (``CORE``) are plain, fully typed Python
that ``pip install`` compiles with mypyc into extension modules beside the sources (about 2x
faster per scheduling step; docs/performance.md). The compiled modules share native classes,
so they are used all together or not at all: the Python sources run instead when

* ``LANECHECK_PURE=1`` is set (to debug or profile the core as Python), or
* any compiled module is older than its source (an edited checkout: the edit is what runs,
  with a warning saying how to rebuild), or
* nothing was compiled (``LANECHECK_PURE=1`` at install, or no compiler).

Importing this module decides (``install()``); ``model_checks/harness/__init__.py`` imports it
before anything else, so before any core module.
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

CORE = (
    "model_checks.harness.rt.objects",
    "model_checks.harness.rt.records",
    "model_checks.harness.rt.scheduler",
    "model_checks.harness.runtime",
    "model_checks.harness.sync.fifo",
    "model_checks.harness.sync.primitives",
    "model_checks.harness.strategies.randomized",
    "model_checks.harness.strategies.search",
    "model_checks.harness.strategies.simple",
)

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class StaleCoreWarning(UserWarning):
    """The compiled core is older than its sources; the sources run."""


def _paths(name: str) -> tuple[str, list[str]]:
    base = os.path.join(_ROOT, *name.split("."))
    return base + ".py", [base + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES]


def _group_built() -> float:
    """When mypyc's shared library of the core (``*__mypyc.*`` beside the package, holding every
    core module's compiled code) was built; 0 if there is none. A rebuild after an edit relinks
    it, while a module's own small loader is left as it was when nothing in it changed: that
    loader's time alone would call a freshly rebuilt core stale."""
    group = _group_name()
    if group is None:
        return 0.0
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    paths = [os.path.join(_ROOT, group + "__mypyc" + suffix) for suffix in suffixes]
    times = [os.path.getmtime(p) for p in paths if os.path.exists(p)]
    return max(times, default=0.0)


def _group_name() -> str | None:
    """The name of our core's shared library, as its modules' loaders name it: only that file
    counts (another mypyc-compiled package beside ours, in an installed layout, or a library
    built for another Python, must not pass for a fresh build of ours)."""
    for name in CORE:
        for loader in _paths(name)[1]:
            if os.path.exists(loader):
                with open(loader, "rb") as f:
                    found = re.search(rb"([A-Za-z0-9_]+)__mypyc", f.read())
                return found[1].decode() if found else None
    return None


def _decide() -> tuple[str, str]:
    """("compiled" | "pure", why)."""
    if os.environ.get("LANECHECK_PURE") == "1":
        return "pure", "LANECHECK_PURE=1"
    group = _group_built()
    compiled_any = False
    for name in CORE:
        source, built = _paths(name)
        found = [p for p in built if os.path.exists(p)]
        if not found:
            if compiled_any:
                return "pure", f"{name} was not compiled"
            continue
        compiled_any = True
        built_at = max(os.path.getmtime(found[0]), group)
        if os.path.exists(source) and os.path.getmtime(source) > built_at:
            return "pure", f"{os.path.relpath(source, _ROOT)} is newer than its compiled module"
    if not compiled_any:
        return "pure", "the core was not compiled at install"
    return "compiled", "built at install"


_KIND, _WHY = _decide()


def kind() -> str:
    """ "compiled" or "pure": which core this process runs."""
    return _KIND


def describe() -> str:
    return f"{_KIND} harness core ({_WHY})"


class _SourceFirst:
    """A meta-path finder that loads the core modules from their ``.py`` files."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in CORE:
            return None
        source, _ = _paths(name)
        return importlib.util.spec_from_file_location(name, source)


def install() -> None:
    if _KIND == "compiled":
        return
    if any(name in sys.modules for name in CORE):
        return  # already imported (a reload of this package): leave them as they are
    if "newer" in _WHY:
        warnings.warn(
            f"lanecheck: {_WHY}; running the pure-Python harness core (about half the speed). "
            "Rebuild it with `pip install -e .`.",
            StaleCoreWarning,
            stacklevel=3,
        )
    if not any(isinstance(f, _SourceFirst) for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFirst())


install()
