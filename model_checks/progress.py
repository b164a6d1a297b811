"""A progress display that appears only for work that takes more than a second."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

Report = Callable[[int, int, int], None]


@contextmanager
def spinner(console: Console, label: str, enabled: bool = True) -> Iterator[Report | None]:
    """Yield a ``(states, transitions, depth)`` callback that shows live figures after one second."""
    if not enabled or not console.is_terminal:
        yield None
        return
    started = time.perf_counter()
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )
    task = progress.add_task(label)
    shown = False

    def report(states: int, transitions: int, depth: int) -> None:
        nonlocal shown
        if not shown and time.perf_counter() - started > 1.0:
            progress.start()
            shown = True
        if shown:
            progress.update(
                task, description=f"{label}: {states:,} states, {transitions:,} transitions, depth {depth}"
            )

    try:
        yield report
    finally:
        if shown:
            progress.stop()
