"""A signal handler that blocks on the main thread it interrupted, while main is at one of several
places with every shared value the same (see ``test_signal_fingerprint.py``)."""

from __future__ import annotations

import os
import signal
import threading


def handler_in_a_loop() -> list[bool]:
    """The worker sends SIGUSR1, then holds the lock the handler takes: the handler, run on the
    main thread at its next step, can block there with main interrupted in any turn of its loop
    (its turn, ``i``, and what it has read are main's locals, nothing shared)."""
    ran = [False]
    held = threading.Lock()
    section = threading.Lock()

    def handler(signum: int, frame: object) -> None:
        with held:
            ran[0] = True

    def sender() -> None:
        os.kill(os.getpid(), signal.SIGUSR1)
        with held:
            pass

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        t = threading.Thread(target=sender)
        t.start()
        reads = []
        for _ in range(3):
            with section:
                pass
            reads.append(ran[0])
        t.join()
        return reads
    finally:
        signal.signal(signal.SIGUSR1, previous)
