"""How a probe case judges what a call did: a named refusal, the expected answer, or nothing lost."""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.fuzz.probe_bad_input.sandbox import Outcome


def _named(exc: BaseException, kinds: tuple[type[BaseException], ...], word: str | None) -> Outcome:
    if isinstance(exc, MemoryError):
        return "RUNAWAY", "MemoryError"
    if not isinstance(exc, kinds):
        return "TRACEBACK", f"{type(exc).__name__}: {exc}"[:200]
    if word is not None and word not in str(exc):
        return "SILENTLY WRONG", f"the error does not name {word}: {exc}"[:200]
    return "named error", f"{type(exc).__name__}: {exc}"[:120]


def raises(
    call: Callable[[], object],
    word: str | None,
    kinds: tuple[type[BaseException], ...] = (TypeError, ValueError),
    cleanup: Callable[[object], object] | None = None,
) -> Outcome:
    """``call`` must raise one of ``kinds`` whose message names ``word``."""
    try:
        got = call()
    except BaseException as exc:
        return _named(exc, kinds, word)
    if cleanup is not None:
        cleanup(got)
    return "SILENTLY WRONG", f"accepted, returned {got!r}"[:200]


def returns(call: Callable[[], object], expected: object, what: str = "named error") -> Outcome:
    try:
        got = call()
    except BaseException as exc:
        return _named(exc, (), None)
    if got == expected:
        return what, f"{got!r}"
    return "SILENTLY WRONG", f"returned {got!r}, expected {expected!r}"[:200]


def stop_any(obj: object) -> None:
    for name in ("stop", "shutdown"):
        method = getattr(obj, name, None)
        if method is not None:
            with contextlib.suppress(Exception):
                method()
            return
    if isinstance(obj, tuple) and len(obj) == 2:
        stop_any(obj[1])


class Ledger:
    """What was accepted, invoked and reported discarded; the accounting the reference promises."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.accepted: list[Any] = []
        self.invoked: list[Any] = []
        self.discarded: list[Any] = []

    def invoke(self, _ctx: object, item: object) -> None:
        with self.lock:
            self.invoked.append(item)

    def discard(self, _where: object, item: object) -> None:
        with self.lock:
            self.discarded.append(item)

    def verdict(self, extra_discarded: list[Any] | None = None, note: str = "") -> Outcome:
        done = Counter(self.invoked) + Counter(self.discarded)
        if extra_discarded:
            # a failure's list repeats what on_discard saw; count each item once
            for item in extra_discarded:
                if done[item] == 0:
                    done[item] += 1
        lost = Counter(self.accepted) - done
        if lost:
            return "LOST ITEM", f"{sum(lost.values())} of {len(self.accepted)} accepted items lost {note}"
        twice = done - Counter(self.accepted)
        if twice:
            return "SILENTLY WRONG", f"items invoked/discarded that were not accepted or twice: {dict(twice)}"
        return "right answer", (
            f"{len(self.accepted)} accepted = {len(self.invoked)} invoked"
            f" + {len(self.discarded)} discarded {note}"
        )
