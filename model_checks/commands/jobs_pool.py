"""`lanecheck jobs pool` and `lanecheck jobs pool-status`: the adaptive worker pool (docs/jobs.md).

``register(jobs_app)`` adds both to the ``jobs`` group; bad input is a ``CommandError`` naming the
option (exit 2).
"""

from __future__ import annotations

import json
import signal
import sqlite3
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from model_checks.commands import CommandError, at_least_zero, count, seconds
from reference.jobs import location, pool_status
from reference.jobs.core import StoreCore
from reference.jobs.pool import PoolController, PoolOptions
from reference.jobs.pool_policy import MAX_WORKERS, PoolPolicy
from reference.jobs.worker import Handler, WorkerOptions, load_handlers

MB = 1 << 20
MAX_MB = 1 << 30

# The options `jobs worker` and `jobs pool` share (``jobs.py`` imports them from here). The worker
# flags among them keep one parameter name in both commands: ``worker_options`` reads them by it.
HandlersOption = Annotated[str, typer.Option("--handlers", help="importable module with the handlers")]
QueuesOption = Annotated[list[str] | None, typer.Option("--queue", help="claim only from these queues")]
LeaseOption = Annotated[float, seconds("lease of a claimed job", "--lease")]
PollOption = Annotated[float, seconds("a worker's wait between empty claims", "--poll")]
RetryAfterOption = Annotated[float, seconds("retry-after of a denied job", "--retry-after")]
MemoryLimitOption = Annotated[
    int | None, count("a worker's memory limit, MiB (worker headroom check)", "--memory-limit", high=MAX_MB)
]
AdmissionOption = Annotated[
    bool, typer.Option("--admission/--no-admission", help="the workers' process-level admission checks")
]
SystemMemoryOption = Annotated[
    bool, typer.Option("--system-memory/--no-system-memory", help="read cgroup / /proc/meminfo")
]
QuietOption = Annotated[bool, typer.Option("--quiet", help="no progress lines on stderr")]
StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="sqlite:///PATH, a path, or postgresql://USER@HOST/DB"
        f" [default: ${location.ENV}, else sqlite:///{location.DEFAULT_FILE}]",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="print the result as one JSON object")]


def progress_printer(name: str, quiet: bool, own: str) -> Callable[[dict[str, Any]], None]:
    """Progress events as ``[NAME] event k=v ...`` lines on stderr (none when ``quiet``); ``own``
    is the field naming the reporter (``worker``, ``pool``), which the prefix already says."""

    def progress(event: dict[str, Any]) -> None:
        if not quiet:
            fields = " ".join(f"{k}={v}" for k, v in event.items() if k not in ("event", own, "report"))
            sys.stderr.write(f"[{name}] {event['event']} {fields}\n")

    return progress


def trace_dir_option(help_text: str) -> Any:
    """``--trace-dir DIR``: where a command writes this process's trace; ``help_text`` says what."""
    return typer.Option("--trace-dir", help=help_text)


StatusFileOption = Annotated[
    Path | None,
    typer.Option(
        "--status-file",
        help=f"the pool's status file [default: ${pool_status.ENV}, else ./{pool_status.DEFAULT_FILE}]",
    ),
]


@contextmanager
def stopping_on(signals: tuple[signal.Signals, ...], stop: Callable[[], object]) -> Iterator[None]:
    """While the block runs each of ``signals`` calls ``stop``; the handlers before are put back."""
    previous = {s: signal.getsignal(s) for s in signals}
    for s in signals:
        signal.signal(s, lambda *_: stop())
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def handler_table(handlers: str) -> dict[str, Handler]:
    """The handlers ``--handlers`` names, or a refusal naming the option."""
    try:
        return load_handlers(handlers)
    except ValueError as problem:
        raise CommandError(str(problem), "--handlers") from None


def worker_options(name: str, given: Mapping[str, Any], **limits: Any) -> WorkerOptions:
    """A worker's options from the worker flags as a command parsed them (its ``ctx.params``);
    ``limits`` are the options only ``jobs worker`` takes.

    Typer has no option groups (typer#153), so `jobs worker` and `jobs pool` each declare the
    shared flags as parameters of their own, named alike with the ``*Option`` types above; the
    flags are read here by those names so that the two commands cannot hand them on differently.
    """
    if given["lease"] <= 0:
        raise CommandError("must be more than 0 seconds", "--lease")
    queues, memory_limit = given["queue"], given["memory_limit"]
    return WorkerOptions(
        name=name,
        queues=tuple(queues) if queues else None,
        lease=given["lease"],
        poll=given["poll"],
        admission=given["admission"],
        system_memory=given["system_memory"],
        memory_limit=None if memory_limit is None else memory_limit * MB,
        memory_margin=given["memory_margin"] * MB,
        retry_after=given["retry_after"],
        **limits,
    )


