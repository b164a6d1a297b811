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
    def __init__(self, seed: int, index: int) -> None:
        self.rng = _rng(seed, index)

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        return enabled[self.rng.randrange(len(enabled))]

    def after_step(self, ex: Execution) -> None:
        return None


class PctChooser:
    def __init__(self, seed: int, index: int, depth: int, expected_steps: int) -> None:
        self.rng = _rng(seed, index)
        self.depth = max(1, depth)
        k = max(1, expected_steps)
        self.change_points = {self.rng.randrange(1, k + 1): i for i in range(1, self.depth)}
        self.priority: dict[int, float] = {}

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        for tid, _ in enabled:
            if tid not in self.priority:
                self.priority[tid] = self.depth + self.rng.random() * 1000
        best = max({t for t, _ in enabled}, key=lambda t: self.priority[t])
        step = len(ex.steps) + 1
        if step in self.change_points:
            self.priority[best] = self.depth - self.change_points[step]
            best = max({t for t, _ in enabled}, key=lambda t: self.priority[t])
        alts = [a for a in enabled if a[0] == best]
        return alts[self.rng.randrange(len(alts))]

    def after_step(self, ex: Execution) -> None:
        return None
