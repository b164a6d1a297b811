"""The trace formats of the designs that bring their own (``Design.trace_format``), by name.

A header's ``design`` picks the format; a design's format lives in its folder and
is imported only when a trace names it. The Work Lane's format is this package's
own (``validator._work_lane``), the default for a header without ``design``.
"""

from __future__ import annotations

from model_checks.conformance.streamed import DesignFormat
from model_checks.design import load
from model_checks.registry import designs


def design_format(name: str) -> DesignFormat | None:
    """The trace format of the design called ``name``, or None when it has none of its own."""
    found = designs().get(name)
    if found is None or found.trace_format is None:
        return None
    fmt: DesignFormat = load(found.trace_format)
    return fmt


def design_formats() -> dict[str, DesignFormat]:
    """Every registered design's own trace format, by design name."""
    formats = {name: design_format(name) for name in designs()}
    return {name: fmt for name, fmt in formats.items() if fmt is not None}
