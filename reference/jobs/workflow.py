"""Workflows: steps run as jobs, ``for_each`` fans a list out, and per-run budgets bound it all.

A workflow is a list of steps over one JSON ``state``. A ``then`` step is one job whose handler
gets the state and returns a JSON object merged into it. A ``for_each(key, handler, into)`` step is
one job per item of ``state[key]``; the results, in item order, become ``state[into]``. A ``then``
handler may also start child workflows by returning ``{"_start_workflows": [{"definition": ...,
"state": ...}, ...]}`` (the key is taken out of the result).

The per-run budgets (``max_transitions``, ``max_for_each_items``, ``max_state_bytes``,
``max_cost_units``, ``max_started_workflows``) are checked before the step that would exceed them
is enqueued (or, for the state, when a result is merged). Exceeding one fails the run with a
``constraint_violation`` reason, for good: retrying would exceed it again. The store discards,
and reports, the run's jobs still pending. Everything here is pure: the stores load a ``Run``,
call ``start``/``step_done`` and save what they return.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from reference import arguments
from reference.jobs.model import MAX_COST, JobSpec, encode_payload, name

BUDGETS = (
    "max_transitions",
    "max_for_each_items",
    "max_state_bytes",
    "max_cost_units",
    "max_started_workflows",
)
USAGE = {
    "max_transitions": "transitions",
    "max_for_each_items": "for_each_items",
    "max_state_bytes": "state_bytes",
    "max_cost_units": "cost_units",
    "max_started_workflows": "started_workflows",
}
MAX_STEPS = 1000
START_KEY = "_start_workflows"


class ConstraintViolation(Exception):
    """A run went over one of its budgets; ``budget`` names it."""

    def __init__(self, budget: str, limit: int, value: int) -> None:
        super().__init__(
            f"constraint_violation: {budget} {limit} exceeded ({USAGE[budget]} would be {value})"
        )
        self.budget = budget


class StepFailure(Exception):
    """A step's result cannot be used (not a JSON object, a missing list): the run fails."""


@dataclass(frozen=True)
class Step:
    kind: str
    handler: str
    queue: str
    key: str | None = None
    into: str | None = None
    cost_units: int = 1
    concurrency_group: str | None = None
    concurrency_limit: int | None = None
    max_attempts: int = 3

    def spec(self, payload: Any) -> JobSpec:
        return JobSpec(
            self.queue,
            payload,
            handler=self.handler,
            max_attempts=self.max_attempts,
            concurrency_group=self.concurrency_group,
            concurrency_limit=self.concurrency_limit,
            cost_units=self.cost_units,
        )


class Workflow:
    """A definition, built fluently: ``Workflow("run").max_cost_units(40).then("plan").for_each(...)``."""

    def __init__(self, workflow_name: str, queue: str = "workflows") -> None:
        self.name = name("workflow name", workflow_name)
        self.queue = name("queue", queue)
        self.steps: list[Step] = []
        self.limits: dict[str, int] = {}

    def _limit(self, budget: str, value: int) -> Workflow:
        self.limits[budget] = arguments.count(budget, value, minimum=0, maximum=MAX_COST)
        return self

    def max_transitions(self, n: int) -> Workflow:
        return self._limit("max_transitions", n)

    def max_for_each_items(self, n: int) -> Workflow:
        return self._limit("max_for_each_items", n)

    def max_state_bytes(self, n: int) -> Workflow:
        return self._limit("max_state_bytes", n)

    def max_cost_units(self, n: int) -> Workflow:
        return self._limit("max_cost_units", n)

    def max_started_workflows(self, n: int) -> Workflow:
        return self._limit("max_started_workflows", n)

    def _add(self, step: Step) -> Workflow:
        if len(self.steps) >= MAX_STEPS:
            raise ValueError(f"a workflow may have at most {MAX_STEPS} steps")
        step.spec(None)  # checks the hints now, not when the step is reached
        self.steps.append(step)
        return self

    def then(self, handler: str, **hints: Any) -> Workflow:
        return self._add(Step("then", str(name("handler", handler)), hints.pop("queue", self.queue), **hints))

    def for_each(self, key: str, handler: str, into: str, **hints: Any) -> Workflow:
        name("key", key)
        name("into", into)
        queue = hints.pop("queue", self.queue)
        return self._add(Step("for_each", str(name("handler", handler)), queue, key, into, **hints))

    def definition(self) -> dict[str, Any]:
        steps = [{k: v for k, v in step.__dict__.items() if v is not None} for step in self.steps]
        return {"name": self.name, "queue": self.queue, "steps": steps, "budget": dict(self.limits)}

    @classmethod
    def from_definition(cls, doc: object) -> Workflow:
        """A definition as ``definition()`` writes it; ``ValueError``/``TypeError`` naming the field."""
        if not isinstance(doc, dict):
            raise TypeError(f"a workflow definition must be a JSON object, got {type(doc).__name__}")
        flow = cls(doc.get("name"), doc.get("queue", "workflows"))  # type: ignore[arg-type]
        budget = doc.get("budget", {})
        if not isinstance(budget, dict):
            raise TypeError("budget must be a JSON object")
        for key, value in budget.items():
            if key not in BUDGETS:
                raise ValueError(f"unknown budget {arguments.show(key)}; known: {', '.join(BUDGETS)}")
            flow._limit(key, value)
        steps = doc.get("steps")
        if not isinstance(steps, list) or not steps:
            raise ValueError("steps must be a non-empty list")
        for n, step in enumerate(steps):
            if not isinstance(step, dict) or step.get("kind") not in ("then", "for_each"):
                raise ValueError(f"steps[{n}] must be an object with kind 'then' or 'for_each'")
            try:
                flow._add(Step(**step))
            except TypeError as problem:
                raise ValueError(f"steps[{n}]: {problem}") from None
            if step["kind"] == "for_each" and (step.get("key") is None or step.get("into") is None):
                raise ValueError(f"steps[{n}]: a for_each step needs key and into")
        return flow


