"""Connecting to Ray: a local one started here, or a running cluster at an address.

Ray is an optional dependency (the ``ray`` extra), imported only when a command asks for it, so
that without it every other command works and ``--engine ray`` says how to install it.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

INSTALL_HINT = "the ray engine needs Ray, which is not installed here: pip install 'lanecheck[ray]'"


class RayUnavailable(RuntimeError):
    """Ray cannot be used: not installed, or the cluster cannot run what was asked; ``option``
    is the command-line option to change."""

    def __init__(self, message: str, option: str = "--engine") -> None:
        super().__init__(message)
        self.option = option


def require_ray() -> Any:
    """The ``ray`` module (typed ``Any``: only a few of its calls are used, all at this seam)."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None


def connect(address: str | None, cpus: int) -> Any:
    """Ray, initialised: joined to the cluster at ``address``, or a local one with room for
    ``cpus`` one-CPU workers; an already initialised Ray (a test's, a notebook's) is used as it is.

    A cluster with fewer CPUs than ``cpus`` is refused: the workers would wait for room forever.
    """
    ray = require_ray()
    if not ray.is_initialized():
        quiet: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
        if address:
            try:
                ray.init(address=address, **quiet)
            except (ConnectionError, ValueError, RuntimeError) as problem:
                raise RayUnavailable(
                    f"cannot join the Ray cluster at {address}: {problem}", "--address"
                ) from None
        else:
            ray.init(num_cpus=max(cpus, os.cpu_count() or 1), include_dashboard=False, **quiet)
    total = int(ray.cluster_resources().get("CPU", 0))
    if total < cpus:
        raise RayUnavailable(
            f"the Ray cluster has {total} CPUs; {cpus} workers need one each (use --workers {max(total, 1)})",
            "--workers",
        )
    return ray
