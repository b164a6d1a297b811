"""Each distinct trace of one search judged once.

Most executions of a harness search differ only in steps that log nothing, so they emit a trace
an earlier execution already emitted; a validator is a pure function of the trace's lines, so the
same lines always get the same verdict. A trace is known by a 128-bit BLAKE2b digest of its lines
(the header's included): memory is 16 bytes plus the kept verdict a distinct trace (or prefix,
where a caller judges prefixes too), however long the traces. Only what the caller keeps (an
allowed verdict) is remembered: a rejected trace fails its search, and is judged again wherever
it appears.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")


class JudgedOnce(Generic[V]):
    """``judge(lines)`` memoised per search: ``seen`` traces checked, ``judged`` judged in full."""

    def __init__(self, judge: Callable[[Sequence[str]], V], keep: Callable[[V], bool]) -> None:
        self._judge = judge
        self._keep = keep
        self._kept: dict[bytes, V] = {}
        self.judged = 0
        self.seen = 0

    def __call__(self, lines: Sequence[str]) -> V:
        self.seen += 1
        key = hashlib.blake2b("\n".join(lines).encode(), digest_size=16).digest()
        known = self._kept.get(key)
        if known is not None:
            return known
        self.judged += 1
        verdict = self._judge(lines)
        if self._keep(verdict):
            self._kept[key] = verdict
        return verdict
