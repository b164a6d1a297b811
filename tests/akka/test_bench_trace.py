"""The Akka bench trace (`lanecheck bench validate`) is one fixed interleaving per seed of the
real reference, and the validator accepts it as a finished run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from model_checks.conformance import validate_file
from model_checks.designs.akka_mailbox.bench import TRACE_BENCH, akka_scheduled
from model_checks.designs.akka_mailbox.trace import validate, without_append_events

pytestmark = pytest.mark.timeout(120)

SENDS = 30  # per producer: a few hundred events, every event kind of the workload


def _write(path: Path, seed: int) -> bytes:
    TRACE_BENCH.write(path, SENDS, seed)
    return path.read_bytes()


def test_the_same_seed_writes_the_same_trace_bytes(tmp_path: Path) -> None:
    assert _write(tmp_path / "a.jsonl", 3) == _write(tmp_path / "b.jsonl", 3)


def test_the_seed_chooses_the_interleaving(tmp_path: Path) -> None:
    traces = {_write(tmp_path / f"{seed}.jsonl", seed) for seed in range(3)}
    assert len(traces) == 3


def test_the_scheduled_trace_is_a_whole_run_of_every_thread() -> None:
    config, events = akka_scheduled(SENDS, 0)
    assert config == {"workers": 2, "throughput": 2, "logs_append": True}
    sends = [e for e in events if e["event"] == "send"]
    assert len(sends) == 2 * SENDS
    assert {e["event"] for e in events} >= {"suspend", "resume", "close", "process", "run_end"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_validator_accepts_the_bench_trace_as_a_finished_run(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "t.jsonl"
    TRACE_BENCH.write(path, SENDS, seed)
    verdict = validate_file(path, complete=TRACE_BENCH.complete)
    assert verdict.code == 0, verdict.message


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bench_trace_without_its_appends_is_accepted_too(seed: int) -> None:
    """The format before `append` (an older port's) on the same interleaving: the same verdict."""
    config, events = akka_scheduled(SENDS, seed)
    assert any(e["event"] == "append" for e in events)
    validate(*without_append_events(config, events), complete=True)


def test_the_bench_trace_with_a_message_processed_twice_is_rejected(tmp_path: Path) -> None:
    """The bench's trace is judged, not waved through: one process event repeated is refused."""
    path = tmp_path / "t.jsonl"
    TRACE_BENCH.write(path, SENDS, 0)
    header, *lines = path.read_text().splitlines()
    events = [json.loads(line) for line in lines]
    at = next(i for i, e in enumerate(events) if e["event"] == "process")
    events.insert(at + 1, dict(events[at]))
    for seq, e in enumerate(events, 1):
        e["seq"] = seq
    path.write_text("\n".join([header, *(json.dumps(e) for e in events)]) + "\n")
    verdict = validate_file(path, complete=True)
    assert verdict.code == 1
    assert f"seq {at + 2}" in verdict.message


def test_a_scheduled_run_that_fails_writes_no_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run the harness reports as failed (here: cut by a step bound far too small) is not a trace."""
    from model_checks.designs.akka_mailbox import bench

    monkeypatch.setattr(bench, "_STEPS_PER_SEND", 1)
    with pytest.raises(RuntimeError, match="failed"):
        akka_scheduled(SENDS, 0)
