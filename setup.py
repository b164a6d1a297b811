"""Build hook: compile the harness core with mypyc (see model_checks/harness/core.py) and the race
detector's C trace function (``model_checks/harness/_race_tracer.c``, CPython 3.11 only).

Everything else is in pyproject.toml. ``LANECHECK_PURE=1 pip install -e .`` skips compiling; a
failed compilation leaves the pure-Python core (or the race detector's Python tracer), loudly,
and the install goes on.
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


def _extensions() -> list[Extension]:
    if os.environ.get("LANECHECK_PURE") == "1":
        return []
    try:
        from mypyc.build import mypycify

        # The build environment has none of the test-time packages (hypothesis, pytest) that
        # non-compiled modules of the package import; their types do not reach the core.
        return mypycify(["--ignore-missing-imports", *CORE_FILES], opt_level="3")
    except (Exception, SystemExit) as exc:  # a missing compiler or a type error: pure Python
        print(f"lanecheck: not compiling the harness core ({exc!r}); it runs as Python", file=sys.stderr)
        return []


RACE_TRACER = Extension("model_checks.harness._race_tracer", ["model_checks/harness/_race_tracer.c"])


def _race_tracer() -> list[Extension]:
    # it reads CPython 3.11's frame layout (its internal headers, shipped with the Python headers)
    if os.environ.get("LANECHECK_PURE") == "1" or sys.version_info[:2] != (3, 11):
        return []
    return [RACE_TRACER]


class _BuildExt(build_ext):  # type: ignore[misc]
    """A failed build of the race tracer leaves the Python tracer (``race_frames.NATIVE``)."""

    def build_extension(self, ext: Extension) -> None:
        if ext is not RACE_TRACER:
            super().build_extension(ext)
            return
        try:
            super().build_extension(ext)
        except Exception as exc:  # no compiler or headers: the detector runs its Python tracer
            print(
                f"lanecheck: not building the race tracer ({exc!r}); races.py traces in Python",
                file=sys.stderr,
            )


setup(ext_modules=[*_extensions(), *_race_tracer()], cmdclass={"build_ext": _BuildExt})
