"""A hostile but realistic user's probe of every entry point: ``python -m tests.fuzz.probe_bad_input``.

Each case runs in a forked child with its address space capped (``RLIMIT_AS``, 1 GB) and a
20 s wall-clock limit, and is classed as one of

* ``named error``: refused with an error naming the problem (an exception of the documented kind,
  a refusal ``Result``, or exit 2 with one line / one JSON object);
* ``right answer``: accepted, and what it did is right (every accepted item accounted for);
* ``TRACEBACK``: an undocumented exception, a traceback or an "internal error" on the CLI;
* ``HANG``: still running after 20 s;
* ``RUNAWAY``: ran out of the 1 GB (a ``MemoryError``, or the CLI's "out of memory");
* ``LOST ITEM``: an accepted item neither invoked nor reported discarded;
* ``SILENTLY WRONG``: a bad input taken as a good one, or a wrong answer.

It prints one row per case and a count per class, and exits 1 if any of the last five occurs.

The cases are built per entry point: ``work_lane_arguments``, ``work_lane_accounting``,
``gate_cases``, ``akka_cases`` (the references), ``cli_cases`` and ``trace_cases`` (the CLI);
``sandbox`` runs each one under the limits, ``verdicts`` judges it, ``probe`` drives them all.
"""

from __future__ import annotations

from tests.fuzz.probe_bad_input.probe import main

__all__ = ["main"]
