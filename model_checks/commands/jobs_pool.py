"""`lanecheck jobs pool` and `lanecheck jobs pool-status`: the adaptive worker pool (docs/jobs.md).

``register(jobs_app)`` adds both to the ``jobs`` group; bad input is a ``CommandError`` naming the
option (exit 2).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from model_checks.commands import CommandError, at_least_zero, count, seconds
from reference.jobs import location, pool_status
from reference.jobs.pool import PoolController, PoolOptions
from reference.jobs.pool_policy import MAX_WORKERS, PoolPolicy
from reference.jobs.worker import WorkerOptions, load_handlers

MB = 1 << 20
MAX_MB = 1 << 30

StatusFileOption = Annotated[
    Path | None,
    typer.Option(
        "--status-file",
        help=f"the pool's status file [default: ${pool_status.ENV}, else ./{pool_status.DEFAULT_FILE}]",
    ),
]


def _store_url(url: str | None) -> str:
    """The store every worker opens: a SQLite path made absolute, a PostgreSQL URL as given."""
    url = url if url is not None else location.default_url()
    try:
        if location.is_postgres(url):
            return location.postgres_url(url)
        return location.PREFIX + str(location.sqlite_path(url).resolve())
    except ValueError as problem:
        raise CommandError(str(problem), "--store") from None


def register(jobs_app: typer.Typer) -> None:
    @jobs_app.command("pool")
    def pool_command(
        handlers: Annotated[str, typer.Option("--handlers", help="importable module with the handlers")],
        min_workers: Annotated[
            int, at_least_zero("workers kept running", "--min-workers", high=MAX_WORKERS)
        ] = 1,
        max_workers: Annotated[int, count("most workers at once", "--max-workers", high=MAX_WORKERS)] = 4,
        interval: Annotated[float, seconds("between reconciles", "--interval")] = 1.0,
        idle_grace: Annotated[
            float, seconds("idle time before the workers above the minimum stop", "--idle-grace")
        ] = 30.0,
        worker_memory: Annotated[
            int, count("a worker's assumed peak until one is measured, MiB", "--worker-memory", high=MAX_MB)
        ] = 64,
        memory_margin: Annotated[
            int,
            at_least_zero(
                "memory kept free on top of the peaks, MiB (pool and workers)", "--memory-margin", high=MAX_MB
            ),
        ] = 64,
        shutdown_timeout: Annotated[
            float | None,
            seconds(
                "at shutdown, kill workers still busy after this (leases return their jobs)",
                "--shutdown-timeout",
            ),
        ] = None,
        queue: Annotated[
            list[str] | None, typer.Option("--queue", help="claim only from these queues")
        ] = None,
        lease: Annotated[float, seconds("lease of a claimed job", "--lease")] = 300.0,
        poll: Annotated[float, seconds("a worker's wait between empty claims", "--poll")] = 0.2,
        retry_after: Annotated[float, seconds("retry-after of a denied job", "--retry-after")] = 1.0,
        memory_limit: Annotated[
            int | None, count("each worker's memory limit, MiB", "--memory-limit", high=MAX_MB)
        ] = None,
        admission: Annotated[
            bool, typer.Option("--admission/--no-admission", help="the workers' process-level checks")
        ] = True,
        system_memory: Annotated[
            bool, typer.Option("--system-memory/--no-system-memory", help="read cgroup / /proc/meminfo")
        ] = True,
        name: Annotated[
            str, typer.Option("--name", help="the pool's name; workers are NAME-1, NAME-2, ...")
        ] = "pool",
        status_file: StatusFileOption = None,
        quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines on stderr")] = False,
        store_url: Annotated[
            str | None, typer.Option("--store", help="sqlite:///PATH, a path or postgresql://...")
        ] = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the report as one JSON object")] = False,
    ) -> None:
        """Run worker processes, scaled between --min-workers and --max-workers; SIGTERM stops them."""
        if lease <= 0:
            raise CommandError("must be more than 0 seconds", "--lease")
        if interval <= 0:
            raise CommandError("must be more than 0 seconds", "--interval")
        if min_workers > max_workers:
            raise CommandError(f"{min_workers} exceeds --max-workers {max_workers}", "--min-workers")
        try:
            load_handlers(handlers)  # refused here, once, rather than by every worker it starts
        except ValueError as problem:
            raise CommandError(str(problem), "--handlers") from None
        url = _store_url(store_url)
        policy = PoolPolicy(min_workers, max_workers, idle_grace, worker_memory * MB, memory_margin * MB)
        worker = WorkerOptions(
            name=name,
            queues=tuple(queue) if queue else None,
            lease=lease,
            poll=poll,
            admission=admission,
            system_memory=system_memory,
            memory_limit=None if memory_limit is None else memory_limit * MB,
            memory_margin=memory_margin * MB,
            retry_after=retry_after,
        )
        status_path = status_file if status_file is not None else pool_status.default_path()
        if not status_path.parent.is_dir():
            raise CommandError(f"no such directory: {status_path.parent}", "--status-file")
        options = PoolOptions(url, handlers, policy, worker, interval, status_path, shutdown_timeout)

        def progress(event: dict[str, Any]) -> None:
            if not quiet:
                fields = " ".join(
                    f"{k}={v}" for k, v in event.items() if k not in ("event", "pool", "report")
                )
                sys.stderr.write(f"[{name}] {event['event']} {fields}\n")

        try:
            store = location.open_store(url)
        except (ValueError, sqlite3.DatabaseError) as problem:
            raise CommandError(f"cannot open the store: {problem}", "--store") from None
        controller = PoolController(options, store, progress=progress)
        previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        for s in previous:
            signal.signal(s, lambda *_: controller.request_stop())
        try:
            report = controller.run()
        finally:
            for s, handler in previous.items():
                signal.signal(s, handler)
            close = getattr(store, "close", None)
            if close is not None:
                close()
        doc = report.as_json()
        text = (
            f"{name}: {report.started} workers started, {report.stopped} stopped, {report.lost} lost,"
            f" {report.killed} killed"
        )
        sys.stdout.write((json.dumps(doc) if json_out else text) + "\n")

    @jobs_app.command("pool-status")
    def pool_status_command(
        status_file: StatusFileOption = None,
        json_out: Annotated[bool, typer.Option("--json", help="print the status as one JSON object")] = False,
    ) -> None:
        """The pool's last reconcile: workers, backlog, memory, decision; STALE if its controller is gone."""
        path = status_file if status_file is not None else pool_status.default_path()
        try:
            doc = pool_status.read(path)
        except ValueError as problem:
            raise CommandError(str(problem), "--status-file") from None
        sys.stdout.write((json.dumps(doc) if json_out else "\n".join(pool_status.lines(doc))) + "\n")
