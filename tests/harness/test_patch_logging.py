"""``logging``'s locks while patched (``patch_logging``): the module lock and the lock of every
live handler stand in for controlled ones and come back afterwards; a handler the explored code
made gets a real lock when patching ends. The programs are catalogued
(tests/harness/logging_programs.py)."""

from __future__ import annotations

import logging

import pytest

from model_checks.harness import check, patched
from model_checks.harness.patch_imported import StandIn
from tests.harness import logging_programs as prog


@pytest.mark.timeout(60)
def test_the_module_lock_and_a_handlers_lock_stand_in_and_come_back() -> None:
    handler = prog._log.handlers[0]
    real_module_lock, real_handler_lock = logging._lock, handler.lock  # type: ignore[attr-defined]
    with patched(prog):
        assert isinstance(logging._lock, StandIn), logging._lock  # type: ignore[attr-defined]
        assert isinstance(handler.lock, StandIn), handler.lock
        handler.acquire()  # outside a controlled thread: the real lock
        handler.release()
    assert logging._lock is real_module_lock
    assert handler.lock is real_handler_lock


@pytest.mark.timeout(60)
def test_a_handler_made_in_an_execution_gets_a_real_lock_back() -> None:
    # logging.shutdown at the interpreter's exit takes every live handler's lock: a controlled one
    # of an execution that is gone raised Abort there ("Exception ignored in atexit callback")
    kept: list[logging.Handler] = []
    with patched(prog):
        result = check(lambda rt: kept.append(prog.ListHandler()), max_executions=1)
    assert result.executions == 1, result.report()
    kept[0].acquire()
    kept[0].release()


@pytest.mark.timeout(60)
def test_a_handler_logging_config_forgot_still_stands_in() -> None:
    """``logging.config`` empties ``logging._handlerList`` (Ray configures logging so in the whole
    suite's run): a handler made at import before that is still found on its logger."""
    handler = prog._log.handlers[0]
    registered = list(logging._handlerList)  # type: ignore[attr-defined]
    del logging._handlerList[:]  # type: ignore[attr-defined]
    try:
        with patched(prog):
            assert isinstance(handler.lock, StandIn), handler.lock
            result = check(lambda rt: prog.handler_configured_at_import())
    finally:
        logging._handlerList[:] = registered  # type: ignore[attr-defined]
    assert result.verdict == "exhaustive", result.report()
