"""A node of the systematic search (``search.py``): the state reached by a path of steps, what
was enabled and pending there, what was explored and is left to explore from it, and what the
race analysis learned of the step taken from it."""

from __future__ import annotations

from dataclasses import dataclass, field

from model_checks.harness.rt.objects import Action, Op


@dataclass(eq=False)
class Frame:
    enabled: list[Action]
    ops: dict[int, Op]  # pending operation of every live thread at this state
    allowed: list[Action]  # enabled, within the preemption bound
    sleep: set[Action]  # sleep set on entry
    backtrack: set[Action] = field(default_factory=set)
    done: set[Action] = field(default_factory=set)
    chosen: Action = (0, 0)
    tid: int = 0
    op: Op | None = None
    raised: bool = False  # the step's operation raised in its thread (it ran, but did nothing)
    # the step read the virtual clock (``Execution.clock_read``) or moved it (``clock_moved``)
    reads_clock: bool = False
    moves_clock: bool = False
    # the actions taken here whose step changed the process's state (``Execution.process_written``):
    # dependent with every step, so never asleep after another thread's step
    wrote_process: set[Action] = field(default_factory=set)
    # ordered search only: the tree (the node this one was reached from, by ``via``) and the
    # preemptions of the path to this node, with the thread that ran last before it
    parent: Frame | None = None
    via: Action = (0, 0)
    pre: int = 0
    prev: int = -1  # -1: no step yet, or the last thread could not go on here (no preemption)
