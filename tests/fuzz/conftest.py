"""Hypothesis profiles for the bad-input fuzz suite.

The suite runs short in ``.ci/run`` (profile ``fuzz-ci``) and long as a marked job:
``LANECHECK_FUZZ=long pytest -m soak tests/fuzz`` (profile ``fuzz-long``). Every
property is the same in both: a named error or a right answer, within bounded time
and memory, and never an item lost.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fuzz-ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz-long",
    max_examples=5_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

LONG = os.environ.get("LANECHECK_FUZZ") == "long"
PROFILE = "fuzz-long" if LONG else "fuzz-ci"
