"""Choosers that follow a given script: a replayed schedule, or a list of choice indices."""

from __future__ import annotations

from collections.abc import Sequence

from model_checks.harness.rt.enabled import can_run
from model_checks.harness.rt.objects import ALT_MARK, Action
from model_checks.harness.rt.records import NativeChooser, ThreadInfo
from model_checks.harness.rt.scheduler import Execution


class ReplayChooser(NativeChooser):
    """Follow a recorded schedule exactly; note where the program departs from it."""

    trusted = True  # picks only from ``enabled``
    needs_after_step = False  # the execution may skip calling ``after_step``

    def __init__(self, actions: Sequence[Action]) -> None:
        self.actions = list(actions)
        self.divergence: str | None = None
        # steps ``keep`` decided (the running thread continued with no enabled set built): a test
        # reads it, since a compiled class cannot be subclassed to observe ``keep``
        self.kept = 0

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        i = len(ex.steps)
        if i >= len(self.actions):
            self.divergence = (
                f"the execution continues after the {len(self.actions)} recorded steps "
                "(the program or its failure changed)"
            )
            return None
        want = self.actions[i]
        if want not in enabled:
            shown = ", ".join(f"{ex.thread_label(t)}{ALT_MARK[a]}" for t, a in enabled)
            self.divergence = (
                f"at step {i} the schedule runs thread #{want[0]}{ALT_MARK[want[1]]}, which is not "
                f"enabled (enabled: {shown or 'none'}): the program is not the one recorded"
            )
            return None
        return want

    def keep(self, ex: Execution, t: ThreadInfo) -> bool:
        # ``choose`` would return the recorded action, and it is ``t``'s own, enabled as it is:
        # no enabled set is needed to follow it. A thread with a timeout or spurious-wakeup
        # alternative sends the step to ``enabled_actions`` (the limits it records are its), as
        # PCT's ``keep`` does, so the execution and its figures are exactly ``choose``'s.
        i = len(ex.steps)
        actions = self.actions
        op = t.pending
        if i >= len(actions) or actions[i] != t.run or op is None or t.finished or not can_run(ex, op, t.tid):
            return False
        spurious = ex.spurious_wakeups
        for u in ex.live:
            other = u.pending
            if u is t or other is None:
                continue
            if other.timeout is not None or (spurious and other.kind == "wake"):
                return False
        self.kept += 1
        return True

    def after_step(self, ex: Execution) -> None:
        return None


class IndexChooser(NativeChooser):
    """Choice ``k`` picks ``enabled[k % len(enabled)]``; 0 (and running out) means "keep the
    running thread", so shrinking the list towards zeros shrinks towards fewer preemptions."""

    trusted = True  # picks only from ``enabled``
    needs_after_step = False  # the execution may skip calling ``after_step``

    def __init__(self, choices: Sequence[int]) -> None:
        self.choices = list(choices)

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        i = len(ex.steps)
        k = self.choices[i] if i < len(self.choices) else 0
        return enabled[k % len(enabled)]

    def after_step(self, ex: Execution) -> None:
        return None
