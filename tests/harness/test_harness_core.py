"""The harness core: compiled or not, it explores the same executions; its shortcuts change nothing.

* after ``pip install`` the compiled core (mypyc) is the one that runs, unless asked otherwise;
* the compiled and the pure-Python cores take exactly the same steps, strategy by strategy;
* the enabled set built from operation ``gate``s equals the one every object's ``enabled``
  gives, at every step of programs using every primitive (with timeouts and spurious wakeups);
* threads that spawn threads concurrently keep their identities (``threads[tid]`` is thread tid).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Literal

import pytest

from model_checks.designs.work_lane.scenarios import SCENARIOS
from model_checks.harness import Options, Result, check, core
from model_checks.harness.api import run_once
from model_checks.harness.examples import bounded_buffer, handoff, timed_wait
from model_checks.harness.rt.enabled import thread_actions
from model_checks.harness.rt.objects import ALWAYS, NEVER, TIMEOUT, Action
from model_checks.harness.rt.scheduler import Execution
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.strategies.randomized import PctChooser, RandomChooser
from tests.compiled import assert_installed_compiled, fresh_interpreter

FINGERPRINT_SCRIPT = """
import json, sys
from model_checks.harness import core
import model_checks.harness.rt.scheduler as scheduler
from tests.harness.test_harness_core import fingerprints
print(json.dumps({"kind": core.kind(), "file": scheduler.__file__, "runs": fingerprints()}))
"""


def _spawners(rt: ControlledRuntime) -> object:
    """Two threads each start a thread of their own: spawns race."""
    out: list[tuple[int, str]] = []

    def leaf(n: int) -> Callable[[], None]:
        return lambda: out.append((n, rt.thread_name()))

    def spawner(n: int) -> Callable[[], None]:
        def run() -> None:
            rt.start_thread(leaf(n), f"leaf{n}").join()

        return run

    for t in [rt.start_thread(spawner(i), f"s{i}") for i in range(2)]:
        t.join()

    def final() -> tuple[tuple[int, str], ...]:
        assert sorted(out) == [(0, "leaf0"), (1, "leaf1")], out
        return tuple(sorted(out))

    return final


def _every_primitive(rt: ControlledRuntime) -> object:
    sem = rt.semaphore(1, "sem")
    q = rt.queue(1, "q")
    ev = rt.event("ev")
    r = rt.rlock("r")
    cond = rt.condition(name="cond")
    got: list[object] = []

    def a() -> None:
        with sem, r, r:
            q.put(1)
        ev.set()
        with cond:
            cond.notify_all()

    def b() -> None:
        got.append(q.get(timeout=1.0) if ev.wait(0.5) else q.get())
        with cond:
            cond.wait(0.5)
        with sem:
            pass

    for t in [rt.start_thread(a, "a"), rt.start_thread(b, "b")]:
        t.join(timeout=5.0)
    return lambda: tuple(got)


PROGRAMS: dict[str, tuple[Callable[[], Callable[[ControlledRuntime], object]], Options]] = {
    "work-lane": (SCENARIOS["work-lane/lanes-2x2-budget1"], Options(max_steps=5_000)),
    "stop-races": (SCENARIOS["work-lane/stop-discard-races-posts"], Options(spurious_wakeups=True)),
    "bounded-buffer": (lambda: bounded_buffer(1, 2, 1, 2), Options(spurious_wakeups=True)),
    "handoff": (lambda: handoff(use_while=False), Options(spurious_wakeups=True)),
    "timed-wait": (lambda: timed_wait(1.0), Options(virtual_timeouts=True)),
    "every-primitive": (lambda: _every_primitive, Options(virtual_timeouts=True, spurious_wakeups=True)),
    "spawners": (lambda: _spawners, Options()),
}


def fingerprints() -> dict[str, list[object]]:
    """What each strategy explores on each program: PCT and random executions step by step, and
    DPOR's whole search (steps per execution, verdict, outcomes)."""
    runs: dict[str, list[object]] = {}
    for name, (program, options) in PROGRAMS.items():
        for strategy in ("pct", "random"):
            taken: list[object] = []
            for index in range(20):
                chooser = PctChooser(3, index, 3, 100) if strategy == "pct" else RandomChooser(3, index)
                ex = run_once(program(), options, chooser, sources=False)
                steps = [[s.tid, s.alt, s.op.kind, repr(s.result)[:40]] for s in ex.steps]
                taken.append([steps, repr(ex.outcome), ex.failure and ex.failure.kind])
            runs[f"{name}/{strategy}"] = taken
        seen: list[object] = []

        def record(result: Result, seen: list[object] = seen) -> None:
            seen.append([result.executions, result.steps])

        result = check(
            program(), options.with_(strategy="dpor", max_executions=60, minimize=False), on_execution=record
        )
        runs[f"{name}/dpor"] = [seen, result.verdict, sorted(map(repr, result.outcomes))]
    return runs


