"""The worker's own memory: its resident size now, and the peak one handler run reached.

Linux keeps a resident high-water mark per process (``VmHWM``) and lets the process reset it
(writing ``5`` to ``/proc/self/clear_refs``), so a handler's peak is measured exactly: reset,
run, read. Where that is not possible, ``getrusage``'s lifetime peak is used, which can only
overstate (admission stays conservative).
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kb(key: str) -> int | None:
    try:
        with _STATUS.open(encoding="ascii") as stream:
            for line in stream:
                if line.startswith(key + ":"):
                    parts = line.split()
                    return int(parts[1]) * 1024 if len(parts) >= 2 and parts[1].isdigit() else None
    except (OSError, UnicodeError):
        return None
    return None


def lifetime_peak() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # kB on Linux, bytes on macOS


def rss() -> int | None:
    """Resident bytes now, or None where ``/proc`` is missing."""
    return _status_kb("VmRSS")


def reset_peak() -> bool:
    """Restart the high-water mark at the current size; False where the kernel does not allow it."""
    try:
        _CLEAR_REFS.write_text("5", encoding="ascii")
    except OSError:
        return False
    return True


def peak() -> int:
    """Resident high-water mark since the last ``reset_peak`` (or of the process's life)."""
    value = _status_kb("VmHWM")
    return value if value is not None else lifetime_peak()
