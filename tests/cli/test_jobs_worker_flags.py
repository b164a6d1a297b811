"""`jobs worker` and `jobs pool` share the worker flags (``jobs_pool.worker_options``): both take
every one of them, with the same defaults, and hand them to the worker's options alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from model_checks.commands import jobs, jobs_pool
from reference.jobs.pool import PoolOptions
from reference.jobs.worker import WorkerOptions
from tests.helpers.cli import command_app, refused

FLAGS = [
    "--queue", "a", "--queue", "b", "--lease", "7", "--poll", "0.5", "--retry-after", "2",
    "--memory-limit", "100", "--memory-margin", "3", "--no-admission", "--no-system-memory",
]  # fmt: skip


class _Seen(Exception):
    """Raised by the stand-ins once they hold the options: nothing runs."""


def _options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str, flags: list[str]
) -> WorkerOptions:
    seen: list[WorkerOptions] = []

    def worker(store: Any, table: Any, options: WorkerOptions, progress: Any = None) -> None:
        seen.append(options)
        raise _Seen

    def controller(options: PoolOptions, store: Any, progress: Any = None) -> None:
        seen.append(options.worker)
        raise _Seen

    monkeypatch.setattr(jobs, "Worker", worker)
    monkeypatch.setattr(jobs_pool, "PoolController", controller)
    words = ["jobs", command, "--handlers", "tests.jobs.handlers", "--name", "n", *flags]
    words += ["--store", f"sqlite:///{tmp_path / 'jobs.db'}"]
    if command == "pool":
        words += ["--status-file", str(tmp_path / "status.json")]
    result = CliRunner().invoke(command_app(jobs.register), words)
    assert isinstance(result.exception, _Seen), result.output
    return seen[0]


@pytest.mark.parametrize("flags", [FLAGS, []], ids=["given", "defaults"])
def test_worker_and_pool_build_the_same_worker_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, flags: list[str]
) -> None:
    alone = _options(monkeypatch, tmp_path, "worker", flags)
    pooled = _options(monkeypatch, tmp_path, "pool", flags)
    assert alone == pooled
    if flags:
        assert alone.queues == ("a", "b") and alone.lease == 7.0 and alone.poll == 0.5
        assert alone.retry_after == 2.0 and alone.memory_limit == 100 << 20 and alone.memory_margin == 3 << 20
        assert not alone.admission and not alone.system_memory
    else:
        assert (
            alone.queues is None and alone.lease == 300.0 and alone.poll == 0.2 and alone.retry_after == 1.0
        )
        assert alone.memory_limit is None and alone.admission and alone.system_memory


@pytest.mark.parametrize("command", ["worker", "pool"])
def test_a_lease_of_zero_is_refused_naming_the_option(command: str) -> None:
    result = CliRunner().invoke(
        command_app(jobs.register), ["jobs", command, "--handlers", "tests.jobs.handlers", "--lease", "0"]
    )
    refused(result, "--lease", "more than 0")
