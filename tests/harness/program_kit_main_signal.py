"""A worker thread that signals the main thread, as several signal programs of tests/harness do
(program_threads.py only starts and joins). It names ``threading`` and ``signal`` when it runs,
so under patch mode the controlled thread and the modelled ``pthread_kill`` serve it."""

from __future__ import annotations

import signal
import threading

from tests.harness.program_threads import join_all


def signal_the_main_thread(sig: int) -> None:
    """One thread sends ``sig`` to the main thread with ``pthread_kill``; joined before return."""
    main = threading.main_thread().ident
    assert main is not None
    join_all([threading.Thread(target=signal.pthread_kill, args=(main, sig))])
