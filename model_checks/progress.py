"""Progress displays that appear only for work that takes more than a second, only on a terminal.

``spinner`` follows a spec exploration (states, transitions, depth); ``executions`` follows a
harness search (executions, executions/s, preemptions, elapsed, and how much of each bound is
used). Both are transient (gone when the work ends) and absent when ``enabled`` is false (the
commands pass ``not --json``) or the console is not a terminal, so piped and JSON output stay clean.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

Report = Callable[[int, int, int], None]
# (executions so far, most preemptions in one execution, or None where the caller cannot know)
Tick = Callable[[int, int | None], None]

SHOW_AFTER = 1.0  # seconds before a display appears: quick commands never flash one
REFRESH = 0.1  # seconds between two updates of the text (a search reports thousands a second)


def _display(console: Console) -> Progress:
    """The one look of every progress display: a spinner, the live figures, the time elapsed."""
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    return Progress(*columns, console=console, transient=True)


class _Late:
    """A display that appears only once its work has run for ``SHOW_AFTER`` seconds."""

    def __init__(self, console: Console, label: str) -> None:
        self.started = time.perf_counter()
        self.progress = _display(console)
        self.task = self.progress.add_task(label)
        self.shown = False

    def due(self, now: float) -> bool:
        """Is the display showing (started now if its time has come)?"""
        if not self.shown and now - self.started > SHOW_AFTER:
            self.progress.start()
            self.shown = True
        return self.shown

    def show(self, text: str) -> None:
        self.progress.update(self.task, description=text)


@contextmanager
def _late(console: Console, label: str, enabled: bool) -> Iterator[_Late | None]:
    """A ``_Late`` display, or None when nothing is to be shown (not a terminal, or not ``enabled``)."""
    if not enabled or not console.is_terminal:
        yield None
        return
    late = _Late(console, label)
    try:
        yield late
    finally:
        if late.shown:
            late.progress.stop()


@contextmanager
def spinner(console: Console, label: str, enabled: bool = True) -> Iterator[Report | None]:
    """Yield a ``(states, transitions, depth)`` callback that shows live figures after one second."""
    with _late(console, label, enabled) as late:
        if late is None:
            yield None
            return

        def report(states: int, transitions: int, depth: int) -> None:
            if late.due(time.perf_counter()):
                late.show(f"{label}: {states:,} states, {transitions:,} transitions, depth {depth}")

        yield report


def execution_figures(
    executions: int,
    elapsed: float,
    preemptions: int | None = None,
    max_executions: int | None = None,
    time_limit: float | None = None,
) -> str:
    """One line: executions, executions/s, preemptions, and the share of each bound used."""
    rate = executions / elapsed if elapsed > 0 else 0.0
    text = f"{executions:,} executions ({rate:,.0f}/s)"
    if preemptions is not None:
        text += f", max {preemptions} preemptions"
    bounds = []
    if max_executions is not None:
        bounds.append(f"{executions:,}/{max_executions:,} executions")
    if time_limit is not None:
        bounds.append(f"{min(elapsed, time_limit):.0f}/{time_limit:g} s")
    return text + (f"; bound used: {', '.join(bounds)}" if bounds else "; no bound")


@contextmanager
def executions(
    console: Console,
    label: str,
    *,
    enabled: bool = True,
    max_executions: int | None = None,
    time_limit: float | None = None,
) -> Iterator[Tick | None]:
    """Yield a ``tick(executions, preemptions)`` callback for a harness search, or None when
    nothing is to be shown (not a terminal, or ``enabled`` false)."""
    with _late(console, label, enabled) as late:
        if late is None:
            yield None
            return
        last = 0.0

        def tick(done: int, preemptions: int | None) -> None:
            nonlocal last
            now = time.perf_counter()
            if now - last < REFRESH:
                return
            last = now
            if late.due(now):
                figures = execution_figures(done, now - late.started, preemptions, max_executions, time_limit)
                late.show(f"{label}: {figures}")

        yield tick
