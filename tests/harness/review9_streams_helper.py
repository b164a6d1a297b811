"""A helper library of ``review9_programs.py``: it redirects ``sys.stdout`` itself (the program
that calls it names no redirection and imports it only inside the explored function, so the
scan at patching does not see it: review 9's s44, its helper-library case)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable


def captured(fn: Callable[[], object]) -> str:
    """What ``fn`` printed, caught by redirecting ``sys.stdout`` for the whole process."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    return buf.getvalue()
