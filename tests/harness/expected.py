"""What a catalogued plain ``threading`` program must give in patch mode: each program module
of tests/harness lists its own in ``PROVED`` (proved race free) and ``FOUND`` (a failure, or a
data race at named lines), and tests/harness/test_patched_catalogue.py holds each program to it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Program = Callable[[], object]


@dataclass(frozen=True)
class Fails:
    """The check fails with a failure of ``kind`` whose message holds ``words``."""

    program: Program
    kind: str
    words: str

    @property
    def name(self) -> str:
        return self.program.__name__


@dataclass(frozen=True)
class Races:
    """The check reports a data race on ``what``, naming the lines of the program's module that
    hold each of ``sites``; ``shows`` (the test's id) says what the case shows, where the
    program's name does not."""

    program: Program
    what: str
    sites: tuple[str, ...] = ()
    shows: str = ""

    @property
    def name(self) -> str:
        return self.shows or self.program.__name__
