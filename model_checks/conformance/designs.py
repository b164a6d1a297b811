"""Every design's trace format, by the design's name (``Design.trace_format``).

A header's ``design`` picks the format; a format lives in its design's folder and is
imported only when a trace names it. A format is any object with ``design`` (its
name), ``rules`` (rule number -> words) and ``validate(header, lines, *, engine,
complete) -> Verdict``: ``streamed.DesignFormat`` for the designs judged by the
streaming search, or a design's own (the Work Lane's, with its fast engine).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from model_checks.design import load
from model_checks.registry import designs

if TYPE_CHECKING:
    from model_checks.conformance.verdict import Verdict


class TraceFormat(Protocol):
    @property
    def design(self) -> str: ...

    @property
    def rules(self) -> Mapping[int, str]: ...

    def validate(self, header: Any, it: Iterator[str], *, engine: str, complete: bool) -> Verdict: ...


def design_format(name: str) -> TraceFormat | None:
    """The trace format of the design called ``name``, or None when it has none."""
    found = designs().get(name)
    if found is None or found.trace_format is None:
        return None
    fmt: TraceFormat = load(found.trace_format)
    return fmt


def design_formats() -> dict[str, TraceFormat]:
    """Every registered design's trace format, by design name."""
    formats = {name: design_format(name) for name in designs()}
    return {name: fmt for name, fmt in formats.items() if fmt is not None}
