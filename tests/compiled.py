"""The check that a group compiled with mypyc at install is the one that runs, and a script run
in a fresh interpreter that picks the compiled code or the sources, shared by the harness core's,
the trace search's and the spec sequences' tests (``model_checks/compiled_choice.py``)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def assert_installed_compiled(kind: str, describe: str, module: str, loaded: str | None = None) -> None:
    """``kind``/``describe`` of the group say compiled, and its ``module`` loads compiled code (the
    file another process ``loaded`` it from, if given); skipped, saying why, where the sources were
    asked for, are newer, or there is no compiler."""
    if os.environ.get("LANECHECK_PURE") == "1":
        pytest.skip("LANECHECK_PURE=1: the pure-Python sources were asked for")
    if "newer" in describe:
        pytest.skip(f"{describe}: rebuild with `pip install -e .`")
    compiler = sysconfig.get_config_var("CC") or "cc"
    if kind != "compiled" and shutil.which(compiler.split()[0]) is None:
        pytest.skip(f"{describe}: no C compiler ({compiler}) to build it with")
    assert kind == "compiled", f"{describe} (setup.py compiles it with mypyc at install)"
    if loaded is None:
        loaded = importlib.import_module(module).__file__ or ""
    assert not loaded.endswith(".py"), (module, loaded)


def fresh_interpreter(script: str, *args: str, pure: bool, timeout: float | None = None) -> str:
    """The standard output of ``python -c script *args`` run at the project's root in a fresh
    interpreter, where the environment picks the compiled groups or, ``pure``, their Python
    sources (``LANECHECK_PURE=1``); it must exit 0 (else the end of its standard error is shown)."""
    env = {k: v for k, v in os.environ.items() if k != "LANECHECK_PURE"}
    if pure:
        env["LANECHECK_PURE"] = "1"
    command = [sys.executable, "-c", script, *args]
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
