"""`lanecheck traces export --design work-lane-lockfree`: refused, saying why, until it is written.

The generic export copies the spec's labelled events, but this spec's CAS steps carry the spec's
words (``expect``/``new`` as lane-state numbers) where format v2 has ``from``/``to`` words, and its
header is version 2. A projection like ``trace/checker.py``'s renaming, run the other way, is what
is missing; until then the command fails with this reason instead of writing traces that do not
validate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from model_checks.conformance.export import ExportError


def export(directory: Path, constants: Any, name: str, *, replace: bool = False) -> list[Path]:
    raise ExportError(
        "work-lane-lockfree: covering-trace export is not written yet (format v2 needs the spec's "
        "CAS words renamed to from/to and a version-2 header); nothing written"
    )
