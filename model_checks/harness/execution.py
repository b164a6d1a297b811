"""One execution of a test under a chooser (``execute``), and the options a check really runs with
(``resolved``: the race detector on or off)."""

from __future__ import annotations

import sys
from collections.abc import Callable

from model_checks.harness import patch_io_outside, patch_random, process_watch, races
from model_checks.harness.declared import Installed, install_points, remove_points
from model_checks.harness.options import Options
from model_checks.harness.patch import (
    RACES_OFF_BY_DEFAULT,
    interpreter_exit,
    new_check,
    set_current,
    start_execution,
)
from model_checks.harness.patch import active as patch_mode
from model_checks.harness.rt.backends import Backend
from model_checks.harness.rt.scheduler import Chooser, Execution, UsageError
from model_checks.harness.runtime import ControlledRuntime

TestFn = Callable[[ControlledRuntime], object]
Points = set[races.Point]  # access sites made scheduling points (``interleave_races``)


def execute(
    backend: Backend,
    test_fn: TestFn,
    options: Options,
    chooser: Chooser,
    *,
    sources: bool = True,
    points: Points | None = None,
) -> Execution:
    """One execution of ``test_fn`` from the start under ``chooser`` on ``backend``.
    ``sources=False`` skips recording each operation's source line (only a failure report shows
    them); ``points`` are the access sites made scheduling points (``interleave_races``)."""
    ex = Execution(
        backend,
        chooser,
        max_steps=options.max_steps,
        spurious_wakeups=options.spurious_wakeups,
        virtual_timeouts=options.virtual_timeouts,
    )
    ex.spurious_limit = options.spurious_limit
    ex.timeout_limit = options.timeout_limit
    ex.fair_sleeps = options.fair_sleeps
    ex.keep_going = options.keep_going
    ex.sources = sources
    start_execution()  # patch mode: the program's modules as the check's first execution found them
    # which steps change the process's state (DPOR takes them as dependent with every step), and
    # whether the execution did (it is then put back: ``_ended``)
    ex.watch = process_watch.changed
    process_watch.reset()
    rt = ControlledRuntime(ex)
    set_current(rt)
    main = _exiting(test_fn, rt) if patch_mode() else lambda: test_fn(rt)
    if not options.races:
        try:
            ex.run(main)
        finally:
            _ended(ex)
        return ex
    ex.race = races.RaceDetector(ex, points)
    previous = sys.gettrace()
    fields: Installed = []  # (``declared.install_points``: what ``remove_points`` takes off)
    try:
        install_points(fields)
        ex.run(main)
    finally:
        remove_points(fields)
        sys.settrace(previous)
        _ended(ex)
    return ex


def _ended(ex: Execution) -> None:
    set_current(None)  # (patch mode puts back the state it keeps: the zone before its names)
    if isinstance(ex.race, races.RaceDetector):
        ex.race.held.let_go()  # (finalizers run now, before what they change is put back)
    if ex.process_dirty:
        process_watch.put_back()


def _exiting(test_fn: TestFn, rt: ControlledRuntime) -> Callable[[], object]:
    """Patch mode's main thread: the program's, then the interpreter's exit (its pools' workers
    told to end and joined, ``patch.interpreter_exit``)."""

    def main() -> object:
        try:
            out = test_fn(rt)
        except SystemExit:  # ``sys.exit()``: the interpreter exits all the same
            interpreter_exit(rt)
            raise
        interpreter_exit(rt)
        return out

    return main


def races_default(options: Options) -> bool:
    """``Options.races=None``: on in patch mode (plain ``threading`` code, where nothing else marks
    shared accesses); elsewhere off, and an exhaustive verdict then says "synchronisation points
    only" (tracing costs the controlled-runtime suites and benches several times their time)."""
    if options.races is not None:
        return options.races
    return patch_mode()


def resolved(options: Options) -> Options:
    if options.interleave_races:
        if options.races is False:
            raise UsageError(
                "interleave_races interleaves the races the detector finds: not with races=False"
            )
        options = options.with_(races=True)
    on = races_default(options)
    if on and not races.SUPPORTED:
        if options.races:
            raise UsageError("the data-race detector needs CPython 3.11 (opcode tracing of its frames)")
        on = False
    RACES_OFF_BY_DEFAULT[0] = options.races is None and not on and races.SUPPORTED
    new_check()
    patch_random.new_check(options.seed)  # its programs' random draws: from its seed
    process_watch.new_check()  # the modules imported now are watched
    patch_io_outside.new_check(options.time_limit)  # a real-time wait for a child ends with it
    return options if options.races is on else options.with_(races=on)
