"""Review 16 on the plug-in route: a broken plug-in is one clean line per command (F10), and
`lanecheck diagram` on a design without projections says so (F8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.architecture.test_plugin_design import ENTRY_POINTS, install_metadata, lanecheck

BROKEN = ENTRY_POINTS + "broken = lanecheck_no_such_module:DESIGN\n"


@pytest.mark.timeout(300)
def test_a_broken_plug_in_is_one_warning_line_per_command_not_per_process(tmp_path: Path) -> None:
    install_metadata(tmp_path, BROKEN)
    result = lanecheck(tmp_path, "verify", "--design", "handoff", "--area", "spec", "--jobs", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    said = [line for line in result.stderr.splitlines() if "not loaded" in line]
    assert said == [
        "warning: design plug-in broken not loaded: ModuleNotFoundError: No module named"
        " 'lanecheck_no_such_module' [entry point broken = lanecheck_no_such_module:DESIGN"
        " (lanecheck.designs)]"
    ]
    assert "UserWarning" not in result.stderr and "_load()" not in result.stderr


@pytest.mark.timeout(120)
def test_diagram_of_a_design_without_projections_says_so(tmp_path: Path) -> None:
    install_metadata(tmp_path)
    result = lanecheck(tmp_path, "diagram", "handoff")
    assert result.returncode == 2
    assert "handoff declares no projections (Design.projections)" in " ".join(result.stderr.split())
    assert "'lane'" not in result.stderr


@pytest.mark.timeout(120)
def test_diagram_defaults_to_the_designs_first_projection(tmp_path: Path) -> None:
    install_metadata(tmp_path)
    result = lanecheck(tmp_path, "diagram", "job-pool")
    assert result.returncode == 0, result.stderr
    assert "title: job-pool: phase (small)" in result.stdout
