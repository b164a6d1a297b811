"""`lanecheck traces export --design work-lane-lockfree`: spec behaviours written as v2 traces that
`lanecheck validate` allows, and a trace changed to drop what a Stop owes is refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from model_checks.commands import traces, validate
from model_checks.designs.work_lane_lockfree.configs import CONFIGS
from model_checks.designs.work_lane_lockfree.trace.export import trace_event


def _app() -> typer.Typer:
    app = typer.Typer()
    validate.register(app)
    traces.register(app)
    return app


def _validate(*paths: Path) -> subprocess.CompletedProcess[str]:
    """`lanecheck validate` as a port team runs it."""
    command = [sys.executable, "-m", "model_checks", "validate", "--jobs", "1", *map(str, paths)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_cas_words_and_the_full_push_are_the_traces() -> None:
    cas = trace_event(
        {"event": "cas", "lane": 0, "expect": "Idle", "new": "Scheduled", "ok": False, "saw": "Draining"}
    )
    assert cas == {
        "event": "cas",
        "lane": 0,
        "from": "idle",
        "to": "scheduled",
        "ok": False,
        "saw": "draining",
    }
    full = {"event": "post", "lane": 0, "item": "a", "result": "capacity_exceeded", "submit": False}
    assert trace_event(full) == {"event": "push", "lane": 0, "item": "a", "result": "capacity_exceeded"}
    assert trace_event({"event": "push", "lane": 0, "item": "a"})["result"] == "ok"
    assert trace_event({"event": "discard", "lane": 0, "items": ["a"]})["event"] == "reset"


@pytest.mark.timeout(300)
def test_exported_traces_validate_and_a_dropping_stop_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        _app(), ["traces", "export", str(out), "--design", "work-lane-lockfree", "--config", "small"]
    )
    assert result.exit_code == 0, result.output
    files = sorted(out.glob("work-lane-lockfree-small-*.jsonl"))
    assert files, result.output
    header = json.loads(files[0].read_text().splitlines()[0])
    assert (header["design"], header["version"], header["config"]) == (
        "work-lane-lockfree",
        2,
        CONFIGS["small"].header(),
    )
    allowed = _validate(out)
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr

    # The same behaviour with its Stop(discard) reset removed: accepted items nobody answers for.
    with_reset = next(f for f in files if '"event": "reset"' in f.read_text())
    head, *events = (json.loads(line) for line in with_reset.read_text().splitlines())
    kept = [e for e in events if e["event"] != "reset"]
    for seq, e in enumerate(kept, start=1):
        e["seq"] = seq
    dropped = tmp_path / "dropped.jsonl"
    dropped.write_text("\n".join(json.dumps(x) for x in (head, *kept)) + "\n")
    refused = _validate(dropped)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "rule 7" in refused.stdout and "the Stop drops accepted items" in refused.stdout, refused.stdout
