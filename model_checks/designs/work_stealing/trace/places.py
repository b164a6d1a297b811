"""Where each task of a trace is, in memory that does not grow with the trace.

The validator must remember every task that ever finished (ran to ``done`` or was discarded):
a later ``join`` of it is valid, and a second ``push``, ``run`` or ``done`` of it is not. A
1M-event trace finishes hundreds of thousands of tasks while only tens are alive at once, so a
plain dict of every task grows with the trace. Task names are the pool's own numbering
(``t1``, ``t2``, ..., or plain integers): a finished task whose name is a prefix and a number is
kept as part of a run of consecutive numbers, so the finished tasks cost one run per gap in the
numbering (about the number of tasks alive) instead of one entry each. Any other name is kept
as it is, so no trace is judged differently: only its memory changes.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator

Task = str | int
_NUMBERED = re.compile(r"(\D*)(0|[1-9][0-9]*)")  # no leading zero: "t01" is not "t1"


class Runs:
    """A set of integers as sorted, disjoint runs of consecutive numbers."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []  # inclusive

    def __contains__(self, n: int) -> bool:
        i = bisect_right(self.starts, n) - 1
        return i >= 0 and n <= self.ends[i]

    def add(self, n: int) -> None:
        starts, ends = self.starts, self.ends
        i = bisect_right(starts, n) - 1
        if i >= 0 and n <= ends[i]:
            return
        joins_left = i >= 0 and ends[i] == n - 1
        joins_right = i + 1 < len(starts) and starts[i + 1] == n + 1
        if joins_left and joins_right:
            ends[i] = ends[i + 1]
            del starts[i + 1], ends[i + 1]
        elif joins_left:
            ends[i] = n
        elif joins_right:
            starts[i + 1] = n
        else:
            starts.insert(i + 1, n)
            ends.insert(i + 1, n)

    def __len__(self) -> int:
        return len(self.starts)


def _numbered(task: Task) -> tuple[str | None, int] | None:
    """``(prefix, number)`` of a numbered name (``None`` prefix for an integer task), else None."""
    if isinstance(task, bool):
        return None
    if isinstance(task, int):
        return None, task
    m = _NUMBERED.fullmatch(task)
    return (m[1], int(m[2])) if m else None


class Places:
    """``task -> place`` like a dict, with the finished places (``finished``) kept as runs."""

    def __init__(self, finished: tuple[int, ...]) -> None:
        self.finished = finished
        self.live: dict[Task, int] = {}  # tasks not finished, and finished ones with other names
        self.runs: dict[tuple[int, str | None], Runs] = {}  # (place, prefix) -> numbers

    def get(self, task: Task) -> int | None:
        at = self.live.get(task)
        if at is not None:
            return at
        key = _numbered(task)
        if key is not None:
            for place in self.finished:
                runs = self.runs.get((place, key[0]))
                if runs is not None and key[1] in runs:
                    return place
        return None

    def __getitem__(self, task: Task) -> int:
        at = self.get(task)
        if at is None:
            raise KeyError(task)
        return at

    def __contains__(self, task: object) -> bool:
        return isinstance(task, str | int) and self.get(task) is not None

    def __setitem__(self, task: Task, place: int) -> None:
        key = _numbered(task) if place in self.finished else None
        if key is None:
            self.live[task] = place
            return
        # a task finishes once (the model refuses a second finish before it gets here)
        self.live.pop(task, None)
        self.runs.setdefault((place, key[0]), Runs()).add(key[1])

    def items(self) -> Iterator[tuple[Task, int]]:
        """The tasks kept one by one: every unfinished task (and finished ones with other names)."""
        return iter(self.live.items())


__all__ = ["Places", "Runs"]
