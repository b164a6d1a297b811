"""Fixtures of the lock-free Work Lane tests."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest


@pytest.fixture
def quiet_reference() -> Iterator[None]:
    """Seeded bugs make the reference's last-resort loggers print a traceback per execution."""
    log = logging.getLogger("reference")
    level = log.level
    log.setLevel(logging.CRITICAL)
    yield
    log.setLevel(level)
