"""How much memory the container or host has left: cgroup v2, else cgroup v1, else ``/proc/meminfo``.

A reading is used only when it is trustworthy: every number parsed, non-negative, and the limit a
real one (cgroup v2 ``max`` and cgroup v1's "no limit" sentinel mean the cgroup does not bound us,
so the next source is asked). Anything else gives ``None`` and admission runs its process-level
checks without a system check. ``root`` is injectable so tests can hand in a fake ``/``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

UNLIMITED_V1 = 1 << 60
"""cgroup v1 reports "no limit" as a page-rounded ``LONG_MAX``; anything this large is no limit."""


@dataclass(frozen=True)
class Snapshot:
    available: int
    """Bytes that may still be allocated."""
    source: str
    """``cgroup2``, ``cgroup1`` or ``meminfo``."""


def _read_int(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeError):
        return None
    if not text.isdigit():  # "max", empty, garbage: not a number we can trust
        return None
    return int(text)


def _lines(path: Path, encoding: str) -> list[str]:
    """The file's lines; none if it cannot be read or decoded (the reading is then not trusted)."""
    try:
        return path.read_text(encoding=encoding).splitlines()
    except (OSError, UnicodeError):
        return []


def _cgroup2_dir(root: Path) -> Path | None:
    for line in _lines(root / "proc/self/cgroup", "utf-8"):
        if line.startswith("0::"):
            relative = line[3:].strip().lstrip("/")
            return root / "sys/fs/cgroup" / relative
    return None


def cgroup2(root: Path) -> Snapshot | None:
    directory = _cgroup2_dir(root)
    if directory is None:
        return None
    limit = _read_int(directory / "memory.max")
    current = _read_int(directory / "memory.current")
    if limit is None or current is None or limit == 0:
        return None
    return Snapshot(max(limit - current, 0), "cgroup2")


def cgroup1(root: Path) -> Snapshot | None:
    directory = root / "sys/fs/cgroup/memory"
    limit = _read_int(directory / "memory.limit_in_bytes")
    usage = _read_int(directory / "memory.usage_in_bytes")
    if limit is None or usage is None or limit == 0 or limit >= UNLIMITED_V1:
        return None
    return Snapshot(max(limit - usage, 0), "cgroup1")


def meminfo(root: Path) -> Snapshot | None:
    for line in _lines(root / "proc/meminfo", "ascii"):
        key, _, rest = line.partition(":")
        if key == "MemAvailable":
            parts = rest.split()
            if len(parts) == 2 and parts[0].isdigit() and parts[1] == "kB":
                return Snapshot(int(parts[0]) * 1024, "meminfo")
            return None
    return None  # kernels before 3.14 lack MemAvailable; MemFree alone would overstate nothing safely


def snapshot(root: Path = Path("/")) -> Snapshot | None:
    """The first trustworthy reading of cgroup v2, cgroup v1, ``/proc/meminfo``; None if none is."""
    for source in (cgroup2, cgroup1, meminfo):
        reading = source(root)
        if reading is not None:
            return reading
    return None
