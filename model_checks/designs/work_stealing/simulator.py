"""The seed's step simulator (design 001): work stealing against one global queue, step by step.

The seed page piles every initial task on worker W0 and lets the workers act in lock step. This
module restates it so that a run is reproducible and fast:

* **Tasks.** A task is its depth (an ``int``). Running a task completes it; with probability
  ``split`` it also forks ``SUBTASKS`` (2) subtasks one level deeper, unless it is at depth
  ``depth`` already. The seed names neither the fan-out nor a cap; without a cap two subtasks at
  55 % make a supercritical branching process (1.1 expected children per task) that never ends,
  so the cap is ours (default 3).
* **One step** = every worker acts once, in index order (W0 first).
* **Stealing on.** Each worker owns a deque. It takes its newest task (the bottom, LIFO) and runs
  it, pushing the subtasks on its own bottom; with an empty deque it tries one victim chosen at
  random among the other workers and, if that deque has a task, steals its oldest (the top,
  FIFO) and runs it in the same step; otherwise the step is idle.
* **Stealing off.** One global FIFO queue behind one lock, which admits one worker per step,
  chosen at random (the lock is not fair): it takes the oldest task, runs it and appends the
  subtasks. Every other worker waits out the step (idle).

A worker either runs one task or idles in each step, so idle steps are derived, not counted:
``idle[w] = steps - completed[w]``.

Every random choice (splits, victims, the lock's winner) comes from one ``random.Random(seed)``
owned by the simulation, in a fixed order: the same parameters give the same run, on any machine
and Python version with the same ``random`` algorithm, and nothing else in the process affects it.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

SUBTASKS = 2
DEFAULT_DEPTH = 3
MAX_WORKERS = 1024
MAX_TASKS = 10_000_000  # initial tasks of one run
MAX_DEPTH = 64
# Expected tasks of one run (initial and forked): beyond this a run takes minutes, and the depth
# cap, not the split, is usually the typo.
MAX_EXPECTED_TASKS = 100_000_000


class ParameterError(ValueError):
    """A parameter out of range; ``name`` is the parameter (``workers``, ``split``, ...)."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.reason = message


def expected_tasks(tasks: int, split: float, depth: int) -> float:
    """Expected tasks a run creates: each root has ``sum((SUBTASKS * split) ** d, d = 0..depth)``."""
    rate = SUBTASKS * split
    return tasks * sum(rate**d for d in range(depth + 1))


@dataclass(frozen=True)
class Params:
    workers: int = 4
    split: float = 0.55
    steal: bool = True
    tasks: int = 1000
    seed: int = 0
    depth: int = DEFAULT_DEPTH

    def __post_init__(self) -> None:
        if not 1 <= self.workers <= MAX_WORKERS:
            raise ParameterError("workers", f"must be 1..{MAX_WORKERS}, not {self.workers}")
        if not 0.0 <= self.split < 1.0:  # NaN fails too
            raise ParameterError("split", f"must be in [0, 1), not {self.split}")
        if not 1 <= self.tasks <= MAX_TASKS:
            raise ParameterError("tasks", f"must be 1..{MAX_TASKS:,}, not {self.tasks}")
        if not 0 <= self.depth <= MAX_DEPTH:
            raise ParameterError("depth", f"must be 0..{MAX_DEPTH}, not {self.depth}")
        if not 0 <= self.seed < 2**63:
            raise ParameterError("seed", f"must be 0..2**63-1, not {self.seed}")
        expected = expected_tasks(self.tasks, self.split, self.depth)
        if expected > MAX_EXPECTED_TASKS:
            raise ParameterError(
                "tasks",
                f"{self.tasks:,} tasks splitting at {self.split} down to depth {self.depth} create "
                f"~{expected:.3g} tasks, more than {MAX_EXPECTED_TASKS:,}: lower --tasks, --split or --depth",
            )

    def as_json(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "split": self.split,
            "steal": "on" if self.steal else "off",
            "tasks": self.tasks,
            "seed": self.seed,
            "depth": self.depth,
            "subtasks": SUBTASKS,
        }


@dataclass(frozen=True)
class Result:
    params: Params
    steps: int
    created: int  # initial tasks and every forked subtask
    completed_per_worker: tuple[int, ...]
    steals_per_worker: tuple[int, ...]
    busiest_step: int  # the most tasks run in one step
    idle_per_worker: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "idle_per_worker", tuple(self.steps - c for c in self.completed_per_worker))

    @property
    def completed(self) -> int:
        return sum(self.completed_per_worker)

    @property
    def steals(self) -> int:
        return sum(self.steals_per_worker)

    @property
    def idle_steps(self) -> int:
        return sum(self.idle_per_worker)

    @property
    def throughput(self) -> float:
        """Tasks per step."""
        return self.completed / self.steps if self.steps else 0.0

    @property
    def imbalance(self) -> float:
        """The busiest worker's tasks over the mean (1.0: perfectly even)."""
        mean = self.completed / len(self.completed_per_worker)
        return max(self.completed_per_worker) / mean if mean else 1.0

    def as_json(self) -> dict[str, Any]:
        return {
            "params": self.params.as_json(),
            "steps": self.steps,
            "completed": self.completed,
            "created": self.created,
            "throughput": round(self.throughput, 6),
            "steals": self.steals,
            "idle_steps": self.idle_steps,
            "busiest_step": self.busiest_step,
            "imbalance": round(self.imbalance, 6),
            "per_worker": {
                "completed": list(self.completed_per_worker),
                "idle": list(self.idle_per_worker),
                "steals": list(self.steals_per_worker),
            },
        }


