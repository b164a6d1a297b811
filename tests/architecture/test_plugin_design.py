"""A third party's design plugs in through the ``lanecheck.designs`` entry point, with no fork.

The design is ``tests/plugin_design/lanecheck_handoff``; the test makes it an installed
distribution (its metadata with the entry point) in a temporary folder, exactly what
``pip install`` of the port team's package would leave, and runs lanecheck on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from model_checks import registry

PLUGIN_SOURCE = Path(__file__).resolve().parents[1] / "plugin_design"
ENTRY_POINTS = "[lanecheck.designs]\nhandoff = lanecheck_handoff.design:DESIGN\n"


def install_metadata(site: Path, entry_points: str = ENTRY_POINTS) -> None:
    dist = site / "lanecheck_handoff-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: lanecheck-handoff\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(entry_points)


@contextmanager
def plugin_installed(site: Path) -> Iterator[Path]:
    """The plug-in installed in ``site`` and on sys.path for this process, the registry reloaded
    on the way in and out (for fixtures of any scope)."""
    install_metadata(site)
    sys.path[:0] = [str(site), str(PLUGIN_SOURCE)]
    registry._loaded = None
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        sys.path.remove(str(PLUGIN_SOURCE))
        registry._loaded = None


@pytest.fixture
def plugin_site(tmp_path: Path) -> Iterator[Path]:
    with plugin_installed(tmp_path) as site:
        yield site


def lanecheck(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(PLUGIN_SOURCE)])}
    return subprocess.run(
        [sys.executable, "-m", "model_checks", *args], env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.timeout(60)
def test_the_entry_point_registers_the_design(plugin_site: Path) -> None:
    names = list(registry.designs())
    assert names[: len(registry.BUILT_IN)] == [
        "work-lane",
        "schedule-gate",
        "akka-mailbox",
        "work-stealing",
        "event-pool",
        "admission",
        "work-lane-lockfree",
        "job-wakeup",
        "job-pool",
    ]
    assert names[-1] == "handoff"
    assert registry.design("handoff").summary.startswith("a two-thread handoff")


@pytest.mark.timeout(60)
def test_a_broken_plug_in_is_named_and_skipped(tmp_path: Path) -> None:
    install_metadata(tmp_path, "[lanecheck.designs]\nbroken = lanecheck_no_such_module:DESIGN\n")
    sys.path.insert(0, str(tmp_path))
    registry._loaded = None
    registry._errors.clear()
    try:
        with pytest.warns(UserWarning, match="broken = lanecheck_no_such_module:DESIGN"):
            names = list(registry.designs())
        assert "work-lane" in names and "broken" not in names
        assert any("ModuleNotFoundError" in e for e in registry.load_errors())
    finally:
        sys.path.remove(str(tmp_path))
        registry._loaded = None
        registry._errors.clear()


@pytest.mark.timeout(300)
def test_lanecheck_check_runs_the_plug_in_design(tmp_path: Path) -> None:
    install_metadata(tmp_path)
    holds = lanecheck(tmp_path, "check", "handoff", "-c", "standard", "--json")
    assert holds.returncode == 0, holds.stdout + holds.stderr
    assert json.loads(holds.stdout)["verdict"] == "holds"
    caught = lanecheck(tmp_path, "check", "handoff", "-c", "small", "--variant", "check-then-wait", "--json")
    assert caught.returncode == 1, caught.stdout + caught.stderr
    violation = json.loads(caught.stdout)["violation"]
    assert (violation["property"], violation["length"]) == ("Deadlock", 3)


@pytest.mark.timeout(300)
def test_lanecheck_verify_runs_the_plug_in_design(tmp_path: Path) -> None:
    install_metadata(tmp_path)
    result = lanecheck(tmp_path, "verify", "--design", "handoff", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {(r["area"], r["subject"]): r for r in json.loads(result.stdout)["rows"]}
    assert set(rows) == {
        ("spec", "handoff [standard]"),
        ("spec-mutant", "handoff --variant check-then-wait"),
        ("harness", "handoff scenario producer-consumer"),
        ("harness-mutant", "handoff scenario check-then-wait"),
    }
    assert all(r["ok"] for r in rows.values())
    assert rows[("harness", "handoff scenario producer-consumer")]["actual"] == "exhaustive"
    assert rows[("harness-mutant", "handoff scenario check-then-wait")]["actual"] == "caught"
