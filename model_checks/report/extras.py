"""Pages a design provides itself, beyond what the report derives from every design.

A design lists them in a ``report_pages`` field: ``"module:function"`` strings, each function
``pages(quick: bool) -> Iterable[tuple[str, str]]`` giving (title, HTML fragment) pairs — the
work-stealing simulator's charts, drawn with ``model_checks.report.charts``. A design without the
field has none; a provider that fails is reported on the design's page, never fatal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from model_checks.design import Design, load


@dataclass(frozen=True)
class ExtraPage:
    title: str
    fragment: str  # HTML the design wrote (trusted: it is the design's own code)


def extra_pages(design: Design, quick: bool) -> tuple[list[ExtraPage], list[str]]:
    """The pages, and a sentence per provider that failed."""
    targets: tuple[str, ...] = tuple(design.report_pages)
    pages: list[ExtraPage] = []
    problems: list[str] = []
    for target in targets:
        try:
            provider: Callable[[bool], object] = load(target)
            produced = provider(quick)
            for title, fragment in produced:  # type: ignore[attr-defined]
                pages.append(ExtraPage(str(title), str(fragment)))
        except Exception as problem:  # one design's broken page must not take the site down
            problems.append(f"{target}: {type(problem).__name__}: {problem}")
    return pages, problems
