"""Every design's trace format, by the design's name (``Design.trace_format``).

A header's ``design`` picks the format; a format lives in its design's folder and is
imported only when a trace names it. A format is any object with ``design`` (its
name), ``rules`` (rule number -> words) and ``validate(header, lines, *, engine,
complete) -> Verdict``: ``streamed.DesignFormat`` for the designs judged by the
streaming search, or a design's own (the Work Lane's, with its fast engine).

Two optional attributes tell the generic core what it cannot guess: ``engines`` (the
engines the format has, its default first; without it, both) and ``takes_complete``
(False when the format's traces show their own end and ``complete`` is refused).
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


ENGINES = ("fast", "spec")


def engines_of(fmt: TraceFormat) -> tuple[str, ...]:
    """The engines ``fmt`` has, its default first."""
    return tuple(getattr(fmt, "engines", ENGINES))


def takes_complete(fmt: TraceFormat) -> bool:
    """Whether ``fmt.validate`` accepts ``complete=True`` (a format whose traces end themselves does not)."""
    return bool(getattr(fmt, "takes_complete", True))


def _loaded(name: str, field: str) -> TraceFormat | None:
    found = designs().get(name)
    target = None if found is None else getattr(found, field)
    if target is None:
        return None
    fmt: TraceFormat = load(target)
    return fmt


def design_format(name: str) -> TraceFormat | None:
    """The trace format of the design called ``name``, or None when it has none."""
    return _loaded(name, "trace_format")


def cross_check_format(name: str) -> TraceFormat | None:
    """The design's ``spec_trace_format``: its traces judged by the streaming search of the spec's
    own actions, where its ``trace_format`` has a hand-written engine only; else None."""
    return _loaded(name, "spec_trace_format")


def design_formats() -> dict[str, TraceFormat]:
    """Every registered design's trace format, by design name."""
    formats = {name: design_format(name) for name in designs()}
    return {name: fmt for name, fmt in formats.items() if fmt is not None}
