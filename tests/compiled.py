"""The check that a group compiled with mypyc at install is the one that runs, shared by the
harness core's and the trace search's tests (``model_checks/compiled_choice.py``)."""

from __future__ import annotations

import importlib
import os
import shutil
import sysconfig

import pytest


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
