"""Schedule strings: a compact, copyable name for one execution.

``lc1.<test>.<hash>.<choices>`` where ``<test>`` is 4 hex digits naming the test function,
``<hash>`` 6 hex digits hashing the program's choice points (thread, operation kind, object at
every step) and ``<choices>`` the chosen thread of each step in base 36, ``!`` for a timeout,
``~`` for a spurious wakeup, ``*n`` for a run of n equal choices: ``lc1.3fa2.91c0de.0*4,1,2!,1*3``.
An execution whose program drew random values with a draw seed other than 0 (``patch_random``)
ends with ``.r<hex>``, the seed, so that its replay draws the same values; a string without it
replays with draw seed 0 (every string before session 40 has none).

Limits of ``Schedule.decode`` (checked before anything is expanded, so a hostile string costs
no memory): a repeat count ``n`` is a decimal integer from 1 to ``MAX_REPLAY_STEPS``, a thread
number at most ``MAX_THREAD_ID``, and the whole schedule expands to at most ``MAX_REPLAY_STEPS``
(1,000,000) steps; the text itself is at most ``MAX_SCHEDULE_CHARS`` characters. Beyond a limit
``decode`` raises ``ScheduleFormatError`` naming it. (No execution the harness runs is that long:
``Options.max_steps`` is 2,000 by default.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from model_checks.harness.rt.objects import ALT_MARK, Action, Op

VERSION = "lc1"
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_MARK_ALT = {mark: alt for alt, mark in ALT_MARK.items() if mark}
MAX_REPLAY_STEPS = 1_000_000
MAX_SCHEDULE_CHARS = 10 * MAX_REPLAY_STEPS
MAX_THREAD_ID = 36**4 - 1


class ScheduleFormatError(ValueError):
    """The text is not a schedule string."""


def _b36(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = _DIGITS[r] + out
        if n == 0:
            return out


def test_tag(fn: Callable[..., object]) -> str:
    name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}"
    return hashlib.sha1(name.encode()).hexdigest()[:4]


def choice_hash(steps: Iterable[tuple[int, int, Op]]) -> str:
    h = hashlib.sha1()
    for tid, alt, op in steps:
        h.update(f"{tid}:{alt}:{op.kind}:{op.obj.oid};".encode())
    return h.hexdigest()[:6]


@dataclass(frozen=True)
class Schedule:
    tag: str
    hash: str
    actions: tuple[Action, ...]
    draws: int | None = None  # the draw seed of its random draws (``patch_random``), if not 0

    def encode(self) -> str:
        tokens: list[str] = []
        i = 0
        acts = self.actions
        while i < len(acts):
            j = i
            while j < len(acts) and acts[j] == acts[i]:
                j += 1
            tid, alt = acts[i]
            tok = _b36(tid) + ALT_MARK[alt]
            tokens.append(tok if j - i == 1 else f"{tok}*{j - i}")
            i = j
        draws = f".r{self.draws:x}" if self.draws else ""
        return f"{VERSION}.{self.tag}.{self.hash}.{','.join(tokens)}{draws}"

    @staticmethod
    def decode(text: str) -> Schedule:
        if len(text) > MAX_SCHEDULE_CHARS:
            raise ScheduleFormatError(
                f"schedule string of {len(text):,} characters: the limit is {MAX_SCHEDULE_CHARS:,}"
            )
        parts = text.strip().split(".")
        draws = _draw_seed(parts.pop()) if len(parts) == 5 else None
        if len(parts) != 4 or parts[0] != VERSION:
            raise ScheduleFormatError(
                f"not a schedule string: {_clip(text)!r} (expected {VERSION}.<test>.<hash>.<choices>, "
                "as printed in a failure report)"
            )
        runs: list[tuple[Action, int]] = []
        total = 0
        for tok in filter(None, parts[3].split(",")):
            head, _, count = tok.partition("*")
            alt = 0
            if head and head[-1] in _MARK_ALT:
                alt = _MARK_ALT[head[-1]]
                head = head[:-1]
            # int() alone would take "+1", " 1", "1_0": only plain digits name a thread or a count
            if not head or not head.isascii() or not head.isalnum() or (count and not _decimal(count)):
                raise ScheduleFormatError(f"bad token {_clip(tok)!r} in schedule {_clip(text)!r}")
            if len(head) > 4 or int(head, 36) > MAX_THREAD_ID:
                raise ScheduleFormatError(
                    f"thread {_clip(head)!r} in schedule token {_clip(tok)!r}: the limit is {MAX_THREAD_ID}"
                )
            if (
                len(count) > len(str(MAX_REPLAY_STEPS))
                or (n := int(count) if count else 1) > MAX_REPLAY_STEPS
            ):
                raise ScheduleFormatError(
                    f"repeat count in {_clip(tok)!r} is beyond the limit of {MAX_REPLAY_STEPS:,} replay steps"
                )
            if n < 1:
                raise ScheduleFormatError(f"repeat count in {_clip(tok)!r} must be at least 1")
            total += n
            if total > MAX_REPLAY_STEPS:
                raise ScheduleFormatError(
                    f"schedule expands to more than {MAX_REPLAY_STEPS:,} steps, the replay limit"
                )
            runs.append(((int(head, 36), alt), n))
        actions: list[Action] = []
        for action, n in runs:
            actions += [action] * n
        return Schedule(parts[1], parts[2], tuple(actions), draws)


def _draw_seed(part: str) -> int:
    """The ``r<hex>`` part of a schedule string: a draw seed of at most 64 bits."""
    digits = part[1:]
    hexadecimal = all(c in "0123456789abcdef" for c in digits)
    if not part.startswith("r") or not 0 < len(digits) <= 16 or not hexadecimal:
        raise ScheduleFormatError(f"bad draw seed {_clip(part)!r} (expected r<hex>, at most 16 digits)")
    return int(digits, 16)


def _decimal(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _clip(text: str, limit: int = 60) -> str:
    """Long hostile input is named by its start, not echoed whole."""
    return text if len(text) <= limit else text[:limit] + "..."
