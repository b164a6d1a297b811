"""`lanecheck jobs enqueue|worker|status|budgets|workflow`: drive a ``reference.jobs`` store.

Every sub-command takes ``--store sqlite:///PATH`` or ``--store postgresql://...`` (default
``$LANECHECK_JOBS_STORE``, else ``lanecheck-jobs.db`` in the current directory; opened by
``reference.jobs.location.open_store``) and ``--json``. Bad input is a ``CommandError``
naming the option (exit 2); a job refused because its cost alone exceeds a budget is one too
(``--cost``): nothing was stored.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from model_checks.commands import CommandError, at_least_zero, count, jobs_pool, seconds
from model_checks.commands.jobs_pool import (
    MAX_MB,
    AdmissionOption,
    HandlersOption,
    JsonOption,
    LeaseOption,
    MemoryLimitOption,
    PollOption,
    QueuesOption,
    QuietOption,
    RetryAfterOption,
    StoreOption,
    SystemMemoryOption,
    trace_dir_option,
)
from reference.jobs.budgets import BudgetRefusal, Budgets
from reference.jobs.core import StoreCore
from reference.jobs.model import MAX_ATTEMPTS, MAX_BACKOFF, MAX_COST, MAX_DELAY, MAX_PRIORITY, JobSpec
from reference.jobs.tracing import JsonlTraceFile
from reference.jobs.worker import Worker
from reference.jobs.workflow import Workflow

ENQUEUE_PROCESS = "enqueue"
"""The process name ``jobs enqueue`` traces under (its file: trace-enqueue-PID.jsonl)."""
BUDGETS_PROCESS = "budgets"
WORKER_EXTRAS = (
    ("refused", "refused"),
    ("expired", "expired leases reaped"),
    ("lease_lost", "leases lost"),
    ("released", "released"),
)
"""The report's other counts, in the summary line when not 0 (a run that refused or lost jobs says so)."""


SPEC_OPTIONS = {
    "queue": "QUEUE",
    "payload": "--payload",
    "handler": "--handler",
    "priority": "--priority",
    "delay": "--delay",
    "max_attempts": "--max-attempts",
    "backoff": "--backoff",
    "concurrency_group": "--group",
    "concurrency_limit": "--limit",
    "cost_units": "--cost",
}
"""The ``enqueue`` option of each ``JobSpec`` field, which its refusals name first."""


def _bounded_seconds(help: str, option: str, high: float) -> Any:
    """``seconds`` with the bound ``JobSpec`` sets, so the help and the refusal say the same."""
    return typer.Option(option, min=0.0, max=high, help=f"{help} [0..{high:,.0f} s]")


def _out(doc: Any, as_json: bool, text: str) -> None:
    sys.stdout.write((json.dumps(doc, ensure_ascii=True) if as_json else text) + "\n")


@contextmanager
def _store(url: str | None, *, must_exist: bool = False, **extra: Any) -> Iterator[StoreCore]:
    store = jobs_pool.open_command_store(url, must_exist=must_exist, **extra)
    try:
        yield store
    finally:
        store.close()


MAX_TRACE_SUFFIX = 1000


def _trace_file(trace_dir: Path | None, process: str, config: dict[str, Any]) -> JsonlTraceFile | None:
    """This process's trace, DIR/trace-NAME-PID.jsonl (the pid keeps two runs of one name apart).

    A file is never reused (a header opens each): when the name is taken (a reused pid, or
    several commands run in one process) the next free DIR/trace-NAME-PID-N.jsonl is used."""
    if trace_dir is None:
        return None
    if not trace_dir.is_dir():
        raise CommandError(f"no such directory: {trace_dir}", "--trace-dir")
    stem = f"trace-{process}-{os.getpid()}"
    for n in range(1, MAX_TRACE_SUFFIX + 1):
        path = trace_dir / (f"{stem}.jsonl" if n == 1 else f"{stem}-{n}.jsonl")
        try:
            return JsonlTraceFile(path, process, config)
        except FileExistsError:
            continue
        except OSError as problem:
            raise CommandError(f"cannot create {path}: {problem.strerror}", "--trace-dir") from None
    raise CommandError(f"{MAX_TRACE_SUFFIX} trace files named {stem}*.jsonl exist already", "--trace-dir")


