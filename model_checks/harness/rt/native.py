"""Whether the C helpers of the ``_race_tracer`` extension are used (``NATIVE``): the race detector's
trace function and hot helpers (``race_frames.py``), the fingerprint's frame reader
(``frames.native_contents``), and its reducer and seed check (``_fingerprint_hot.c``: ``encoder.py``,
``seeds.py``). Each falls back to identical Python where it is not."""

from __future__ import annotations

import glob
import os
import sys
import warnings
from types import ModuleType

_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the extension's sources (setup.py's ``RACE_TRACER``: every C file and header of the folder)
_SOURCES = sorted(glob.glob(os.path.join(_HERE, "_*.[ch]")))


def _native() -> tuple[ModuleType | None, str]:
    """The C module (``_race_tracer``, built by setup.py on 3.11) unless the pure mode is asked
    for (``LANECHECK_PURE=1`` as for the compiled core, or ``LANECHECK_RACE_TRACER=python``),
    it was not built, or it is older than one of its sources (an edit not yet rebuilt: the
    Python code, which behaves identically, runs with a warning)."""
    if sys.version_info[:2] != (3, 11):
        return None, "not CPython 3.11"
    if os.environ.get("LANECHECK_PURE") == "1":
        return None, "LANECHECK_PURE=1"
    if os.environ.get("LANECHECK_RACE_TRACER") == "python":
        return None, "LANECHECK_RACE_TRACER=python"
    try:
        from model_checks.harness import _race_tracer
    except ImportError:
        return None, "the C tracer was not built"
    built = getattr(_race_tracer, "__file__", None)
    newer = [
        os.path.basename(source)
        for source in _SOURCES
        if built and os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(built)
    ]
    if newer:
        warnings.warn(
            f"lanecheck: {newer[0]} is newer than its built module; the race detector and the "
            "state fingerprint use their Python code (slower). Rebuild with `pip install -e .`.",
            stacklevel=2,
        )
        return None, f"{newer[0]} is newer than its built module"
    return _race_tracer, "built at install"


NATIVE, NATIVE_WHY = _native()
