"""``rt/native.py`` uses the C helpers only while the built module is newer than every one of its
sources (``_race_tracer.c``, ``_fingerprint_hot.c`` and its header): an edit not yet rebuilt
falls back to the Python code, with a warning that names the file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from model_checks.harness.rt import native


def _built() -> str:
    if sys.version_info[:2] != (3, 11):
        pytest.skip("the C helpers are built on CPython 3.11 only")
    try:
        from model_checks.harness import _race_tracer
    except ImportError:
        pytest.skip("the C helpers were not built")
    return str(_race_tracer.__file__)


@pytest.mark.parametrize(
    "edited", [0, 1, 2], ids=["_race_tracer.c", "_fingerprint_hot.c", "_fingerprint_hot.h"]
)
def test_a_source_newer_than_the_built_module_turns_the_c_helpers_off(
    edited: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = os.path.getmtime(_built())
    monkeypatch.delenv("LANECHECK_PURE", raising=False)
    monkeypatch.delenv("LANECHECK_RACE_TRACER", raising=False)
    sources = []
    for k, name in enumerate(("_race_tracer.c", "_fingerprint_hot.c", "_fingerprint_hot.h")):
        path = tmp_path / name
        path.write_text("/* a source */\n")
        when = built + 60 if k == edited else built - 60
        os.utime(path, (when, when))
        sources.append(str(path))
    monkeypatch.setattr(native, "_SOURCES", sources)
    with pytest.warns(UserWarning, match="is newer than its built module"):
        module, why = native._native()
    name = ("_race_tracer.c", "_fingerprint_hot.c", "_fingerprint_hot.h")[edited]
    assert module is None and why == f"{name} is newer than its built module"


def test_sources_older_than_the_built_module_keep_the_c_helpers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = os.path.getmtime(_built())
    monkeypatch.delenv("LANECHECK_PURE", raising=False)
    monkeypatch.delenv("LANECHECK_RACE_TRACER", raising=False)
    path = tmp_path / "_fingerprint_hot.c"
    path.write_text("/* a source */\n")
    os.utime(path, (built - 60, built - 60))
    monkeypatch.setattr(native, "_SOURCES", [str(path)])
    module, why = native._native()
    assert module is not None and why == "built at install"
