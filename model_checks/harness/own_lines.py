"""The harness's own reading of source lines, kept out of the program's process state.

A report reads the program's source (a race's two sites, a traceback formatted by ``traceback``,
a blocked thread's stack), and ``linecache`` keeps what it read in ``linecache.cache``: a registry
the process watch compares at every step's end (``process_watch.REGISTRIES``). Read within a step
(the race detector reports from the tracer, an exception is formatted as its thread ends), the
harness's own read was taken for the program's write: nearly every failure said "steps changed
process-wide state (linecache.cache)" of programs that never touch it, and DPOR ordered that step
both ways against every other (outside review 14, C2). So the cache is put back as the read found
it: the watch counts a dict written and put back within a step as no change, and a program that
does change it (its own ``traceback.format_exc()``, ``linecache.getline``) is still seen.
"""

from __future__ import annotations

import linecache
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def reading_lines() -> Iterator[None]:
    """Within: the harness reads source lines; after: ``linecache.cache`` holds what it held before
    (the same values, by identity, in the same order). Not around the program's own code (a
    ``__str__``): what it changed would be undone unseen."""
    cache = linecache.cache
    before = dict(cache)
    try:
        yield
    finally:
        if len(cache) != len(before) or any(cache.get(k) is not v for k, v in before.items()):
            cache.clear()
            cache.update(before)
