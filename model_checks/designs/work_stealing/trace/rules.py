"""The rules of the work-stealing trace format (docs/work-stealing-trace.md), by number."""

from __future__ import annotations

from typing import Any

from model_checks.conformance.verdict import Rejected
from model_checks.designs.work_stealing.trace.shown import show

RULES: dict[int, str] = {
    1: "a task's source is exactly one submit ok or one push: a task id is never introduced twice",
    2: "the injector is FIFO: a steal from it returns its oldest task (in a global-lock pool, whose one "
    "queue is LIFO, its newest)",
    3: "each worker's deque is a sequential deque: push and take at the bottom by its owner, steal at the "
    "top; empty or lost only on a deque of at most one task (Chase-Lev fails spuriously only on the last "
    "one; lost on an empty one only after a steal from it since the owner's last event); no abort from "
    "the injector (a locked queue); "
    "a global-lock pool has no deques (no take, resize, or steal from a worker)",
    4: "a task runs once, on the worker that took or stole it; done closes the innermost run of that "
    "worker; join returns only after the task finished",
    5: "no worker steals from itself",
    6: "push reports the deque's length and never overfills its buffer; "
    "resize grows it to a larger power of two",
    7: "no lost wakeup: a complete trace never ends with a worker parked while tasks wait in a queue",
    8: "stop: no submit ok after stop_begin or a submit refused invalid_state; discard only in "
    "stop(discard), each task once; stop_end matches "
    "its stop_begin (its mode, logged by its thread) and is ok (a failed pool is no behaviour of the "
    "spec); a complete trace runs (with done) or discards every task",
    9: "a trace that ends without stop_end ok (and without --complete) is judged as a prefix",
}

PREFIX_RULE = 9


# The rule a worker's event breaks when another thread logs it: a run or done on the wrong worker
# breaks rule 4, a park rule 7, any other (its deque's) rule 3. The fast model and the spec engine
# number it alike.
def owner_rule(kind: str) -> int:
    return {"run": 4, "done": 4, "park": 7}.get(kind, 3)


def deque_programs(ev: dict[str, Any]) -> bool | None:
    """Whether a trace whose first step is ``ev`` is of deque programs (the harness's deque scenarios
    call a deque directly: the first step is a worker's push or a steal from a worker), or None when
    ``ev`` is no step and decides nothing (a join, a refused submit, a failed stop_end). Both
    engines decide by it (the spec engine's ``OpenConstants.deques``)."""
    kind = ev["event"]
    if kind == "join" or (kind in ("submit", "stop_end") and ev["result"] != "ok"):
        return None
    return kind == "push" or (kind == "steal" and bool(ev["victim"] != "injector"))


class Admission:
    """Admission closes once: a ``submit`` refused ``invalid_state`` means Stop began or the pool failed
    (``reference.work_stealing_base.WorkStealingPool.submit``, under the injector lock with the Stop's
    ``stop_begin``), and neither is undone, so no ``submit`` ok follows it (rule 8; both engines)."""

    def __init__(self) -> None:
        self.refused_at = 0  # the seq of the first submit refused invalid_state

    def refused(self, ev: dict[str, Any]) -> bool:
        """Whether the submit ``ev`` was refused (no step: the task stays with the caller); an ok one
        after an ``invalid_state`` is ``Rejected``."""
        result = ev["result"]
        if result == "ok":
            if self.refused_at:
                raise Rejected(
                    8,
                    f"submit of {show(ev['task'])} is ok, but the submit at seq {self.refused_at} was "
                    "refused invalid_state: admission closed there (Stop began or the pool failed) and "
                    "never reopens",
                )
            return False
        if result == "invalid_state" and not self.refused_at:
            self.refused_at = ev["seq"]
        return True
