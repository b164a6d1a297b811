"""pytest plugin of the interleaving harness (registered through the ``pytest11`` entry point).

``pytest --lanecheck-replay=lc1.…`` replays exactly that schedule in every ``@explore`` test it
belongs to (the schedule names its test); the other ``@explore`` tests are skipped.
"""

from __future__ import annotations

import pytest

from model_checks.harness.api import set_replay_override
from model_checks.harness.schedule import Schedule, ScheduleFormatError


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lanecheck")
    group.addoption(
        "--lanecheck-replay",
        action="store",
        default=None,
        help="replay exactly this harness schedule string in every @explore test that matches it",
    )


def pytest_configure(config: pytest.Config) -> None:
    schedule = config.getoption("--lanecheck-replay", default=None)
    if schedule:
        try:
            Schedule.decode(schedule)
        except ScheduleFormatError as exc:
            raise pytest.UsageError(str(exc)) from None
    set_replay_override(schedule)


def pytest_unconfigure(config: pytest.Config) -> None:
    set_replay_override(None)
