"""Randomised strategies for spaces too large to cover: uniform random walk and PCT.

PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010): give threads random distinct
priorities >= d, pick d-1 random change points among the first k steps; always run the enabled
thread of highest priority, and at the i-th change point drop the running thread's priority to
d-i. A bug of depth d is found with probability >= 1/(n k^(d-1)) per execution. Every execution
is seeded from (seed, execution index), so a seed reproduces the same executions.
"""

from __future__ import annotations

import random

from model_checks.harness.rt.objects import Action
from model_checks.harness.rt.scheduler import Execution


def _rng(seed: int, index: int) -> random.Random:
    return random.Random(seed * 1_000_003 + index)


class RandomChooser:
    trusted = True  # picks only from ``enabled``
    needs_after_step = False  # the execution may skip calling ``after_step``

    def __init__(self, seed: int, index: int) -> None:
        self.rng = _rng(seed, index)

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        return enabled[self.rng.randrange(len(enabled))]

    def after_step(self, ex: Execution) -> None:
        return None


class PctChooser:
    trusted = True  # picks only from ``enabled``
    needs_after_step = False  # the execution may skip calling ``after_step``

    def __init__(self, seed: int, index: int, depth: int, expected_steps: int) -> None:
        self.rng = _rng(seed, index)
        self.depth = max(1, depth)
        k = max(1, expected_steps)
        self.change_points = {self.rng.randrange(1, k + 1): i for i in range(1, self.depth)}
        self.priority: dict[int, float] = {}
        self._bits = self.rng.getrandbits

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        # Runs at every step, so it is written for speed; what it computes is the textbook rule
        # (and the same random draws as ever, so a seed keeps naming the same executions).
        priority = self.priority
        best = -1
        top = -1.0
        single = True  # every enabled thread has one alternative (the usual case)
        last = -1
        for tid, _ in enabled:  # threads without a priority get one in ``enabled`` order
            if tid == last:
                single = False
                continue
            last = tid
            p = priority.get(tid)
            if p is None:
                p = priority[tid] = self.depth + self.rng.random() * 1000
            if p > top:  # priorities are distinct, so this is the maximum whatever the order
                best, top = tid, p
        point = self.change_points.get(len(ex.steps) + 1)
        if point is not None:
            priority[best] = self.depth - point
            best = max({t for t, _ in enabled}, key=lambda t: priority[t])
        if single:
            # the draws of ``randrange(1)`` (see ``draw_one``), inline: this runs at every step
            bits = self._bits
            while bits(1):
                pass
            for action in enabled:
                if action[0] == best:
                    return action
        alts = [a for a in enabled if a[0] == best]
        return alts[self.rng.randrange(len(alts))]

    def after_step(self, ex: Execution) -> None:
        return None


def draw_one(rng: random.Random) -> None:
    """Consume the random draws of ``rng.randrange(1)`` without its argument handling.

    ``randrange(1)`` always returns 0, but CPython draws ``getrandbits(1)`` until a 0 comes up;
    the draws must still happen so that later choices see the same random stream as before
    (tests/harness/test_harness_speedups.py checks the two stay in step)."""
    while rng.getrandbits(1):
        pass
