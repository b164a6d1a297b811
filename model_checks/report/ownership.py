"""The site owns its output folder: a manifest lists the files the last report wrote there.

A new report may write into a folder that is new, empty, or holds only files a previous report's
manifest lists; anything else is refused before any work, naming the files (a user's files are
never overwritten or deleted). After writing, the files the previous report wrote and this one did
not (a mutant that no longer exists, a design left out) are removed, and the folders they leave
empty; then the manifest is replaced.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

MANIFEST = ".lanecheck-report.json"
KIND = "lanecheck report"
SHOWN = 5  # files named in a refusal


class OutFolderError(ValueError):
    """The output folder holds files this report may not own."""


def _relative(out: Path, path: Path) -> str:
    return path.relative_to(out).as_posix()


def _entry_ok(entry: object) -> bool:
    if not isinstance(entry, str) or not entry or "\\" in entry or "\0" in entry:
        return False
    parts = PurePosixPath(entry).parts
    return not PurePosixPath(entry).is_absolute() and ".." not in parts and entry != MANIFEST


def previous_files(out: Path) -> set[str]:
    """The files the previous report wrote in ``out`` (relative paths), after checking that ``out``
    holds nothing else. Raises ``OutFolderError`` naming the problem; an absent or empty ``out``
    has none."""
    if not out.exists():
        return set()
    if not out.is_dir():
        raise OutFolderError(f"{out} is not a folder")
    present = {_relative(out, p) for p in out.rglob("*") if not p.is_dir()}
    manifest = out / MANIFEST
    if MANIFEST not in present:
        if present:
            raise OutFolderError(_foreign(out, present, "and no report manifest"))
        return set()
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeError, ValueError) as problem:
        raise OutFolderError(f"{manifest}: not a report manifest ({problem})") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(files, list):
        raise OutFolderError(f"{manifest}: not a report manifest (expected kind {KIND!r} and a files list)")
    bad = next((f for f in files if not _entry_ok(f)), None)
    if bad is not None:
        raise OutFolderError(
            f"{manifest}: not a report manifest (entry {str(bad)[:80]!r} is not a path inside)"
        )
    foreign = present - set(files) - {MANIFEST}
    if foreign:
        raise OutFolderError(_foreign(out, foreign, "not listed in its report manifest"))
    return set(files)


def _foreign(out: Path, names: Iterable[str], why: str) -> str:
    shown = sorted(names)
    listed = ", ".join(shown[:SHOWN]) + (f" and {len(shown) - SHOWN} more" if len(shown) > SHOWN else "")
    return (
        f"{out} holds files not from a previous report ({why}): {listed}; "
        "give a new or empty folder, or remove them"
    )


def settle(out: Path, before: set[str], written: Iterable[Path]) -> list[str]:
    """Remove what the previous report wrote and this one did not; write the new manifest.
    Returns the removed files (relative paths)."""
    now = {_relative(out, p) for p in written}
    stale = sorted(before - now)
    for name in stale:
        path = out / name
        if path.is_file() or path.is_symlink():
            path.unlink()
        parent = path.parent
        while parent != out and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent
    body = {"kind": KIND, "files": sorted(now)}
    (out / MANIFEST).write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")
    return stale
