"""Random draws in explored code, in patch mode: seeded from the check's seed, never from the OS.

An outside review (session 40, p154) saw a program that picks its lock order with
``random.random()`` proved deadlock-free in some runs of the check and failed in others: the
draws came from the process's generator, seeded by the OS, so the verdict followed an
uncontrolled coin. In a controlled thread the ``random`` module's functions (``random``,
``choice``, ``randrange``, ``shuffle``, ... bound to its hidden instance), ``os.urandom`` (and so
``uuid.uuid4``, ``secrets``, ``random.SystemRandom``) and an unseeded ``random.Random()`` now
draw from a generator of the execution's own:

* each thread has its own sequence, seeded from (the execution's draw seed, the thread's index),
  so a draw is the thread's local computation: it commutes with every other thread's step, as
  DPOR assumes, and an execution is a function of its schedule (replay, the determinism check);
* the draw seed is the check's seed (``Options.seed``, ``--seed``) in every execution of the
  systematic strategies, a replay and Hypothesis' choices; random and PCT sampling vary it from
  execution to execution (``mix(seed, k)`` for the k-th sampled execution that draws), so they
  can find the draw that fails;
* a schedule string of an execution that drew with a draw seed other than 0 carries it
  (``.r<hex>``, ``schedule.py``), so the replay draws the same values.

An exhaustive verdict of a check whose program drew says what it held fixed (``held``). The
draws are not choice points: every value of a draw is not explored (``docs/harness.md``).
Outside a controlled thread every name is the real one.
"""

from __future__ import annotations

import os
import random
from collections import deque
from typing import Any

from model_checks.harness.patch_threads import _running
from model_checks.harness.strategies.randomized import PctChooser, RandomChooser
from model_checks.harness.strategies.simple import ReplayChooser

_real_urandom = os.urandom
_real_seed = random.Random.seed
_MASK = (1 << 64) - 1


class _Check:
    """The running check's draws: its seed, the executions that drew and their draw seeds."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.replayed: int | None = None  # a replayed schedule's draw seed (``replaying``)
        self.sampled = 0  # sampled executions that drew so far
        self.drew = False  # some execution of the check drew
        self.varied = False  # some execution drew with a seed other than the check's
        self.last_own: int = seed  # the draw seed of the last execution not replayed by the search
        # the executions that drew lately, with their draw seeds (kept alive: compared by identity)
        self.recent: deque[tuple[object, int]] = deque(maxlen=8)
        self.execution: object = None  # the execution drawing now, and its threads' generators
        self.draw_seed = seed
        self.generators: dict[int, random.Random] = {}


_CHECK = [_Check(0)]


def new_check(seed: int) -> None:
    """A check (or a replay) begins, with ``Options.seed``."""
    _CHECK[0] = _Check(seed)


def replaying(draw_seed: int | None) -> None:
    """The check is the replay of a schedule string recorded with this draw seed (None: the
    string has none, its execution drew nothing or drew with 0)."""
    _CHECK[0].replayed = 0 if draw_seed is None else draw_seed


def mix(seed: int, k: int) -> int:
    """The draw seed of the ``k``-th sampled execution of a check with ``seed`` (splitmix64)."""
    z = (seed * 0x9E3779B97F4A7C15 + (k + 1) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _draw_seed(state: _Check, ex: Any) -> int:
    chooser = getattr(ex, "chooser", None)
    if state.replayed is not None:
        return state.replayed
    if isinstance(chooser, ReplayChooser):
        # the search replaying its failing execution for the report: the same draws
        return state.last_own
    if isinstance(chooser, (RandomChooser, PctChooser)):
        state.sampled += 1
        return mix(state.seed, state.sampled)
    return state.seed


def generator() -> random.Random | None:
    """The running controlled thread's generator; None outside a controlled thread."""
    running = _running()
    if running is None:
        return None
    ex, tid = running
    state = _CHECK[0]
    if state.execution is not ex:
        state.execution = ex
        state.generators = {}
        state.draw_seed = _draw_seed(state, ex)
        if not isinstance(getattr(ex, "chooser", None), ReplayChooser) or state.replayed is not None:
            state.last_own = state.draw_seed
        state.recent.append((ex, state.draw_seed))
        state.drew = True
        state.varied |= state.draw_seed != state.seed
    gen = state.generators.get(tid)
    if gen is None:
        gen = state.generators[tid] = random.Random(mix(state.draw_seed, tid))
    return gen


