"""Build hook: compile the harness core with mypyc (see model_checks/harness/core.py), the generic
trace search with mypyc (``SEARCH_FILES``: the streaming search and the driver of the designs it
judges; docs/conformance.md, section 6) and the race detector's C trace function
(``model_checks/harness/_race_tracer.c``, CPython 3.11 only).

Everything else is in pyproject.toml. ``LANECHECK_PURE=1 pip install -e .`` skips compiling; a
failed compilation leaves the pure-Python core (or search, or the race detector's Python tracer),
loudly, and the install goes on.
"""

import os
import sys

from setuptools import Extension, setup  # type: ignore[import-untyped]
from setuptools.command.build_ext import build_ext  # type: ignore[import-untyped]

CORE_FILES = [
    "model_checks/harness/rt/objects.py",
    "model_checks/harness/rt/records.py",
    "model_checks/harness/rt/scheduler.py",
    "model_checks/harness/runtime.py",
    "model_checks/harness/sync/fifo.py",
    "model_checks/harness/sync/primitives.py",
    "model_checks/harness/strategies/randomized.py",
    "model_checks/harness/strategies/search.py",
    "model_checks/harness/strategies/simple.py",
]

# A group of its own (its own shared library): a failure to compile one group leaves the other
# compiled, and neither group's modules call into the other's.
# ``reader.py`` stays Python: it decides, before either is imported, whether they run compiled.
SEARCH_FILES = [
    "model_checks/conformance/search.py",
    "model_checks/conformance/streamed.py",
]


def _extensions() -> list[Extension]:
    if os.environ.get("LANECHECK_PURE") == "1":
        return []
    return [*_compiled("the harness core", CORE_FILES), *_compiled("the trace search", SEARCH_FILES)]


def _compiled(what: str, files: list[str]) -> list[Extension]:
    try:
        from mypyc.build import mypycify

        # The build environment has none of the test-time packages (hypothesis, pytest) that
        # non-compiled modules of the package import; their types do not reach the compiled code.
        # Without those packages some ``type: ignore`` of the modules imported goes unused.
        flags = ["--ignore-missing-imports", "--no-warn-unused-ignores"]
        return mypycify([*flags, *files], opt_level="3")
    except (Exception, SystemExit) as exc:  # a missing compiler or a type error: pure Python
        print(f"lanecheck: not compiling {what} ({exc!r}); it runs as Python", file=sys.stderr)
        return []


RACE_TRACER = Extension("model_checks.harness._race_tracer", ["model_checks/harness/_race_tracer.c"])


def _race_tracer() -> list[Extension]:
    # it reads CPython 3.11's frame layout (its internal headers, shipped with the Python headers)
    if os.environ.get("LANECHECK_PURE") == "1" or sys.version_info[:2] != (3, 11):
        return []
    return [RACE_TRACER]


class _BuildExt(build_ext):  # type: ignore[misc]
    """A failed build leaves Python in its place, loudly: the sources of a mypyc group (whose
    loaders then find no shared library: ``model_checks/compiled_choice.py``), or the race
    detector's Python tracer (``race_frames.NATIVE``)."""

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:  # no compiler or headers
            print(f"lanecheck: not building {ext.name} ({exc!r}); it runs as Python", file=sys.stderr)


setup(ext_modules=[*_extensions(), *_race_tracer()], cmdclass={"build_ext": _BuildExt})
