"""One worker process of the adaptive pool: ``python -m reference.jobs.pool_child OPTIONS_JSON``.

It runs the ordinary worker loop (``worker.Worker``) on its own store connection and tells the
controller what it does, one JSON line per worker event on stdout (``ready`` first), so the
controller knows which workers are busy. It stops after the job in hand (the job is finished,
never abandoned) when

* it gets SIGTERM (the controller scaling down or shutting down), or
* its controller is gone (kill -9): its parent changes, or its stdout pipe breaks.

SIGUSR1 (the controller's shutdown timeout), or a second SIGTERM, stops it at once instead: the
job in hand is given back (``release``: pending again, its attempt not spent) and it exits.

It runs in a session of its own, so a Ctrl-C at the terminal reaches the controller only, which
then stops its workers in order.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import Any

from reference.jobs import location
from reference.jobs.worker import Worker, WorkerOptions, load_handlers

PARENT_CHECK = 0.25
"""Seconds between checks that the controller is still our parent."""


def _watch_parent(worker: Worker, parent: int) -> None:
    while not worker.stop_requested:
        if os.getppid() != parent:  # reparented: the controller died
            worker.stop_requested = True
            return
        time.sleep(PARENT_CHECK)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m reference.jobs.pool_child OPTIONS_JSON\n")
        return 2
    spec: dict[str, Any] = json.loads(argv[0])
    options = WorkerOptions(**spec["worker"])
    handlers = load_handlers(spec["handlers"])
    store = location.open_store(spec["store"])
    worker: Worker | None = None

    def tell(event: dict[str, Any]) -> None:
        try:
            sys.stdout.write(json.dumps(event, default=str) + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):  # the controller's end of the pipe is gone: so is the controller
            if worker is not None:
                worker.stop_requested = True

    worker = Worker(store, handlers, options, progress=tell)
    # SIGTERM: stop after the job in hand (a second one: now); SIGUSR1: give the job back now.
    signal.signal(signal.SIGTERM, lambda *_: worker.stop())
    signal.signal(signal.SIGUSR1, lambda *_: worker.stop(now=True))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(worker, spec["parent"]), daemon=True).start()
    tell({"event": "ready", "worker": options.name, "pid": os.getpid()})
    try:
        worker.run()
    finally:
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