def positions(ex: object) -> tuple[tuple[int, int], ...]:
    """Where each thread of ``ex`` is in its sequence of draws (its generator's state, hashed):
    part of the abstract state of ``--strategy states``, whose contract is equal states, equal
    futures. Two states alike but for the draws to come were one state there: a thread that
    drew once a spin found its bug only at a later draw, and the search said "bounded by state
    fingerprint conflated two states" instead of finding it. () while ``ex`` has drawn nothing."""
    state = _CHECK[0]
    if state.execution is not ex or not state.generators:
        return ()
    return tuple(sorted((tid, hash(gen.getstate())) for tid, gen in state.generators.items()))


def draw_seed_of(ex: object) -> int | None:
    """The draw seed ``ex`` drew with; None if it drew nothing. (An execution older than the last
    few that drew is one of a search whose executions all drew with the check's seed, unless
    the check sampled: then its seed is not known, and its string replays with seed 0.)"""
    state = _CHECK[0]
    for seen, seed in reversed(state.recent):
        if seen is ex:
            return seed
    return state.seed if state.drew and not state.varied and state.replayed is None else None


def held() -> str:
    """What an exhaustive verdict of the check that just ran held fixed about random draws ("" if
    its program drew nothing in a controlled thread)."""
    state = _CHECK[0]
    if not state.drew:
        return ""
    if state.replayed is not None:
        return f"random draws: each thread's own sequence, draw seed {state.replayed:#x}"
    varied = " (sampled executions: other seeds)" if state.varied else ""
    return (
        f"random draws: each thread's own sequence from seed {state.seed}, the same in every "
        f"execution{varied}; other values not explored (--strategy random/pct vary them)"
    )


def _module_function(name: str, real: Any) -> Any:
    def replacement(*args: Any, **kwargs: Any) -> Any:
        gen = generator()
        return real(*args, **kwargs) if gen is None else getattr(gen, name)(*args, **kwargs)

    replacement.__name__ = replacement.__qualname__ = name
    replacement.__doc__ = real.__doc__
    return replacement


def _urandom(size: int) -> bytes:
    gen = generator()
    return _real_urandom(size) if gen is None else gen.randbytes(size)


def _seed(self: random.Random, a: Any = None, version: int = 2) -> None:
    """``Random.seed``: with no seed in a controlled thread, a seed from the thread's sequence
    (CPython's C seeding would read the OS's entropy)."""
    if a is None:
        gen = generator()
        if gen is not None:  # (``random.seed()`` itself: the thread's sequence goes on, reseeded)
            a = gen.getrandbits(64)
    _real_seed(self, a, version)


def _replacements() -> list[tuple[Any, str, Any, Any]]:
    out: list[tuple[Any, str, Any, Any]] = []
    hidden = vars(random)["_inst"]
    for name, value in sorted(vars(random).items()):
        if getattr(value, "__self__", None) is hidden and callable(value):
            out.append((random, name, value, _module_function(name, value)))
    out.append((os, "urandom", _real_urandom, _urandom))
    # ``SystemRandom`` and ``random``'s own reads of entropy (``from os import urandom as _urandom``)
    out.append((random, "_urandom", vars(random)["_urandom"], _urandom))
    out.append((random.Random, "seed", _real_seed, _seed))
    return out


REPLACEMENTS = _replacements()