def _change_budgets(
    url: str | None, queues: dict[str, int], groups: dict[str, int], clear: bool, trace_dir: Path | None
) -> Budgets:
    """Merge the change into the store's budgets in one transaction (traced when asked to)."""
    tracer = _trace_file(trace_dir, BUDGETS_PROCESS, {"command": "budgets"})
    try:
        with _store(url, tracer=tracer, process=BUDGETS_PROCESS) as store:
            try:
                return store.merge_budgets(queues, groups, clear=clear)
            except (TypeError, ValueError) as problem:
                raise CommandError(str(problem), "--queue/--group") from None
    finally:
        if tracer is not None:
            tracer.close()


def _json_option(text: str, option: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as problem:
        raise CommandError(f"not JSON: {problem.msg} at column {problem.colno}", option) from None


def _budget_pairs(pairs: list[str], option: str) -> dict[str, int]:
    table: dict[str, int] = {}
    for pair in pairs:
        key, sep, value = pair.rpartition("=")
        if not sep or not key or not (value.isascii() and value.isdigit()):
            raise CommandError(f"expected NAME=UNITS (e.g. providers=20), got {pair!r}", option)
        table[key] = int(value)
    return table


def register(app: typer.Typer) -> None:
    jobs_app = typer.Typer(
        help="A job queue with resource-aware admission (docs/jobs.md).", no_args_is_help=True
    )
    app.add_typer(jobs_app, name="jobs")
    jobs_pool.register(jobs_app)

    @jobs_app.command("enqueue")
    def enqueue_command(
        queue: Annotated[str, typer.Argument(help="queue name")],
        payload: Annotated[str, typer.Option("--payload", help="the job's payload, as JSON")] = "null",
        handler: Annotated[
            str | None, typer.Option("--handler", help="handler name [default: the queue]")
        ] = None,
        priority: Annotated[
            int, count("higher runs first", "--priority", low=-MAX_PRIORITY, high=MAX_PRIORITY)
        ] = 0,
        delay: Annotated[
            float, _bounded_seconds("wait before the job is claimable", "--delay", MAX_DELAY)
        ] = 0.0,
        max_attempts: Annotated[
            int, count("attempts before it fails", "--max-attempts", high=MAX_ATTEMPTS)
        ] = 3,
        backoff: Annotated[
            float, _bounded_seconds("wait before the 2nd attempt, doubling", "--backoff", MAX_BACKOFF)
        ] = 1.0,
        group: Annotated[str | None, typer.Option("--group", help="concurrency_group")] = None,
        limit: Annotated[
            int | None, count("concurrency_limit of the group", "--limit", high=MAX_COST)
        ] = None,
        cost: Annotated[int, at_least_zero("cost_units", "--cost", high=MAX_COST)] = 1,
        trace_dir: Annotated[
            Path | None,
            trace_dir_option(
                "trace the enqueue to DIR/trace-enqueue-PID.jsonl (-N added if taken); a trace"
                " validates only with every job's enqueue"
            ),
        ] = None,
        store_url: StoreOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Add one job; prints its id."""
        try:
            spec = JobSpec(
                queue,
                _json_option(payload, "--payload"),
                handler=handler,
                priority=priority,
                delay=delay,
                max_attempts=max_attempts,
                backoff=backoff,
                concurrency_group=group,
                concurrency_limit=limit,
                cost_units=cost,
            )
        except (TypeError, ValueError) as problem:
            field = str(problem).split(" ", 1)[0]
            raise CommandError(str(problem), SPEC_OPTIONS.get(field)) from None
        tracer = _trace_file(trace_dir, ENQUEUE_PROCESS, {"command": "enqueue"})
        try:
            with _store(store_url, tracer=tracer, process=ENQUEUE_PROCESS) as store:
                try:
                    job = store.enqueue(spec)
                except BudgetRefusal as problem:
                    raise CommandError(f"refused, nothing stored: {problem}", "--cost") from None
        finally:
            if tracer is not None:
                tracer.close()
        _out(job.as_json(), json_out, f"enqueued job {job.id} on {job.queue}")

    @jobs_app.command("worker")
    def worker_command(
        ctx: typer.Context,
        handlers: HandlersOption,
        queue: QueuesOption = None,
        once: Annotated[
            bool, typer.Option("--once", help="one-shot: stop when nothing is claimable now")
        ] = False,
        until_done: Annotated[
            bool,
            typer.Option(
                "--until-done", help="stop when no job (of --queue, if given) is pending or processing"
            ),
        ] = False,
        time_budget: Annotated[
            float | None,
            seconds("stop claiming after this; admission denies jobs that would not fit", "--time-budget"),
        ] = None,
        max_jobs: Annotated[int | None, count("stop after running this many jobs", "--max-jobs")] = None,
        lease: LeaseOption = 300.0,
        poll: PollOption = 0.2,
        retry_after: RetryAfterOption = 1.0,
        memory_limit: MemoryLimitOption = None,
        memory_margin: Annotated[
            int, at_least_zero("margin added to a handler's peak, MiB", "--memory-margin", high=MAX_MB)
        ] = 64,
        admission: AdmissionOption = True,
        system_memory: SystemMemoryOption = True,
        name: Annotated[str | None, typer.Option("--name", help="worker name [default: w<pid>]")] = None,
        trace_dir: Annotated[
            Path | None,
            trace_dir_option("write this process's trace to DIR/trace-NAME-PID.jsonl (-N added if taken)"),
        ] = None,
        quiet: QuietOption = False,
        store_url: StoreOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Claim and run jobs; progress on stderr, a summary (or --json report) on stdout."""
        worker_name = name if name is not None else f"w{os.getpid()}"
        options = jobs_pool.worker_options(
            worker_name,
            ctx.params,
            once=once,
            until_done=until_done,
            time_budget=time_budget,
            max_jobs=max_jobs,
        )
        table = jobs_pool.handler_table(handlers)
        tracer = _trace_file(trace_dir, worker_name, {"handlers": handlers, "lease": lease})

        progress = jobs_pool.progress_printer(worker_name, quiet, "worker")

        try:
            with _store(store_url, tracer=tracer, process=worker_name) as store:
                worker = Worker(store, table, options, progress=progress)
                # A second SIGTERM (or Ctrl-C) calls stop again: the worker gives its job back now.
                with jobs_pool.stopping_on((signal.SIGTERM, signal.SIGINT), worker.stop):
                    report = worker.run()
        finally:
            if tracer is not None:
                tracer.close()
        denied = sum(report.denied.values())
        _out(
            report.as_json(),
            json_out,
            f"{worker_name}: {report.done} done, {report.failed} failed, {report.retried} retried,"
            f" {denied} denials{jobs_pool.also(report, WORKER_EXTRAS)}, stopped: {report.stopped}",
        )

    @jobs_app.command("status")
    def status_command(
        job: Annotated[int | None, count("show one job", "--job", low=1)] = None,
        workflow: Annotated[
            int | None, count("show one workflow run and its budget", "--workflow", low=1)
        ] = None,
        limit: Annotated[int, at_least_zero("deferred and failed jobs listed", "--limit", high=1000)] = 20,
        store_url: StoreOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Counts per state, active cost against budgets, deferred jobs with their denial reasons."""
        with _store(store_url, must_exist=True) as store:
            if job is not None:
                found = store.get(job)
                if found is None:
                    raise CommandError(f"no job {job}", "--job")
                _out(found.as_json(), json_out, json.dumps(found.as_json(), indent=2))
                return
            if workflow is not None:
                run = store.workflow(workflow)
                if run is None:
                    raise CommandError(f"no workflow run {workflow}", "--workflow")
                _out(run, json_out, json.dumps(run, indent=2))
                return
            status = store.status(limit)
        doc = status.as_json()
        lines = [" ".join(f"{k}={v}" for k, v in status.counts.items())]
        for kind in ("queues", "groups"):
            budgets = getattr(status.budgets, kind)
            for key in sorted(set(budgets) | set(status.active_cost[kind])):
                active = status.active_cost[kind].get(key, 0)
                lines.append(f"{kind[:-1]} {key}: active {active} / {budgets.get(key, '-')}")
        now = time.time()  # the stores' clock
        lines += [
            f"deferred job {d['id']} ({d['queue']}): {d['reason']} ({d['denials']} denials,"
            f" retry in {max(d['retry_at'] - now, 0):.0f} s)"
            for d in status.deferred
        ]
        lines += [f"failed job {f['id']} ({f['queue']}): {f['reason']}" for f in status.failed]
        lines += [
            f"failed workflow run {r['id']} ({r['name']}): {r['reason']}" for r in status.failed_workflows
        ]
        _out(doc, json_out, "\n".join(lines))

    @jobs_app.command("budgets")
    def budgets_command(
        queue: Annotated[list[str] | None, typer.Option("--queue", help="NAME=UNITS, repeatable")] = None,
        group: Annotated[list[str] | None, typer.Option("--group", help="NAME=UNITS, repeatable")] = None,
        clear: Annotated[bool, typer.Option("--clear", help="remove every budget")] = False,
        trace_dir: Annotated[
            Path | None,
            trace_dir_option(
                "trace a change to DIR/trace-budgets-PID.jsonl (-N added if taken); the trace"
                " checker judges denials against the budgets it saw set"
            ),
        ] = None,
        store_url: StoreOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Show the budgets; with --queue/--group set them (merged into the current ones)."""
        if queue or group or clear:
            queues = _budget_pairs(queue or [], "--queue")
            groups = _budget_pairs(group or [], "--group")
            current = _change_budgets(store_url, queues, groups, clear, trace_dir)
        else:
            with _store(store_url, must_exist=True) as store:
                current = store.budgets()
        _out(current.as_json(), json_out, json.dumps(current.as_json()))

    @jobs_app.command("workflow")
    def workflow_command(
        definition: Annotated[Path, typer.Argument(metavar="FILE", help="a workflow definition (JSON)")],
        state: Annotated[str, typer.Option("--state", help="the initial state, a JSON object")] = "{}",
        store_url: StoreOption = None,
        json_out: JsonOption = False,
    ) -> None:
        """Start a workflow run from a JSON definition (docs/jobs.md); prints the run's id.

        Exit 1 when the run failed as it started (a budget constraint, a step over budget): the
        run is stored, failed, with its reason (``status --workflow ID``)."""
        try:
            doc = json.loads(definition.read_text(encoding="utf-8"))
        except OSError as problem:
            raise CommandError(f"cannot read {definition}: {problem.strerror}", "FILE") from None
        except (json.JSONDecodeError, UnicodeError) as problem:
            raise CommandError(f"{definition} is not JSON: {problem}", "FILE") from None
        initial = _json_option(state, "--state")
        if not isinstance(initial, dict):
            raise CommandError("must be a JSON object", "--state")
        try:
            flow = Workflow.from_definition(doc)
        except (TypeError, ValueError) as problem:
            raise CommandError(f"{definition}: {problem}", "FILE") from None
        with _store(store_url) as store:
            run_id = store.start_workflow(flow, initial)
            run = store.workflow(run_id)
        assert run is not None
        if run["status"] == "failed":  # at start (a constraint, a step refused): said, and exit 1
            _out(run, json_out, f"workflow run {run_id} ({flow.name}) failed at start: {run['reason']}")
            raise typer.Exit(1)
        _out(run, json_out, f"started workflow run {run_id} ({flow.name})")
