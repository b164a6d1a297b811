"""One worker process of the soak (``soak.py``): its handler, and its entry point
``python -m model_checks.designs.admission.soak_worker SPEC_JSON``.

The handler does next to nothing (the soak is about the queue, not the work): it fails the jobs
marked to fail, and otherwise logs the run and returns. It is also where the soak's kills land.
A SIGKILL at an arbitrary instant can fall between a store step's commit and the write of that
step's trace batch; the trace then lacks a committed step, which the merge refuses (a seq is
missing) — the trace, not the queue, lost something. So the harness asks for a kill by creating
``KILL_DIR/<pid>``; the victim's next handler run sees it, says it is ready, and waits to be
killed: every kill lands in the middle of a job whose claim is committed and traced.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from reference.jobs.location import open_store
from reference.jobs.tracing import JsonlTraceFile
from reference.jobs.worker import Worker, WorkerOptions

KILL_DIR = "LANECHECK_SOAK_KILL_DIR"
LOG = "LANECHECK_SOAK_LOG"


def append_line(path: str, text: str) -> None:
    """One ``os.write`` in append mode: lines from concurrent processes never interleave."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{text}\n".encode())
    finally:
        os.close(fd)


def soak(payload: Any) -> Any:
    kill_dir = os.environ.get(KILL_DIR)
    if kill_dir:
        me = Path(kill_dir) / str(os.getpid())
        if me.exists():
            me.with_suffix(".ready").touch()
            time.sleep(3600)  # killed here
    if payload.get("fail"):
        raise RuntimeError(f"job {payload['n']} always fails")
    log = os.environ.get(LOG)
    if log:
        append_line(log, str(payload["n"]))
    return None


HANDLERS = {"soak": soak}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m model_checks.designs.admission.soak_worker SPEC_JSON\n")
        return 2
    spec: dict[str, Any] = json.loads(argv[0])
    name = spec["name"]
    with JsonlTraceFile(Path(spec["traces"]) / f"trace-{name}.jsonl", name, {}) as tracer:
        options = WorkerOptions(
            name=name,
            until_done=True,
            lease=spec["lease"],
            poll=spec["poll"],
            retry_after=spec["retry_after"],
            system_memory=False,
        )
        with open_store(spec["store"], tracer=tracer, process=name) as store:
            Worker(store, HANDLERS, options).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