class Simulation:
    """One run, advanced a step at a time (``step``) or to the end (``run``)."""

    def __init__(self, params: Params) -> None:
        self.params = params
        self._rng = random.Random(params.seed)
        w = params.workers
        initial: deque[int] = deque([0] * params.tasks)
        # Stealing off keeps the one global queue in slot 0; the other slots stay empty.
        self._deques: list[deque[int]] = [initial] + [deque() for _ in range(w - 1)]
        self._queued = params.tasks
        # Built once: the loop unpacks these tuples and allocates nothing per step.
        self._rounds = tuple(
            (i, d, tuple(self._deques[:i] + self._deques[i + 1 :])) for i, d in enumerate(self._deques)
        )
        self.created = params.tasks
        self.steps = 0
        self.completed = [0] * w
        self.steals = [0] * w
        self.busiest_step = 0

    @property
    def done(self) -> bool:
        return self._queued == 0

    def step(self) -> int:
        """Advance one step; the tasks run in it (0 once every task is done)."""
        return self._advance(1)

    def run(self) -> Result:
        self._advance(-1)
        return self.result()

    def result(self) -> Result:
        return Result(
            params=self.params,
            steps=self.steps,
            created=self.created,
            completed_per_worker=tuple(self.completed),
            steals_per_worker=tuple(self.steals),
            busiest_step=self.busiest_step,
        )

    def _advance(self, limit: int) -> int:
        """Up to ``limit`` steps (all, when negative); the tasks run in the last one."""
        if self.params.steal:
            return self._advance_stealing(limit)
        return self._advance_locked(limit)

    # Both loops keep everything they touch in locals and allocate nothing per step: at 1M tasks
    # on 64 workers they execute some 70k steps of 64 worker actions each.

    def _advance_stealing(self, limit: int) -> int:
        rand = self._rng.random
        split = self.params.split
        cap = self.params.depth
        others = self.params.workers - 1
        completed = self.completed
        steals = self.steals
        queued = self._queued
        busiest = self.busiest_step
        created = 0
        steps = 0
        ran = 0
        # Most worker actions at many workers are failed steals: that path is one draw, one
        # index and one test (``pool`` is the worker's victims: every deque but its own).
        rounds = self._rounds
        while queued and steps != limit:
            ran = 0
            forked = 0
            for w, mine, pool in rounds:
                if mine:
                    task = mine.pop()
                elif others:
                    theirs = pool[int(rand() * others)]
                    if not theirs:
                        continue
                    task = theirs.popleft()
                    steals[w] += 1
                else:
                    continue
                completed[w] += 1
                ran += 1
                if task < cap and rand() < split:
                    task += 1
                    mine.append(task)
                    mine.append(task)
                    forked += SUBTASKS
            queued += forked - ran
            created += forked
            steps += 1
            if ran > busiest:
                busiest = ran
        self._queued = queued
        self.created += created
        self.steps += steps
        self.busiest_step = busiest
        return ran if steps else 0

    def _advance_locked(self, limit: int) -> int:
        queue = self._deques[0]
        rand = self._rng.random
        split = self.params.split
        cap = self.params.depth
        n = self.params.workers
        completed = self.completed
        created = 0
        steps = 0
        while queue and steps != limit:
            # The lock admits one worker this step; a single worker needs no draw.
            w = int(rand() * n) if n > 1 else 0
            task = queue.popleft()
            completed[w] += 1
            if task < cap and rand() < split:
                task += 1
                queue.append(task)
                queue.append(task)
                created += SUBTASKS
            steps += 1
        self._queued = len(queue)
        self.created += created
        self.steps += steps
        if steps:
            self.busiest_step = 1
        return 1 if steps else 0


def simulate(params: Params) -> Result:
    """One whole run."""
    return Simulation(params).run()


def sweep(params: Params, workers: list[int], modes: tuple[bool, ...] = (True, False)) -> list[Result]:
    """One run per worker count and mode (stealing on, off), the other parameters as given."""
    from dataclasses import replace

    return [simulate(replace(params, workers=w, steal=mode)) for w in workers for mode in modes]
