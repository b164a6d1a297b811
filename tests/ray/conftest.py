"""One local Ray for the whole directory (starting one takes seconds): 2 CPUs, no dashboard,
workers' output not copied to the test's; and, per module that asks, one pool of explorer actors
kept warm across its checks (starting an actor costs more than a small check). Without Ray the
tests skip, saying why; under CI (``CI=true``) a missing Ray is a failure, since the ``dev``
extra installs it."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from typing import Any

import pytest


def _ray_or_skip() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("ray is not importable under CI: pip install -e '.[dev]' installs it")
        pytest.skip("ray is not installed (pip install 'lanecheck[ray]')")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Under pytest-xdist (`-n`, `--dist loadgroup`) every test here runs in one worker: one local
    # Ray at a time, and the module pools' actors are not fought over by two clusters.
    for item in items:
        if item.nodeid.startswith("tests/ray/"):
            item.add_marker(pytest.mark.xdist_group("ray"))


@pytest.fixture(scope="session")
def ray_session() -> Iterator[Any]:
    ray = _ray_or_skip()
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def pool(ray_session: Any) -> Iterator[Any]:
    """Explorer actors for the module's checks. They hold both of the local Ray's CPUs while the
    module runs, so a check that starts its own actors (the command line's) belongs elsewhere."""
    from model_checks.explorer.ray.pool import Pool

    with Pool(ray_session) as actors:
        yield actors
