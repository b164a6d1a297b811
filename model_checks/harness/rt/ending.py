"""How an execution ends and is reported: the test's result and final checks, the diagnosis of a
state where no thread can run (deadlock or lost wakeup), a failing thread's report, the teardown
that unwinds the threads still parked, and the source line of an operation (recorded only when
a failing execution is replayed for its report). Run once per execution (or per failure), never per step: the
scheduling loop itself is ``scheduler.py``'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import traceback
from dataclasses import dataclass
from types import CodeType, FrameType
from typing import TYPE_CHECKING

from model_checks.harness import ctrl_c
from model_checks.harness.own_code import MACHINERY_DIRS, MACHINERY_FILES, SHARED_STEPS, WRAPPERS
from model_checks.harness.own_lines import reading_lines
from model_checks.harness.rt.backends import ABORT, Abort, Done, format_frame
from model_checks.harness.rt.inspection import render
from model_checks.harness.rt.objects import Op

if TYPE_CHECKING:
    from model_checks.harness.rt.scheduler import Execution, ThreadInfo

# Frames inside these files are the harness's own (``own_code.py``); the "source" of an operation
# is the first frame outside them (the user's code, or the reference code under test). The steps
# the lane designs' scenarios share are skipped too: a report names the scenario's line.
SKIP_PREFIXES = (*MACHINERY_DIRS, *sorted(MACHINERY_FILES | WRAPPERS), *SHARED_STEPS)


_SKIP_CODE: dict[CodeType, bool] = {}  # code object -> is it the harness's own


def source_of(f: FrameType) -> tuple[str, int]:
    """(file, line) of the first frame outside the harness: the operation's "source".

    Deciding "harness or not" per code object once (instead of testing the file name of every
    frame at every step) keeps this to a couple of dict look-ups per operation."""
    skip = _SKIP_CODE
    while True:
        code = f.f_code
        harness = skip.get(code)
        if harness is None:
            harness = skip[code] = code.co_filename.startswith(SKIP_PREFIXES)
        back = f.f_back
        if not harness or back is None:
            return code.co_filename, f.f_lineno
        f = back


class UsageError(Exception):
    """The test used the harness wrongly; the message says how to fix it."""


@dataclass
class ExecFailure:
    kind: str
    message: str
    details: str = ""


def register_final(ex: Execution, value: object) -> None:
    """The main thread returned ``value``: None, a final check, or a list of them."""
    if value is None:
        return
    if callable(value):
        ex.hooks.final.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            register_final(ex, v)
    else:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise UsageError(
            f"a test may return None, a final check (callable) or a list of them, not {shown} "
            f"({type(value).__name__})"
        )


def thread_completed(ex: Execution, t: ThreadInfo, done: Done) -> None:
    """``t``'s body is over (returned, or raised ``done.error``)."""
    # Recorded first, because the misuse reported below (a UsageError) ends the execution, and
    # teardown must not resume a body that has already returned.
    t.pending = Op("exit", t.state)
    if done.error is not None and not isinstance(done.error, Abort):
        thread_failed(ex, t, done.error)
    if t.tid == 0 and done.error is None:
        register_final(ex, done.value)


def thread_failed(ex: Execution, t: ThreadInfo, error: BaseException) -> None:
    if isinstance(error, SystemExit):
        # As ``threading`` runs threads: ``sys.exit()`` ends a thread quietly; the main thread's
        # ends the program, with its status. (Raised on, it ended lanecheck itself, with the
        # program's status and no verdict: an outside review read exit 0, "holds", for a race.)
        if t.tid == 0 and error.code not in (None, 0):
            with reading_lines():
                tb = "".join(traceback.format_exception(error))
            message = f"thread {t.name} ended the program with status {error.code!r} (SystemExit)"
            ex.failure = ex.failure or ExecFailure("exception", message, tb)
        return
    if isinstance(error, UsageError) or not (isinstance(error, Exception) or ctrl_c.programs_own(error)):
        raise error  # misuse, Ctrl-C, a test-runner timeout: not a finding about the program
    if ex.abandoned:
        return  # (after a bound left a thread stuck for good: what follows is the bound's doing)
    kind = "assertion" if isinstance(error, AssertionError) else "exception"
    # (a repr in the message may take a controlled lock: rendered as the failing thread would)
    msg, tb = render(t.tid, error)
    ex.failure = ex.failure or ExecFailure(kind, f"thread {t.name} raised {msg}", tb)


def finish(ex: Execution) -> None:
    """Every thread finished: run the final checks; their values make the outcome."""
    if ex.failure is not None:
        return
    outcomes = []
    for final in ex.hooks.final:
        try:
            outcomes.append(final())
        except BaseException as exc:  # a failed final check is the test's assertion
            kind = "assertion" if isinstance(exc, AssertionError) else "exception"
            msg, tb = render(-1, exc)
            ex.failure = ExecFailure(kind, f"final check failed: {msg}", tb)
            return
    vals = [o for o in outcomes if o is not None]
    ex.outcome = vals[0] if len(vals) == 1 else (tuple(vals) if vals else None)