def test_the_installed_core_is_the_compiled_one() -> None:
    assert_installed_compiled(core.kind(), core.describe(), "model_checks.harness.rt.scheduler")


def test_pure_and_compiled_cores_explore_the_same_executions() -> None:
    if core.kind() != "compiled":
        pytest.skip(f"only one core here: {core.describe()}")
    pure = json.loads(fresh_interpreter(FINGERPRINT_SCRIPT, pure=True, timeout=500).strip().splitlines()[-1])
    assert pure["kind"] == "pure" and pure["file"].endswith(".py"), pure["file"]  # decided, and done
    compiled = json.loads(json.dumps(fingerprints()))
    assert compiled.keys() == pure["runs"].keys()
    for key, runs in compiled.items():
        assert runs == pure["runs"][key], f"{key}: the cores explored different executions"


class _EnabledOracle:
    """Random choices; at every step, recompute the enabled set the slow way and compare."""

    needs_after_step = False

    def __init__(self, seed: int) -> None:
        self.inner = RandomChooser(seed, 0)
        self.steps = 0

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        prev = ex.last or 0
        expected: list[Action] = []
        for t in ex.threads:
            op = t.pending
            if op is None or t.finished:
                continue
            really = op.obj.enabled(ex, op, t.tid)
            if op.gate == ALWAYS:
                assert really, f"{op!r} has gate ALWAYS but its object says it is blocked"
            if op.gate == NEVER:
                assert not really, f"{op!r} has gate NEVER but its object says it may run"
            alts, _ = thread_actions(ex, t.tid)
            actions = [(t.tid, alt) for alt in alts]
            expected = actions + expected if t.tid == prev else expected + actions
        if expected:
            assert enabled == expected, f"step {len(ex.steps)}: {enabled} != {expected}"
        else:  # nothing can run: the virtual clock jumps to one blocked thread's timeout
            assert len(enabled) == 1 and enabled[0][1] == TIMEOUT, f"step {len(ex.steps)}: {enabled}"
        self.steps += 1
        return self.inner.choose(ex, enabled)

    def after_step(self, ex: Execution) -> None:
        return None


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gated_enabled_set_equals_asking_every_object(name: str) -> None:
    program, options = PROGRAMS[name]
    steps = 0
    for seed in range(30):
        oracle = _EnabledOracle(seed)
        ex = run_once(program(), options, oracle, sources=False)
        assert ex.failure is None or name == "handoff", ex.failure
        steps += oracle.steps
    assert steps > 100


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", ["dfs", "dpor"])
def test_threads_spawned_concurrently_keep_their_identities(strategy: Literal["dfs", "dpor"]) -> None:
    # the leaves append to one list with no lock (the outcome is sorted): a data race the
    # detector reports, beside the point of this test, so it runs without it
    result = check(_spawners, Options(strategy=strategy, minimize=False, races=False))
    assert result.failure is None, result.report()
    assert result.verdict == "exhaustive"
    assert result.outcomes == {((0, "leaf0"), (1, "leaf1"))}


@pytest.mark.timeout(300)
def test_bench_harness_reports_both_cores_from_the_same_run() -> None:
    from model_checks.bench.harness import backends, compiled_vs_pure

    rates = backends(20, 1)
    assert rates["core"] == core.describe()
    assert rates["greenlet_executions_per_s"] > 0 and rates["threads_executions_per_s"] > 0
    both = compiled_vs_pure(10)
    assert both["this_core"] == core.describe()
    assert both["this_core_executions_per_cpu_s"] > 0 and both["pure_core_executions_per_cpu_s"] > 0