@dataclass
class Run:
    """The live state of one run, as a store keeps it (JSON-able)."""

    id: int
    flow: Workflow
    state: dict[str, Any]
    step: int = -1
    pending: int = 0
    results: list[Any] = field(default_factory=list)
    status: str = "running"
    reason: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE.values(), 0))
    parent: int | None = None

    def budget(self) -> dict[str, Any]:
        """The public ``budget`` payload: each limit and its current usage."""
        return {"limits": {k: self.flow.limits.get(k) for k in BUDGETS}, "usage": dict(self.usage)}

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.flow.name,
            "status": self.status,
            "reason": self.reason,
            "step": self.step,
            "steps": len(self.flow.steps),
            "pending": self.pending,
            "state": self.state,
            "parent": self.parent,
            "budget": self.budget(),
        }


@dataclass(frozen=True)
class StepJob:
    spec: JobSpec
    step: int
    item_index: int | None


@dataclass
class Advance:
    """What a store must do after a run moved: enqueue ``jobs``, start ``children``."""

    jobs: list[StepJob] = field(default_factory=list)
    children: list[tuple[Workflow, dict[str, Any]]] = field(default_factory=list)


def _charge(run: Run, budget: str, amount: int) -> None:
    usage = USAGE[budget]
    value = run.usage[usage] + amount
    limit = run.flow.limits.get(budget)
    if limit is not None and value > limit:
        raise ConstraintViolation(budget, limit, value)
    run.usage[usage] = value


def _measure_state(run: Run) -> None:
    size = len(encode_payload(run.state, "workflow state").encode())
    limit = run.flow.limits.get("max_state_bytes")
    if limit is not None and size > limit:
        raise ConstraintViolation("max_state_bytes", limit, size)
    run.usage["state_bytes"] = size


def _enter(run: Run, advance: Advance) -> None:
    """Move to the next step that has work (or to the end), queueing its jobs into ``advance``."""
    while True:
        run.step += 1
        run.results = []
        if run.step >= len(run.flow.steps):
            run.status = "completed"
            return
        step = run.flow.steps[run.step]
        _charge(run, "max_transitions", 1)
        if step.kind == "then":
            _charge(run, "max_cost_units", step.cost_units)
            advance.jobs.append(StepJob(step.spec(run.state), run.step, None))
            run.pending = 1
            return
        items = run.state.get(str(step.key))
        if not isinstance(items, list):
            raise StepFailure(f"step {run.step}: state[{step.key!r}] must be a list for for_each")
        _charge(run, "max_for_each_items", len(items))
        _charge(run, "max_cost_units", step.cost_units * len(items))
        if not items:
            run.state[str(step.into)] = []
            continue
        run.results = [None] * len(items)
        run.pending = len(items)
        advance.jobs.extend(StepJob(step.spec(item), run.step, i) for i, item in enumerate(items))
        return


def _fail(run: Run, reason: str) -> Advance:
    run.status = "failed"
    run.reason = reason
    run.pending = 0
    return Advance()


def start(run: Run) -> Advance:
    """Begin a new run (``run.step`` is -1): the first step's jobs, or the failure that stopped it."""
    advance = Advance()
    try:
        _measure_state(run)
        _enter(run, advance)
    except (ConstraintViolation, StepFailure, ValueError) as problem:
        return _fail(run, str(problem))
    return advance


def step_done(run: Run, step: int, item_index: int | None, result: Any) -> Advance:
    """A step's job finished with ``result``: merge it and, when the step is complete, move on."""
    if run.status != "running" or step != run.step:
        return Advance()  # a late result for a run that already failed: nothing to do
    advance = Advance()
    try:
        kind = run.flow.steps[step]
        if kind.kind == "then":
            if result is not None and not isinstance(result, dict):
                raise StepFailure(f"step {step} ({kind.handler}) must return a JSON object or null")
            update = dict(result or {})
            children = update.pop(START_KEY, [])
            if not isinstance(children, list):
                raise StepFailure(f"step {step}: {START_KEY} must be a list")
            for child in children:
                if not isinstance(child, dict):
                    raise StepFailure(f"step {step}: each of {START_KEY} must be an object")
                _charge(run, "max_started_workflows", 1)
                state = child.get("state", {})
                if not isinstance(state, dict):
                    raise StepFailure(f"step {step}: a child workflow's state must be an object")
                advance.children.append((Workflow.from_definition(child.get("definition")), state))
            run.state.update(update)
        else:
            assert item_index is not None
            run.results[item_index] = result
        run.pending -= 1
        if run.pending == 0:
            if kind.kind == "for_each":
                run.state[str(kind.into)] = run.results
            _measure_state(run)
            _enter(run, advance)
    except (ConstraintViolation, StepFailure, ValueError, TypeError) as problem:
        return _fail(run, str(problem))
    return advance


def step_failed(run: Run, step: int, reason: str) -> None:
    """A step's job failed for good: so does the run."""
    if run.status == "running":
        _fail(run, f"step {step} failed: {reason}")


def dumps(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)
