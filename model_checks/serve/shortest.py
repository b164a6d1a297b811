"""The explorer's shortest counterexample of a mutant, as a path the explorer page can open."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from model_checks.serve.subject import Subject
from spec.language import Instance

# A mutant is caught at its own configuration in well under a second; at a larger one the search
# may run long, and a page must answer: past this, it says none was found in time.
TIME_LIMIT = 60.0


@dataclass(frozen=True)
class Found:
    """A counterexample: the path to its last state, what it violates, and where its loop starts."""

    init: int
    path: tuple[int, ...]
    kind: str  # invariant | deadlock | liveness
    name: str
    reason: str
    # liveness: the behaviour loops back to the state after this many steps (and, with
    # ``stutter``, stays in its last state for ever)
    loop_start: int | None = None
    stutter: bool = False


@dataclass(frozen=True)
class NoneFound:
    """Why there is no counterexample to show (the spec holds, or the search stopped at a bound)."""

    reason: str


_cache: dict[tuple[str, str, str | None], Found | NoneFound] = {}
_locks: dict[tuple[str, str, str | None], threading.Lock] = {}
_locks_lock = threading.Lock()


def cached(subject: Subject) -> Found | NoneFound | None:
    """The counterexample if it was computed already (a page never waits for a search)."""
    return _cache.get((subject.design, subject.config, subject.mutant))


def shortest(subject: Subject, time_limit: float = TIME_LIMIT) -> Found | NoneFound:
    """Run the explorer on the subject (once per subject) and turn its counterexample into a path."""
    key = (subject.design, subject.config, subject.mutant)
    with _locks_lock:
        lock = _locks.setdefault(key, threading.Lock())
    with lock:  # two pages asking for one mutant share its search; other mutants do not wait
        if key not in _cache:
            _cache[key] = _search(subject, time_limit)
        return _cache[key]


def _search(subject: Subject, time_limit: float) -> Found | NoneFound:
    inst = subject.instance
    result = check(inst.spec, inst.constants, Options(time_limit=time_limit), config=subject.config)
    if result.counterexample is None or result.violation is None:
        if result.verdict == "holds":
            return NoneFound(f"the explorer finds every property holds at {subject.config}")
        return NoneFound(f"the explorer stopped before finding one: {result.incomplete_reason}")
    cx = result.counterexample
    init = _index_of_initial(inst, cx.initial)
    path: list[int] = []
    state = cx.initial
    for step in cx.steps:
        enabled = list(inst.successors(state))
        index = next(
            i
            for i, t in enumerate(enabled)
            if t.action.name == step.action and t.args[1:] == step.args and t.state == step.state
        )
        path.append(index)
        state = step.state
    v = result.violation
    return Found(init, tuple(path), v.kind, v.name, v.reason, cx.loop_start, cx.stutter)


def _index_of_initial(inst: Instance, state: object) -> int:
    return next(i for i, s in enumerate(inst.initial_states()) if s == state)
