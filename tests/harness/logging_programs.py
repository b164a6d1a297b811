"""Programs that log through handlers and loggers under ``logging``'s own locks: a handler
configured at import, reachable only through ``logging``'s registry, and loggers made under its
module lock. Both locks were real (re-entrant on the greenlets' one OS thread, ordering nothing):
each of these correct programs was a false data race before session 38 (``patch_logging``)."""

from __future__ import annotations

import logging

from tests.harness.program_threads import start_and_join as _run


class ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:  # under the handler's lock (Handler.handle)
        self.records.append(record.getMessage())


# configured at import, as applications do: the handler is held by the logger only
_log = logging.getLogger("lanecheck.tests.logging_programs")
_log.addHandler(ListHandler())
_log.setLevel(logging.INFO)
_log.propagate = False


def handler_configured_at_import() -> None:
    """Correct: ``emit`` runs under the handler's lock."""
    _run(lambda: _log.info("one"), lambda: _log.info("two"))


class Counted(logging.Logger):
    made = 0

    def __init__(self, name: str, level: int = logging.NOTSET) -> None:
        super().__init__(name, level)
        Counted.made += 1  # under logging's module lock: Manager.getLogger makes it there


def loggers_made_under_the_module_lock() -> None:
    """Correct: each logger is made under ``logging._lock``, the module lock."""
    manager = logging.Manager(logging.root)  # the program's own registry, on the module lock
    manager.setLoggerClass(Counted)
    Counted.made = 0
    _run(lambda: manager.getLogger("a"), lambda: manager.getLogger("b"))
    assert Counted.made == 2


def handler_made_inside() -> None:
    """Correct: a handler made by the explored code has a controlled lock (it always had)."""
    log = logging.getLogger("lanecheck.tests.logging_programs.inside")
    handler = ListHandler()
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
    _run(lambda: log.info("one"), lambda: log.info("two"))
    log.removeHandler(handler)
    assert len(handler.records) == 2


PROVED = [handler_configured_at_import, loggers_made_under_the_module_lock, handler_made_inside]
