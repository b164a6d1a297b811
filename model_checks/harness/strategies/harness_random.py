"""The harness's own random generators (the sampling choosers'), out of reach of patch mode.

While a program is patched, ``patch_random`` wraps ``random.Random``'s primitive methods at the
class level, so that a program's draws on a shared generator are operations. The choosers draw
too, thousands of times a check, outside any controlled thread: through the wrappers they ran
10-15% fewer sampled executions in the same time. This subclass names CPython's C methods
itself, so its look-ups never reach the wrapped ones."""

from __future__ import annotations

import _random
import random


class HarnessRandom(random.Random):
    random = _random.Random.random
    getrandbits = _random.Random.getrandbits


def harness_rng(seed: int) -> HarnessRandom:
    """``HarnessRandom(seed)``, seeded once: ``Random.__init__`` seeds through the Python-level
    ``seed``, which a program's patched class wraps."""
    rng = HarnessRandom.__new__(HarnessRandom)
    _random.Random.seed(rng, seed)
    rng.gauss_next = None  # type: ignore[attr-defined]  # what ``Random.seed`` sets besides the C state
    return rng
