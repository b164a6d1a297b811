"""Build hook: compile the harness core with mypyc (see model_checks/harness/core.py).

Everything else is in pyproject.toml. ``LANECHECK_PURE=1 pip install -e .`` skips compiling; a
failed compilation leaves the pure-Python core, loudly, and the install goes on.
"""

import os
import sys

from setuptools import setup

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


def _extensions() -> list:
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


setup(ext_modules=_extensions())
