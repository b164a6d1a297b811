"""Whether the C helpers of ``model_checks/harness/_race_tracer.c`` are used (``NATIVE``): the race
detector's trace function and hot helpers (``race_frames.py``) and the fingerprint's frame reader
(``frames.native_contents``). Both fall back to identical Python where it is not."""

from __future__ import annotations

import os
import sys
import warnings
from types import ModuleType

_SOURCE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_race_tracer.c")


def _native() -> tuple[ModuleType | None, str]:
    """The C module (``_race_tracer``, built by setup.py on 3.11) unless the pure mode is asked
    for (``LANECHECK_PURE=1`` as for the compiled core, or ``LANECHECK_RACE_TRACER=python``),
    it was not built, or it is older than its source (an edit not yet rebuilt: the Python
    code, which behaves identically, runs with a warning)."""
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
    if built and os.path.exists(_SOURCE) and os.path.getmtime(_SOURCE) > os.path.getmtime(built):
        warnings.warn(
            "lanecheck: _race_tracer.c is newer than its built module; the race detector uses its "
            "Python tracer (slower). Rebuild with `pip install -e .`.",
            stacklevel=2,
        )
        return None, "_race_tracer.c is newer than its built module"
    return _race_tracer, "built at install"


NATIVE, NATIVE_WHY = _native()
