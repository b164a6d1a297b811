"""Coverage-guided sampling: steer the schedule toward goals a feedback says are not covered yet.

In the spirit of greybox fuzzing (AFL's corpus of inputs that found something new, each mutated
again), with the schedule as the input and an abstract *position* as the coverage map. The program
under test reports, through a ``Feedback``, where the current execution stands (for the Work Lane
link: the state of the spec's observable trace automaton that the trace so far reached) and what
is still open (the automaton's edges no trace took yet). Two mechanisms use it:

* **Frontier restarts.** The first time an execution stands at a position, the actions that led
  there are kept. A later execution picks a kept position that still has open goals (fewer
  attempts first: AFL's energy), replays its prefix (the program is deterministic given the
  schedule) and samples on from there. Deep positions are reached
  once and then tried again and again, instead of being hit by chance from the start each time.
  A prefix that no longer applies (an action it names is not enabled: the program is not
  deterministic given the schedule) is counted in ``Frontier.diverged`` and sampling goes on.
* **Uniform steps at the frontier.** After the prefix, choices are uniform until the execution
  logs its next event (moves to another position): that event is what an open goal at the kept
  position needs, and PCT's few change points would rarely fall there. Then PCT runs the rest
  (``depth`` 12, as ``link compare``'s sampling), so the execution completes as PCT's do.

Steering each step toward a thread whose next event is an open goal (the Work Lane tracer knows
it before the event's scheduling point) was measured and dropped: on ``small``, 45 s, it covered
19% fewer spec steps with probability 0.3 and less still with 0.9 (it always takes the easy
goal first, and the orderings that need a silent step of another thread in between never come).

It samples: the verdict is always "bounded", never a proof. Every execution is seeded from
``(seed, execution index)``, so a seed names the same executions when the feedback answers the same.
"""

from __future__ import annotations

import random
from collections.abc import Hashable
from typing import Protocol

from model_checks.harness.rt.objects import Action
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.strategies.harness_random import harness_rng
from model_checks.harness.strategies.randomized import PctChooser


class Feedback(Protocol):
    """What the program tells the coverage strategy; one object for the whole search."""

    def begin(self) -> None:
        """An execution starts (before the program runs)."""
        ...

    def position(self) -> Hashable | None:
        """Where the current execution stands (None: nowhere the feedback can steer from)."""
        ...

    def open_goals(self, position: Hashable) -> int:
        """How many goals leaving ``position`` are not covered yet."""
        ...

    def end(self) -> int:
        """The execution ended: how many goals it covered for the first time."""
        ...


TOURNAMENT = 8


class FrontierChooser:
    """One execution: the prefix to a kept position, uniform choices while the execution stays at
    that position, then PCT."""

    trusted = True  # picks only from ``enabled``
    needs_after_step = False

    def __init__(self, feedback: Feedback, rng: random.Random, prefix: list[Action], pct: PctChooser) -> None:
        self.feedback = feedback
        self.rng = rng
        self.prefix = prefix
        self.replaying = len(prefix)  # steps still replayed from the prefix
        self.pct = pct
        self.diverged = False  # the prefix asked for an action that was not enabled
        # position -> step index where it was first seen (after the prefix: the positions on the
        # prefix are kept already, from the execution it was cut from)
        self.reached: dict[Hashable, int] = {}
        self.origin: Hashable | None = None  # the position where the prefix ended
        self.local = True  # still at ``origin``: choices are uniform

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        i = len(ex.steps)
        if i < self.replaying:
            want = self.prefix[i]
            if want in enabled:
                return want
            self.diverged = True
            self.replaying = i
        pos = self.feedback.position()
        if pos is not None and pos not in self.reached:
            self.reached[pos] = i
        rng = self.rng
        if self.local:
            # Uniform choices while the execution has not logged anything since the prefix: the
            # next event is what an open goal at ``origin`` needs, and PCT's few change points
            # would rarely fall here.
            if i == self.replaying:
                self.origin = pos
            if pos is not None and pos == self.origin:
                return enabled[rng.randrange(len(enabled))]
            self.local = False
        return self.pct.choose(ex, enabled)

    def after_step(self, ex: Execution) -> None:
        return None


class Frontier:
    """The corpus: one schedule prefix per position reached, and how often each was tried."""

    def __init__(self, feedback: Feedback, seed: int, *, depth: int = 12, fresh: float = 0.125) -> None:
        self.feedback = feedback
        self.seed = seed
        self.depth = depth  # PCT's (as ``link compare``'s COVERAGE_PCT_DEPTH)
        self.fresh = fresh  # the share of executions that start afresh, without a prefix
        self.steps = 50  # the longest execution so far: PCT's horizon
        self.prefixes: dict[Hashable, list[Action]] = {}
        self.tries: dict[Hashable, int] = {}
        self.order: list[Hashable] = []  # the kept positions, to draw from
        self.index = 0
        self.covered = 0  # goals covered so far (the feedback's ``end`` summed)
        self.restarts = 0  # executions that started from a kept prefix
        self.diverged = 0  # of those, the ones whose prefix did not replay

    def chooser(self) -> FrontierChooser:
        """The next execution's chooser (seeded by (seed, index))."""
        rng = harness_rng(self.seed * 1_000_003 + self.index)
        self.index += 1
        prefix: list[Action] = []
        # some executions start afresh: positions the corpus has not reached yet
        if self.order and rng.random() >= self.fresh:
            target = self._pick(rng)
            if target is not None:
                self.tries[target] += 1
                prefix = self.prefixes[target]
                self.restarts += 1
        self.feedback.begin()
        # PCT's change points fall anywhere in the execution (some in the prefix, where they
        # change nothing): the compiled PctChooser, as is, costs less per step than a copy
        # that draws them after the prefix would.
        pct = PctChooser(self.seed ^ 0x5EED, self.index, self.depth, self.steps)
        return FrontierChooser(self.feedback, rng, prefix, pct)

    def _pick(self, rng: random.Random) -> Hashable | None:
        """A kept position with open goals, tried least often among a few drawn at random (a
        tournament: the corpus grows to thousands of positions, scanning it per execution would
        cost more than the execution)."""
        best: Hashable | None = None
        for _ in range(TOURNAMENT):
            pos = self.order[rng.randrange(len(self.order))]
            if self.feedback.open_goals(pos) > 0 and (best is None or self.tries[pos] < self.tries[best]):
                best = pos
        return best

    def learn(self, chooser: FrontierChooser, ex: Execution) -> int:
        """Keep the prefixes of the positions ``ex`` reached first; the goals it newly covered."""
        self.diverged += int(chooser.diverged)
        self.steps = max(self.steps, len(ex.steps))
        actions = [(s.tid, s.alt) for s in ex.steps]
        for pos, at in chooser.reached.items():
            if pos not in self.prefixes:
                self.prefixes[pos] = actions[:at]
                self.tries[pos] = 0
                self.order.append(pos)
        new = self.feedback.end()
        self.covered += new
        return new