PG_CONNECT_TIMEOUT = 10.0
"""Seconds a command waits for a PostgreSQL server before it gives up (``--store``)."""


def _unreachable() -> tuple[type[Exception], ...]:
    # psycopg is imported by open_store for a postgresql:// URL only: a SQLite command never loads it.
    psycopg = sys.modules.get("psycopg")
    return (psycopg.OperationalError,) if psycopg is not None else ()


def open_command_store(url: str | None, *, must_exist: bool = False, **extra: Any) -> StoreCore:
    """The store ``--store`` names, or a refusal naming ``--store``. ``must_exist``: a command that
    only reads refuses a SQLite file that is not there, where opening it would create an empty
    store and report on that (a mistyped path read as "0 jobs")."""
    url = url if url is not None else location.default_url()
    if location.is_postgres(url):
        extra.setdefault("connect_timeout", PG_CONNECT_TIMEOUT)
    elif must_exist:
        try:
            path = location.sqlite_path(url)
        except ValueError as problem:
            raise CommandError(str(problem), "--store") from None
        if not path.exists():
            raise CommandError(f"no store at {path} (this command reads one; it creates none)", "--store")
    try:
        return location.open_store(url, **extra)
    except ValueError as problem:
        raise CommandError(str(problem), "--store") from None
    except sqlite3.DatabaseError as problem:
        raise CommandError(f"cannot open the store: {problem}", "--store") from None
    except _unreachable() as problem:
        raise CommandError(f"cannot reach the PostgreSQL store: {problem}", "--store") from None


def also(report: object, counts: tuple[tuple[str, str], ...]) -> str:
    """``", N words"`` for each of ``counts`` (field, words) that is not 0 in ``report``."""
    return "".join(f", {getattr(report, f)} {words}" for f, words in counts if getattr(report, f))


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
        ctx: typer.Context,
        handlers: HandlersOption,
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
                "at shutdown, tell workers still busy after this to give their jobs back (no attempt spent)",
                "--shutdown-timeout",
            ),
        ] = None,
        queue: QueuesOption = None,
        lease: LeaseOption = 300.0,
        poll: PollOption = 0.2,
        retry_after: RetryAfterOption = 1.0,
        memory_limit: MemoryLimitOption = None,
        admission: AdmissionOption = True,
        system_memory: SystemMemoryOption = True,
        name: Annotated[
            str, typer.Option("--name", help="the pool's name; workers are NAME-1, NAME-2, ...")
        ] = "pool",
        status_file: StatusFileOption = None,
        quiet: QuietOption = False,
        store_url: StoreOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Run worker processes, scaled between --min-workers and --max-workers; SIGTERM stops them."""
        worker = worker_options(name, ctx.params)
        if interval <= 0:
            raise CommandError("must be more than 0 seconds", "--interval")
        if min_workers > max_workers:
            raise CommandError(f"{min_workers} exceeds --max-workers {max_workers}", "--min-workers")
        handler_table(handlers)  # refused here, once, rather than by every worker it starts
        url = _store_url(store_url)
        policy = PoolPolicy(min_workers, max_workers, idle_grace, worker_memory * MB, memory_margin * MB)
        status_path = status_file if status_file is not None else pool_status.default_path()
        if not status_path.parent.is_dir():
            raise CommandError(f"no such directory: {status_path.parent}", "--status-file")
        options = PoolOptions(url, handlers, policy, worker, interval, status_path, shutdown_timeout)

        progress = progress_printer(name, quiet, "pool")

        store = open_command_store(url)
        controller = PoolController(options, store, progress=progress)
        try:
            with stopping_on((signal.SIGTERM, signal.SIGINT), controller.request_stop):
                report = controller.run()
        finally:
            store.close()
        doc = report.as_json()
        text = (
            f"{name}: {report.started} workers started, {report.stopped} stopped, {report.lost} lost,"
            f" {report.killed} killed"
            + also(report, (("told_to_give_back", "told to give back"), ("released", "jobs released")))
        )
        sys.stdout.write((json.dumps(doc) if json_out else text) + "\n")

    @jobs_app.command("pool-status")
    def pool_status_command(
        status_file: StatusFileOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """The pool's last reconcile: workers, backlog, memory, decision; STALE if its controller is gone."""
        path = status_file if status_file is not None else pool_status.default_path()
        try:
            doc = pool_status.read(path)
        except ValueError as problem:
            raise CommandError(str(problem), "--status-file") from None
        sys.stdout.write((json.dumps(doc) if json_out else "\n".join(pool_status.lines(doc))) + "\n")
