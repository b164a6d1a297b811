"""Review 16 on the plug-in route: the walk-through's trace-binding step (F2), a broken plug-in is
one clean line per command (F10), and `lanecheck diagram` on a design without projections says so
(F8)."""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.architecture.test_plugin_design import ENTRY_POINTS, install_metadata, lanecheck, plugin_installed


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    with plugin_installed(tmp_path) as installed:
        yield installed


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


@pytest.mark.timeout(300)
def test_a_command_that_reruns_itself_under_its_hash_seed_still_says_it(tmp_path: Path) -> None:
    # `explore` re-runs itself by os.execve (the same process): it must not take itself for a
    # worker process told to stay quiet
    install_metadata(tmp_path, BROKEN)
    result = lanecheck(tmp_path, "explore", "counter-locked")
    assert result.returncode == 0, result.stdout + result.stderr
    said = [line for line in result.stderr.splitlines() if "not loaded" in line]
    assert len(said) == 1 and said[0].startswith("warning: design plug-in broken not loaded"), result.stderr


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


@pytest.mark.timeout(300)
def test_the_plug_ins_traces_export_and_validate(tmp_path: Path) -> None:
    install_metadata(tmp_path)
    out = tmp_path / "traces"
    exported = lanecheck(tmp_path, "traces", "export", str(out), "--design", "handoff", "-c", "standard")
    assert exported.returncode == 0, exported.stdout + exported.stderr
    judged = lanecheck(tmp_path, "validate", str(out), "--json")
    assert judged.returncode == 0, judged.stdout + judged.stderr


def _real_trace(path: Path, items: int) -> None:
    """The plug-in's reference on real threads, traced with its own header."""
    from reference.tracing import RecordingTracer

    # Imported by name: the package is on sys.path only while the plug-in is installed.
    handoff = importlib.import_module("lanecheck_handoff.reference")
    trace = importlib.import_module("lanecheck_handoff.trace")
    tracer = RecordingTracer(make_header=trace.header)
    box = handoff.Handoff(tracer=tracer, items=items)
    consumer = threading.Thread(target=lambda: [box.take() for _ in range(items)], name="consumer")
    consumer.start()
    for i in range(items):
        box.put(i)
    consumer.join()
    tracer.write_jsonl(path)


@pytest.mark.timeout(300)
def test_a_real_threads_trace_of_the_plug_in_is_judged_by_its_binding(site: Path) -> None:
    good = site / "good.jsonl"
    _real_trace(good, 20)
    allowed = lanecheck(site, "validate", str(good), "--complete", "--json")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    lines = good.read_text().splitlines()
    (site / "prefix.jsonl").write_text("\n".join(lines[:4]) + "\n")
    prefix = lanecheck(site, "validate", str(site / "prefix.jsonl"), "--complete", "--json")
    assert prefix.returncode == 1 and json.loads(prefix.stdout)["rule"] == 4  # the prefix rule
    take = next(i for i, line in enumerate(lines) if '"take"' in line)
    event = json.loads(lines[take])
    lines[take] = json.dumps({**event, "item": 99})
    (site / "bad.jsonl").write_text("\n".join(lines) + "\n")
    refused = lanecheck(site, "validate", str(site / "bad.jsonl"), "--json")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert json.loads(refused.stdout)["rule"] == 3
