"""``rt/native.py`` uses the C helpers only while the built module is newer than every one of its
sources (every ``_*.c`` file beside it and their header ``_native.h``: the ones setup.py builds
the extension from): an edit not yet rebuilt falls back to the Python code,
with a warning that names the file."""

from __future__ import annotations

import os
import re
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


NAMES = [os.path.basename(source) for source in native._SOURCES]


def test_the_sources_checked_are_the_ones_setup_py_builds_from() -> None:
    setup = (Path(__file__).resolve().parents[2] / "setup.py").read_text()
    built_from = set(re.findall(r"model_checks/harness/(_\w+\.[ch])\b", setup))
    assert built_from == set(NAMES)


@pytest.mark.parametrize("edited", NAMES)
def test_a_source_newer_than_the_built_module_turns_the_c_helpers_off(
    edited: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = os.path.getmtime(_built())
    monkeypatch.delenv("LANECHECK_PURE", raising=False)
    monkeypatch.delenv("LANECHECK_RACE_TRACER", raising=False)
    sources = []
    for name in NAMES:
        path = tmp_path / name
        path.write_text("/* a source */\n")
        when = built + 60 if name == edited else built - 60
        os.utime(path, (when, when))
        sources.append(str(path))
    monkeypatch.setattr(native, "_SOURCES", sources)
    with pytest.warns(UserWarning, match="is newer than its built module"):
        module, why = native._native()
    assert module is None and why == f"{edited} is newer than its built module"


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
