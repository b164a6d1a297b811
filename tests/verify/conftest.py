"""A plug-in design copied to a temporary folder, so that a test may change its code."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from model_checks import registry

PLUGIN_SOURCE = Path(__file__).resolve().parents[1] / "plugin_design" / "lanecheck_handoff"
ENTRY_POINTS = "[lanecheck.designs]\nhandoff = lanecheck_handoff.design:DESIGN\n"


def _forget_plugin() -> None:
    for name in [m for m in sys.modules if m == "lanecheck_handoff" or m.startswith("lanecheck_handoff.")]:
        del sys.modules[name]
    registry._loaded = None


@pytest.fixture
def handoff(tmp_path: Path) -> Iterator[Path]:
    """The handoff design installed from a copy in ``tmp_path``; yields the copy's package folder."""
    site = tmp_path / "site"
    package = site / "lanecheck_handoff"
    shutil.copytree(PLUGIN_SOURCE, package, ignore=shutil.ignore_patterns("__pycache__"))
    dist = site / "lanecheck_handoff-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lanecheck-handoff\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(ENTRY_POINTS)
    sys.path.insert(0, str(site))
    _forget_plugin()
    try:
        yield package
    finally:
        sys.path.remove(str(site))
        _forget_plugin()


@pytest.fixture
def frozen_tree(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """lanecheck's own files read once per test: others editing the tree cannot change a digest.

    Files under ``tmp_path`` (a test's copy of a plug-in, its fake packages) are read as they are
    now, so that a test's own edits show. What a live module imports, and a live file's hash, are
    the first answers the test got.
    """
    from model_checks.certificate import deps

    def live(path: Path | None) -> bool:
        return path is not None and tmp_path not in path.parents

    hashes: dict[Path, str] = {}
    real_sha256 = deps.sha256

    def sha256(path: Path) -> str:
        if not live(path):
            return real_sha256(path)
        if path not in hashes:
            hashes[path] = real_sha256(path)
        return hashes[path]

    imports: dict[str, set[str]] = {}
    real_imports = deps.Graph.imports

    def graph_imports(self: deps.Graph, name: str) -> set[str]:
        if not live(deps.path_of(name)):
            return real_imports(self, name)
        if name not in imports:
            imports[name] = real_imports(self, name)
        return imports[name]

    on_import: dict[tuple[str, bool], frozenset[str]] = {}
    real_on_import = deps.imported_on_import

    def imported_on_import(name: str, everywhere: bool = False) -> frozenset[str]:
        if not live(deps.path_of(name)):
            return real_on_import(name, everywhere)
        if (name, everywhere) not in on_import:
            on_import[name, everywhere] = real_on_import(name, everywhere)
        return on_import[name, everywhere]

    listed: dict[Path, tuple[Path, ...]] = {}
    real_data_files = deps.data_files

    def data_files(folder: Path) -> tuple[Path, ...]:
        if tmp_path in folder.parents or folder == tmp_path:
            return real_data_files(folder)
        if folder not in listed:
            listed[folder] = real_data_files(folder)
        return listed[folder]

    monkeypatch.setattr(deps, "sha256", sha256)
    monkeypatch.setattr(deps.Graph, "imports", graph_imports)
    monkeypatch.setattr(deps, "imported_on_import", imported_on_import)
    monkeypatch.setattr(deps, "data_files", data_files)
