"""The figures of one ``check``'s executions (``Search``): counts, outcomes, limits that cut,
the first failure and its report, and ``interleave_races``' restarts."""

from __future__ import annotations

import time
from collections.abc import Callable

from model_checks.harness import (
    patch_cached,
    patch_random,
    patch_streams,
    race_builtins,
    race_methods,
    races,
    step_deadline,
)
from model_checks.harness.execution import TestFn, execute
from model_checks.harness.options import Options, Result
from model_checks.harness.patch import take_library_imports
from model_checks.harness.report import build_failure
from model_checks.harness.report_timing import COMPUTE_TIME_NOTE
from model_checks.harness.rt.backends import make_backend
from model_checks.harness.rt.scheduler import Chooser, Execution
from model_checks.harness.schedule import choice_hash, test_tag
from model_checks.harness.strategies.search import SearchChooser
from model_checks.harness.strategies.simple import ReplayChooser

PROGRESS: list[Callable[[Result], None] | None] = [None]  # ``check(on_execution=...)`` while it runs
# interleave_races: the access sites made scheduling points, per test (by its tag). A check starts
# its test's set afresh; it stays after the check, so that ``replay`` of a schedule the check
# reported runs the same scheduling points.
POINTS: dict[str, set[races.Point]] = {}


class Search:
    """Accumulates figures over the executions of one ``check``."""

    def __init__(self, test_fn: TestFn, options: Options, strategy: str) -> None:
        self.test_fn = test_fn
        self.options = options
        self.tag = test_tag(test_fn)
        self.result = Result(verdict="exhaustive", strategy=strategy, races=bool(options.races))
        self.start = time.perf_counter()
        self.failed_ex: Execution | None = None
        self.on_execution: Callable[[Result], None] | None = PROGRESS[0]
        # interleave_races: the sites made scheduling points; the first race (with the points in
        # force when it was found); whether the last execution added points (the search restarts)
        self.points = POINTS.setdefault(self.tag, set()) if options.interleave_races else None
        self.first_race: tuple[Execution, frozenset[races.Point]] | None = None
        self.restart = False
        self.previous: Execution | None = None  # the last execution run, freed at the next

    def take_restart(self) -> bool:
        """Did the last execution make new sites scheduling points? The program's scheduling
        points changed, so a systematic search starts again (its tree is no longer the program's)."""
        restart, self.restart = self.restart, False
        return restart

    def _interleave(self, ex: Execution) -> bool:
        """``ex`` found a race: make its sites scheduling points (True) unless they already are."""
        detector = ex.race
        if self.points is None or not isinstance(detector, races.RaceDetector) or not detector.racy:
            return False
        new = set(detector.racy) - self.points
        if not new:
            return False
        if self.first_race is None:
            self.first_race = (ex, frozenset(self.points))
        self.points |= new
        assert ex.failure is not None
        self.result.notes.append(
            f"interleave_races: {ex.failure.message}: both accesses made scheduling points, search restarted"
        )
        self.restart = True
        return True

    def out_of_budget(self) -> str | None:
        o = self.options
        if o.max_executions is not None and self.result.executions >= o.max_executions:
            return f"max_executions={o.max_executions}"
        if o.time_limit is not None and time.perf_counter() - self.start >= o.time_limit:
            return f"time_limit={o.time_limit:g}s"
        return None

    def stop_for_budget(self) -> bool:
        """Is the budget spent? If so, the reason is recorded (the verdict is then "bounded")."""
        reason = self.out_of_budget()
        if reason:
            self.result.bounded_by.append(reason)
        return reason is not None

    def take_search_figures(self, chooser: SearchChooser) -> None:
        """A systematic search's own figures: what its preemption bound cut, what it pruned."""
        if chooser.cut:
            self.result.bounded_by.insert(0, f"preemption_bound={self.options.preemption_bound}")
        self.result.pruned = chooser.pruned
        if chooser.process_writes:
            changed = ", ".join(sorted(chooser.process_writes))
            self.result.notes.append(
                f"steps changed process-wide state ({changed}): each such step was ordered both "
                'ways against every step of every other thread (docs/harness.md, "Process-wide state")'
            )

    def _release_previous(self) -> None:
        """Free the previous execution now (``Execution.release``) unless a report needs it."""
        prev, self.previous = self.previous, None
        if prev is None or prev is self.failed_ex:
            return
        if self.first_race is not None and prev is self.first_race[0]:
            return
        prev.release()

    def run(self, chooser: Chooser) -> Execution:
        # The caller reads the execution it gets back until its next ``run``: freed then.
        self._release_previous()
        # Exploring records no source lines; the failing execution is replayed with them for its
        # report (``_with_sources``).
        step_deadline.arm(self.start, self.options.time_limit)  # (a long step stops at the limit)
        try:
            ex = execute(
                make_backend(self.options.backend),
                self.test_fn,
                self.options,
                chooser,
                sources=False,
                points=self.points,
            )
            late = step_deadline.late_note()
        finally:
            step_deadline.disarm()
        self.previous = ex
        r = self.result
        if late is not None and not any(step_deadline.OVERRUN in note for note in r.notes):
            r.notes.append(late)
        rebound = patch_streams.take_switched()
        if rebound is not None:
            # the executions so far ran each ``print`` as no step: a search of the program whose
            # prints are operations starts again (review 9's s44; a failure met stays one)
            r.notes.append(
                f"sys.stdout or sys.stderr rebound in a controlled thread at {rebound}: prints made "
                "operations, search restarted"
            )
            self.restart = True
        evicted = patch_cached.take_switched()
        if evicted is not None:
            # bounded caches' hits were taken to commute until one evicted (``patch_cached``)
            r.notes.append(f"{evicted} evicted: bounded caches' look-ups made writes, search restarted")
            self.restart = True
        rebound_builtin = race_builtins.take_switched()
        if rebound_builtin is not None:
            # the look-ups of that name so far were no reads (``race_builtins``)
            r.notes.append(f"{rebound_builtin}: its look-ups made reads, search restarted")
            self.restart = True
        rebound_method = race_methods.take_switched()
        if rebound_method is not None:
            # the look-ups of that method so far were no reads (``race_methods``)
            r.notes.append(f"{rebound_method}: its look-ups made reads, search restarted")
            self.restart = True
        imported = take_library_imports()
        if imported:
            # the first execution imported them (its steps hold the import's); none later will
            shown = ", ".join(imported[:3]) + (f" and {len(imported) - 3} more" if len(imported) > 3 else "")
            r.notes.append(
                f"extension modules first imported by an execution ({shown}): kept loaded, search restarted"
            )
            self.restart = True
        r.executions += 1
        r.steps += len(ex.steps)
        r.max_preemptions = max(r.max_preemptions, ex.preemptions)
        if ex.failure is not None and ex.failure.kind == "data_race" and self._interleave(ex):
            if self.on_execution is not None:
                self.on_execution(r)
            return ex
        if ex.failure is None and not ex.abandoned:
            r.outcomes.add(ex.outcome)
        for cut in sorted(ex.limit_cut):
            if cut not in r.bounded_by:
                r.bounded_by.append(cut)
        if ex.compute_time and COMPUTE_TIME_NOTE not in r.notes:
            r.notes.append(COMPUTE_TIME_NOTE)
        if ex.fairness.cut:
            r.fair = True
        if ex.failure is not None:
            r.failure_kinds.add(ex.failure.kind)
            if self.failed_ex is None:
                self.failed_ex = ex
        if self.on_execution is not None:
            self.on_execution(r)
        return ex

    def _with_sources(self, ex: Execution, points: set[races.Point] | None = None) -> Execution:
        """The failing execution again, this time recording source lines for the report; ``ex``
        itself if the program does not repeat it (it is then reported without source lines)."""
        if ex.sources:
            return ex
        step_deadline.arm(self.start, self.options.time_limit)  # (session 46: C2, within the limit)
        try:
            again = execute(
                make_backend(self.options.backend),
                self.test_fn,
                self.options,
                ReplayChooser([(s.tid, s.alt) for s in ex.steps]),
                points=self.points if points is None else points,
            )
        finally:
            step_deadline.disarm()
        if step_deadline.cut(again):
            self.result.notes.append(
                "the failing execution's replay for its source lines reached the time limit: "
                "shown without them"
            )
        same = (
            again.failure is not None
            and ex.failure is not None
            and again.failure.kind == ex.failure.kind
            and len(again.steps) == len(ex.steps)
            and choice_hash([(s.tid, s.alt, s.op) for s in again.steps])
            == choice_hash([(s.tid, s.alt, s.op) for s in ex.steps])
        )
        return again if same else ex

    def finish(self) -> Result:
        r = self.result
        if self.failed_ex is not None and self.failed_ex.failure is not None:
            r.verdict = "failed"
            shown = self._with_sources(self.failed_ex)
            assert shown.failure is not None
            r.failure = build_failure(shown, shown.failure, self.tag)
        elif self.first_race is not None:
            # the racy accesses were interleaved and nothing else failed: the race stands
            race, points = self.first_race
            r.verdict = "failed"
            shown = self._with_sources(race, set(points))
            assert shown.failure is not None
            r.failure = build_failure(shown, shown.failure, self.tag)
            r.notes.append(
                "interleave_races: running the racy accesses in both orders showed no other failure; "
                "the first data race is reported (its schedule replays with races=True"
                + (")" if not points else " and the scheduling points in force when it was found)")
            )
        elif r.bounded_by:
            r.verdict = "bounded"
        elif not r.races:
            r.notes.append(
                "race detection off: plain shared accesses between synchronisation points were not "
                "checked, so this is a proof only if the program is data-race free (Options(races=True))"
            )
        r.draws = patch_random.held()
        r.elapsed = time.perf_counter() - self.start
        return r
