"""Programs whose locks made at import live in a package outside their module
(tests/harness/outside_lib): given only the program's module, ``patched()`` patches the program's
modules it reaches (``patch_modules``). Session 38's review found such a module traced but not
patched: its correctly locked counter was a data race, its globals were not restored, and a sleep
under its real lock hung the check (tests/harness/test_patch_modules.py, from the command line)."""

from __future__ import annotations

from tests.harness.expected import Races
from tests.harness.outside_lib import counting
from tests.harness.outside_lib.counting import bump, record
from tests.harness.outside_lib.registry import REGISTRY
from tests.harness.program_threads import start_and_join as _run


def module_of_another_folder() -> None:
    """Correct: the imported module's lock orders the increments (was a false data race)."""
    counting.total = 0
    _run(counting.bump, counting.bump)
    assert counting.total == 2


def function_imported_by_name() -> None:
    """Correct: ``from counting import bump``, its module reached through ``bump.__module__``."""
    counting.total = 0
    _run(bump, bump)
    assert counting.total == 2


def lock_two_modules_away() -> None:
    """Correct: ``record`` appends under the lock of a module ``counting`` imports."""
    _run(lambda: record(1), lambda: record(2))


def object_imported_by_name() -> None:
    """Correct: an object of another module's class made at import, with its own lock."""
    _run(lambda: REGISTRY.add("a"), lambda: REGISTRY.add("a"))


def unlocked_in_another_folder() -> None:
    """Racy: the imported module's counter without its lock (still found once it is patched)."""
    _run(counting.bump_unlocked, counting.bump_unlocked)


PROVED = [
    module_of_another_folder,
    function_imported_by_name,
    lock_two_modules_away,
    object_imported_by_name,
]
FOUND = [Races(unlocked_in_another_folder, "global total")]