def deadlock(ex: Execution) -> None:
    """No thread can run and some have not finished: a lost wakeup when a waiting thread leaves
    work pending (the test's ``pending_work`` says so), a deadlock otherwise. Not in an
    abandoned execution: a thread left waiting for another process when the check's time limit
    ran out (``patch_io_outside``) is stuck by the bound, not by the program."""
    if ex.abandoned:
        return
    lines = []
    waiting = False
    for t in ex.threads:
        if t.finished or t.pending is None:
            continue
        op = t.pending
        waiting = waiting or op.obj.waiting(op)
        detail = op.obj.blocked_detail(ex, op)
        file, line = op.source
        where = f" at {os.path.basename(file)}:{line}" if file else ""
        lines.append(
            f"thread {t.name} blocked in {op.describe()} on {op.obj.name}"
            + (f" ({detail})" if detail else "")
            + where
        )
        lines += format_frame(ex.backend.frame(t.tid), SKIP_PREFIXES)
    blocked = [t.name for t in ex.threads if t.born and not t.finished]
    pending = False
    for pred in ex.hooks.pending_work:
        with contextlib.suppress(Exception):  # a predicate that cannot decide says nothing
            pending = pending or bool(pred())
    if waiting and pending:
        kind, msg = (
            "lost_wakeup",
            (f"threads {', '.join(blocked)} wait forever while work is pending (lost wakeup)"),
        )
    else:
        kind, msg = "deadlock", f"no thread can run; blocked: {', '.join(blocked)}"
    ex.failure = ex.failure or ExecFailure(kind, msg, "\n".join(lines))


_IO = "the process's I/O"  # (``patch_io``'s object: every I/O call is an operation on it)


def livelock_words(ex: Execution) -> str:
    """What a run past ``max_steps`` looks like: a thread that ran alone to the end while
    others lived may be a busy-wait in a schedule no interpreter keeps to; fairness holds
    back only a thread that sleeps."""
    words = f"execution exceeded max_steps={ex.max_steps} (a livelock, or raise max_steps)"
    steps = ex.steps
    last = steps[-1].tid if steps else -1
    alone = 0
    for step in reversed(steps):
        if step.tid != last:
            break
        alone += 1
    others = [t.tid for t in ex.live if t.tid != last]
    if alone < 100 or not others:
        return words
    who = ex.thread_label(last)
    live = ", ".join(ex.thread_label(t) for t in others)
    run = steps[len(steps) - alone :]
    io = [step.op for step in run if step.op.obj.name == _IO]
    calls = {str(op.args[0]) for op in io if op.args}
    if calls and len(io) * 10 >= alone * 9 and not any(step.op.kind == "sleep" for step in run):
        # a long finite loop of reads or writes (review 9's s17: 2000 ``os.read`` calls a thread)
        # is not a busy-wait: each step was an I/O call that made progress
        return words + (
            f": {who} ran its last {alone} steps alone (also live: {live}), {len(io)} of them I/O calls "
            f"({', '.join(sorted(calls))}): a finite loop of more I/O calls than max_steps allows "
            "reaches the bound without any livelock: raise max_steps (--max-steps) to see it end; "
            "only a loop polling a descriptor that never becomes ready would be a busy-wait"
        )
    if any(step.op.kind == "sleep" for step in run):
        # it sleeps, so fairness would have let the others run: none of them could
        return words + (
            f": {who} ran its last {alone} steps alone, sleeping in them, while {live} could "
            "not take over (blocked: on something it holds, or waits for?)"
        )
    return words + (
        f": {who} ran its last {alone} steps alone (also live: {live}); if it is a busy-wait, "
        "the schedule is unfair, as CPython switches threads every few milliseconds: a sleep "
        "in the loop (time.sleep(0)) makes it give way (fairness at sleeps)"
    )


def teardown(ex: Execution) -> None:
    ex.aborting = True
    for t in ex.threads:
        if not (t.finished or t.pending is None or t.pending.kind == "exit"):
            break
    else:
        ex.backend.close()  # nothing to unwind (the usual end): spare the logging switch
        return
    # code under test may log what it catches while unwinding (a pool's "worker raised"): mute it
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        _unwind(ex)
    finally:
        logging.disable(previous)


def _unwind(ex: Execution) -> None:
    for t in ex.threads:
        if t.finished or t.pending is None or t.pending.kind == "exit":
            continue
        if t.pending.kind == "begin":
            ex.backend.resume(t.tid, ABORT)
            continue
        for _ in range(5):  # a thread that swallows Abort gets a few more
            message = ex.backend.resume(t.tid, ABORT)
            if isinstance(message, Done):
                break
    ex.backend.close()


__all__ = [
    "SKIP_PREFIXES",
    "ExecFailure",
    "UsageError",
    "deadlock",
    "finish",
    "register_final",
    "source_of",
    "teardown",
    "thread_failed",
]
