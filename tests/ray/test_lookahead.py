"""Looking ahead (``ray/lookahead.py``) changes when a worker does its work, never the answers.

On a real Ray, how much a worker looks ahead depends on timing. Here the driver and the actors
run in this process through a stand-in for Ray that finishes every call at once, so one worker
looks ahead over everything it knows of the next layer at every level: the look-ahead path
taken as far as it goes, deterministically. Its answers must be one process's.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest

from model_checks.commands.check import load_target
from model_checks.explorer.check import CheckResult, Engine, check
from model_checks.explorer.ray import engine
from model_checks.explorer.ray.pool import Pool
from model_checks.explorer.search import Options
from model_checks.registry import designs

SAFETY = Options(liveness=False)


class _Ref:
    def __init__(self, run: Callable[[], Any]) -> None:
        try:
            self.value, self.error = run(), None
        except Exception as problem:  # kept for ``get``, as Ray keeps a task's error
            self.value, self.error = None, problem


class _Method:
    def __init__(self, bound: Callable[..., Any], returns: int = 1) -> None:
        self.bound, self.returns = bound, returns

    def options(self, num_returns: int) -> _Method:
        return _Method(self.bound, num_returns)

    def remote(self, *args: Any) -> Any:
        def run() -> Any:
            return self.bound(*(_InstantRay.get(a) if isinstance(a, _Ref) else a for a in args))

        ref = _Ref(run)
        if self.returns == 1:
            return ref
        return [_Ref(lambda i=i: _InstantRay.get(ref)[i]) for i in range(self.returns)]  # type: ignore[misc]


class _Actor:
    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __getattr__(self, name: str) -> _Method:
        return _Method(getattr(self.obj, name))


class _InstantRay:
    """Just enough of Ray for ``Pool`` and the driver: every call is done when it is made."""

    class exceptions:  # Ray's own name
        RayError = RuntimeError

    def remote(self, **_: Any) -> Callable[[type], Any]:
        def wrap(cls: type) -> Any:
            return type("Remote", (), {"remote": staticmethod(lambda: _Actor(cls()))})

        return wrap

    @staticmethod
    def get(refs: Any) -> Any:
        if isinstance(refs, list):
            return [_InstantRay.get(r) for r in refs]
        if refs.error is not None:
            raise RuntimeError(str(refs.error))
        return refs.value

    def wait(self, refs: list[Any], num_returns: int = 1) -> tuple[list[Any], list[Any]]:
        return refs[:num_returns], refs[num_returns:]

    def kill(self, actor: Any) -> None:
        pass


def _looking_ahead(name: str, config: str, variant: str | None, options: Options = SAFETY) -> CheckResult:
    spec, constants = load_target(name, config, variant)
    pool = Pool(_InstantRay())
    load = partial(load_target, name, config, variant)
    ray_engine = Engine(
        search=lambda inst, opts: engine.search_ray(pool, load, inst, opts, 2),
        workers=2,
        note="looked ahead",
        liveness_refusal=engine.LIVENESS_UNSUPPORTED,
    )
    return check(spec, constants, options, config, engine=ray_engine)


def _figures(r: CheckResult) -> tuple[Any, ...]:
    length = r.counterexample.length if r.counterexample is not None else None
    name = r.violation.name if r.violation is not None else None
    return (r.verdict, r.stats.states, r.stats.transitions, r.stats.depth, r.stats.coverage, name, length)


@pytest.fixture(autouse=True)
def _a_long_look(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # one call looks at everything the worker knows of the next layer
    monkeypatch.setattr(engine, "LOOK_AHEAD_SECONDS", 60.0)
    yield
    gc.enable()  # an explorer worker turns the collector off in its process: this one


@pytest.mark.parametrize("name", sorted(designs()))
def test_same_answers_as_one_process_when_a_worker_looks_ahead(name: str) -> None:
    d = designs()[name]
    spec, constants = load_target(name, "small", None)
    assert _figures(_looking_ahead(name, "small", None)) == _figures(check(spec, constants, SAFETY))
    safety = {"Deadlock"}
    for variant in sorted(d.mutants):
        mutant = d.mutant(variant)
        if mutant.expect not in safety | {inv.name for inv in mutant.spec.invariants}:
            continue  # a liveness mutant: a safety search finds nothing in it
        config = mutant.config
        alone = check(*load_target(name, config, variant), SAFETY)
        assert _figures(_looking_ahead(name, config, variant)) == _figures(alone), variant


def test_the_worker_did_look_ahead_and_a_bound_stays_incomplete() -> None:
    spec, constants = load_target("work-lane", "small", None)
    pool = Pool(_InstantRay())
    load = partial(load_target, "work-lane", "small", None)
    ray_engine = Engine(
        search=lambda inst, opts: engine.search_ray(pool, load, inst, opts, 2),
        workers=2,
        note="looked ahead",
        liveness_refusal=engine.LIVENESS_UNSUPPORTED,
    )
    result = check(spec, constants, SAFETY, engine=ray_engine)
    profile = pool.profile(2)
    assert profile["levels"] == result.stats.depth + 1  # one row per layer expanded, the last one empty
    assert max(w["ahead"] for w in profile["workers"]) > 0  # the path under test was taken
    for worker in profile["workers"]:
        assert worker["expand"] > 0 and worker["cpu_expand"] > 0
        assert all(seconds >= 0 for seconds in worker.values())
    for bound in ({"max_states": 100}, {"max_depth": 3}):
        bounded = _looking_ahead("work-lane", "small", None, Options(liveness=False, **bound))  # type: ignore[arg-type]
        assert bounded.verdict == "incomplete"


def test_a_state_that_raises_when_looked_at_ahead_stops_the_look_not_the_search() -> None:
    # The search may stop at this layer (a violation, a bound) before it expands the state, so
    # what the spec does with it must not fail the worker yet: ``expand`` meets it, if ever.
    from model_checks.explorer.ray.lookahead import LookAheadPartition
    from spec.language import Instance

    spec, constants = load_target("work-lane", "small", None)
    part = LookAheadPartition(Instance(spec, constants), SAFETY)
    part.states.extend(["first", "second"])

    def raises(c: object, state: object) -> object:
        raise ValueError(f"no action applies to {state!r}")

    part.dispatch.counters = []
    part.dispatch.all_calls = [(0, raises, (), 0)]
    assert part.inst.spec.constraint_fn is None
    assert part.look_ahead(0, 60.0) is False
    assert part.ahead == [] and part.ahead_failed
    assert part.look_ahead(0, 60.0) is False  # the same layer is not looked at again
    # nothing generated ahead: ``expand`` runs both states the usual way (and raises there)
    assert part.ahead == []
