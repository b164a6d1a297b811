"""Schedule strings: a compact, copyable name for one execution.

``lc1.<test>.<hash>.<choices>`` where ``<test>`` is 4 hex digits naming the test function,
``<hash>`` 6 hex digits hashing the program's choice points (thread, operation kind, object at
every step) and ``<choices>`` the chosen thread of each step in base 36, ``!`` for a timeout,
``~`` for a spurious wakeup, ``*n`` for a run of n equal choices: ``lc1.3fa2.91c0de.0*4,1,2!,1*3``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from model_checks.harness.rt.objects import ALT_MARK, Action, Op

VERSION = "lc1"
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_MARK_ALT = {mark: alt for alt, mark in ALT_MARK.items() if mark}


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
        return f"{VERSION}.{self.tag}.{self.hash}.{','.join(tokens)}"

    @staticmethod
    def decode(text: str) -> Schedule:
        parts = text.strip().split(".")
        if len(parts) != 4 or parts[0] != VERSION:
            raise ScheduleFormatError(
                f"not a schedule string: {text!r} (expected {VERSION}.<test>.<hash>.<choices>, "
                "as printed in a failure report)"
            )
        actions: list[Action] = []
        for tok in filter(None, parts[3].split(",")):
            head, _, count = tok.partition("*")
            alt = 0
            if head and head[-1] in _MARK_ALT:
                alt = _MARK_ALT[head[-1]]
                head = head[:-1]
            try:
                tid = int(head, 36)
                n = int(count) if count else 1
            except ValueError:
                raise ScheduleFormatError(f"bad token {tok!r} in schedule {text!r}") from None
            actions += [(tid, alt)] * n
        return Schedule(parts[1], parts[2], tuple(actions))
