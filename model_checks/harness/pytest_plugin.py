"""pytest plugin of the interleaving harness (registered through the ``pytest11`` entry point)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lanecheck")
    group.addoption(
        "--lanecheck-replay",
        action="store",
        default=None,
        help="replay exactly this harness schedule string in every @explore test that matches it",
    )
