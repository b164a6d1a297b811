"""Randomised strategies for spaces too large to cover: uniform random walk and PCT.

PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS 2010): give threads random distinct
priorities >= d, pick d-1 random change points among the first k steps; always run the enabled
thread of highest priority, and at the i-th change point drop the running thread's priority to
d-i. A bug of depth d is found with probability >= 1/(n k^(d-1)) per execution. Every execution
is seeded from (seed, execution index), so a seed reproduces the same executions.
"""

from __future__ import annotations

import random
from typing import Final

from model_checks.harness.rt.enabled import can_run
from model_checks.harness.rt.objects import Action
from model_checks.harness.rt.records import NativeChooser, ThreadInfo
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.strategies.harness_random import harness_rng

_NONE: Final = -1.0  # no priority yet (every priority PCT gives is at least 1)


def _rng(seed: int, index: int) -> random.Random:
    """``random.Random(seed * 1_000_003 + index)``, seeded once: ``Random.__init__`` seeds through
    its Python-level ``seed`` and the C type's seeding behind it, about a tenth of an empty
    execution. ``tests/harness/test_harness_speedups.py`` checks the states are equal. Of the
    harness's own class, which patch mode's wrappers of a program's draws never reach."""
    return harness_rng(seed * 1_000_003 + index)


def below(rng: random.Random, n: int) -> int:
    """``rng.randrange(n)`` for ``n > 0``, drawing exactly what it draws (CPython's
    ``_randbelow_with_getrandbits``) without its Python-level argument handling."""
    k = n.bit_length()
    r: int = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return r


class RandomChooser(NativeChooser):
    trusted = True  # picks only from ``enabled``
    needs_after_step = False  # the execution may skip calling ``after_step``

    def __init__(self, seed: int, index: int) -> None:
        self.rng = _rng(seed, index)

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        return enabled[below(self.rng, len(enabled))]

    def after_step(self, ex: Execution) -> None:
        return None


class PctChooser(NativeChooser):
    trusted = True  # picks only from ``enabled``
    needs_after_step = False  # the execution may skip calling ``after_step``

    def __init__(self, seed: int, index: int, depth: int, expected_steps: int) -> None:
        self.rng = _rng(seed, index)
        self.depth = max(1, depth)
        k = max(1, expected_steps)
        self.change_points = {1 + below(self.rng, k): i for i in range(1, self.depth)}
        # ``_at_point[step]`` is nonzero where a change point falls (a byte string read by index:
        # ``keep`` asks at every step, where a dictionary look-up boxed the step number)
        at_point = bytearray(max(self.change_points, default=0) + 1)
        for step in self.change_points:
            at_point[step] = 1
        self._at_point = bytes(at_point)
        # A thread's priority is its ``ThreadInfo.rank`` (_NONE until it has one; priorities are
        # all >= 1): an unboxed attribute, where ``keep`` reads every live thread's at every step.
        # A chooser runs one execution, whose threads it ranks.
        self._bits = self.rng.getrandbits

    def keep(self, ex: Execution, t: ThreadInfo) -> bool:
        # The rule below without the enabled set, at the steps where its answer is already known:
        # no change point on this step, every live thread has its priority (none is given one in
        # ``enabled`` order here), ``t`` can run, and no thread of a higher priority can, nor has
        # a timeout or spurious-wakeup alternative (those, and the limits cutting them, are
        # ``enabled_actions``' to work out, so any such thread, of any priority, sends the step
        # there). Then ``choose`` would pick ``t`` with the one draw of ``randrange(1)``.
        step = len(ex.steps) + 1
        at_point = self._at_point
        if step < len(at_point) and at_point[step]:
            return False
        tid = t.tid
        p = t.rank
        op = t.pending
        if p == _NONE or op is None or t.finished or not can_run(ex, op, tid):
            return False
        spurious = ex.spurious_wakeups
        for u in ex.live:
            if u is t:
                continue
            q = u.rank
            other = u.pending
            if q == _NONE or other is None:
                return False
            if other.timeout is not None or (spurious and other.kind == "wake"):
                return False
            if q > p and can_run(ex, other, u.tid):
                return False
        bits = self._bits
        while bits(1):
            pass
        return True

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        # Runs at every step, so it is written for speed; what it computes is the textbook rule
        # (and the same random draws as ever, so a seed keeps naming the same executions).
        best = -1
        top = -1.0
        single = True  # every enabled thread has one alternative (the usual case)
        last = -1
        threads = ex.threads
        for tid, _ in enabled:  # threads without a priority get one in ``enabled`` order
            if tid == last:
                single = False
                continue
            last = tid
            t = threads[tid]
            p = t.rank
            if p == _NONE:
                p = self.depth + self.rng.random() * 1000
                t.rank = p
            if p > top:  # priorities are distinct, so this is the maximum whatever the order
                best, top = tid, p
        point = self.change_points.get(len(ex.steps) + 1)
        if point is not None:
            threads[best].rank = float(self.depth - point)
            # the highest priority again (a loop rather than ``max`` with a key: a lambda would
            # make the compiled core allocate its closure at every call)
            top = -1.0
            for tid, _ in enabled:
                p = threads[tid].rank
                if p > top:
                    best, top = tid, p
        if single:
            # the draws of ``randrange(1)`` (see ``draw_one``), inline: this runs at every step
            bits = self._bits
            while bits(1):
                pass
            for action in enabled:
                if action[0] == best:
                    return action
        alts = [a for a in enabled if a[0] == best]
        return alts[below(self.rng, len(alts))]

    def after_step(self, ex: Execution) -> None:
        return None


def draw_one(rng: random.Random) -> None:
    """Consume the random draws of ``rng.randrange(1)`` without its argument handling.

    ``randrange(1)`` always returns 0, but CPython draws ``getrandbits(1)`` until a 0 comes up;
    the draws must still happen so that later choices see the same random stream as before
    (tests/harness/test_harness_speedups.py checks the two stay in step)."""
    while rng.getrandbits(1):
        pass
