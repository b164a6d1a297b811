"""Plain ``threading`` programs whose threads import a module for the first time at once, its body
pausing at a scheduling point (``harness/patch_imports.py``, session 38). Before, the second
thread re-entered the real module lock the first held (both on one OS thread) and saw the module
half made: ``AttributeError``, a false alarm that plain DFS reached."""

from __future__ import annotations

import threading

from tests.harness.program_threads import start_and_join


def lazy_import_in_two_threads() -> None:
    def use() -> None:
        import tests.harness.lazily_imported as lazily

        assert lazily.VALUE == 42

    start_and_join(use, use)


def lazy_import_under_a_lock() -> None:
    lock = threading.Lock()

    def use() -> None:
        with lock:
            from tests.harness import lazily_imported

        assert lazily_imported.VALUE == 42

    start_and_join(use, use)


def import_cycle_in_two_threads() -> None:
    """Each thread imports one of two modules that import each other after a pause: CPython's
    import machinery finds the deadlock between the two module locks and lets one thread take
    the other module half made (200 of 200 real runs end well), so no deadlock is reported."""

    def first() -> None:
        import tests.harness.import_cycle_first  # noqa: F401

    def second() -> None:
        import tests.harness.import_cycle_second  # noqa: F401

    start_and_join(first, second)


def each_execution_imports_afresh() -> None:
    """A module the explored code imports is made again in each execution, also where the
    program reaches it as its package's attribute (``from pkg import mod``: the package kept the
    first execution's module, so the second found ``USES`` already holding its item)."""
    lock = threading.Lock()

    def hold() -> None:
        with lock:
            pass

    start_and_join(hold, hold)  # (two orders: two executions)
    from tests.harness import lazily_imported

    lazily_imported.USES.append(1)
    assert lazily_imported.USES == [1], lazily_imported.USES


PROVED = [
    lazy_import_in_two_threads,
    lazy_import_under_a_lock,
    import_cycle_in_two_threads,
    each_execution_imports_afresh,
]
