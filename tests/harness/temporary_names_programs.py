"""A program for ``test_temporary_names_per_process.py``: the name of a temporary file a thread
made, returned as the execution's outcome."""

from __future__ import annotations

import tempfile

from tests.harness.program_threads import start_and_join


def a_threads_temporary_name() -> str:
    names: list[str] = []

    def work() -> None:
        with tempfile.NamedTemporaryFile() as fh:
            names.append(fh.name)

    start_and_join(work)
    return names[0]
