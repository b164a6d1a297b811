"""``lanecheck explore`` run as a user runs it, in a child process of its own (a fresh interpreter:
its hash seed, its import of the program, its exit): the command-line tests' one way to start it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# This checkout, whose ``model_checks`` the child runs from here.
REPO = Path(__file__).resolve().parents[2]


def explore_command(
    *args: str, cwd: Path = REPO, env: Mapping[str, str | None] | None = None, timeout: float = 150
) -> subprocess.CompletedProcess[str]:
    """``python -m model_checks explore ARGS`` from ``cwd``: its exit code, stdout and stderr as
    text (an exit code is never raised). The child has this process's environment with the
    variables of ``env`` set, or removed where ``None``."""
    child_env = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            child_env.pop(name, None)
        else:
            child_env[name] = value
    return subprocess.run(
        [sys.executable, "-m", "model_checks", "explore", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env=child_env,
    )
