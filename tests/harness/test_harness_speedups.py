"""The per-step shortcuts of the harness change how fast it runs, never what it explores.

* PCT draws the same random numbers as the textbook rule written plainly (so a seed names the
  same executions as before the shortcuts), also where it lets the running thread go on without
  building the enabled set (``PctChooser.keep``);
* an operation shared by its announcements (a lock's acquire and release...) is never shared
  where it would be written to (an execution recording source lines, a timed operation);
* a freshly rebuilt core counts as compiled, an edited one as stale (``core._decide``);
* a thread chosen again goes on without any context switch, and the back ends agree;
* source lines are recorded only for the failing execution's report (a replay), yet every
  report still shows them;
* a scheduler error raised on a controlled thread's stack reaches the caller of ``check``, even
  when the code under test catches every exception;
* hooks (invariants) run "in the scheduler", whichever thread's stack they happen to run on;
* an execution's reference cycle is broken once the next one starts, and the greenlets of
  finished threads run the next execution's threads, starting each in an empty context.
"""

from __future__ import annotations

import contextvars
import gc
import importlib.machinery
import os
import random
from typing import Any

import pytest

from model_checks.compiled_choice import decide
from model_checks.designs.work_lane.scenarios import SCENARIOS
from model_checks.harness import Options, check, core
from model_checks.harness.api import run_once
from model_checks.harness.examples import bounded_buffer, counter
from model_checks.harness.rt import backends
from model_checks.harness.rt.objects import Action
from model_checks.harness.rt.scheduler import Execution, Step, UsageError
from model_checks.harness.runtime import ControlledRuntime
from model_checks.harness.strategies.randomized import PctChooser, _rng, below, draw_one


class PlainPct:
    """PCT as written before the shortcuts: priorities, change points, ``randrange`` per step."""

    needs_after_step = False

    def __init__(self, seed: int, index: int, depth: int, expected_steps: int) -> None:
        self.rng = random.Random(seed * 1_000_003 + index)
        self.depth = max(1, depth)
        k = max(1, expected_steps)
        self.change_points = {self.rng.randrange(1, k + 1): i for i in range(1, self.depth)}
        self.priority: dict[int, float] = {}

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        for tid, _ in enabled:
            if tid not in self.priority:
                self.priority[tid] = self.depth + self.rng.random() * 1000
        best = max({t for t, _ in enabled}, key=lambda t: self.priority[t])
        step = len(ex.steps) + 1
        if step in self.change_points:
            self.priority[best] = self.depth - self.change_points[step]
            best = max({t for t, _ in enabled}, key=lambda t: self.priority[t])
        alts = [a for a in enabled if a[0] == best]
        return alts[self.rng.randrange(len(alts))]

    def after_step(self, ex: Execution) -> None:
        return None


def _schedule(ex: Execution) -> list[tuple[int, int]]:
    return [(s.tid, s.alt) for s in ex.steps]


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_draw_one_consumes_what_randrange_one_consumes(seed: int) -> None:
    fast, plain = random.Random(seed), random.Random(seed)
    for _ in range(2_000):
        draw_one(fast)
        assert plain.randrange(1) == 0
    assert fast.getstate() == plain.getstate()


@pytest.mark.parametrize("seed", [0, 1, 7, 12345])
def test_seeding_and_below_draw_what_random_draws(seed: int) -> None:
    fast, plain = _rng(seed, 3), random.Random(seed * 1_000_003 + 3)
    assert fast.getstate() == plain.getstate()
    for n in [1, 2, 3, 5, 8, 64, 65, 150, 1_000, 2**40 + 1]:
        for _ in range(50):
            assert below(fast, n) == plain.randrange(n)
    assert fast.getstate() == plain.getstate()


def test_constant_operations_are_shared_only_while_no_source_is_recorded() -> None:
    def program(rt: ControlledRuntime) -> None:
        lock = rt.lock("l")
        cond = rt.condition(lock, "c")
        fifo = rt.deque("q")

        def worker() -> None:
            for _ in range(2):
                with lock:
                    cond.notify()
                fifo.append(1)
                len(fifo)
                fifo.popleft()
            with lock:
                cond.wait(timeout=0.5)

        t = rt.start_thread(worker, "w")
        t.join()

    def ops(ex: Execution) -> dict[tuple[str, str], set[int]]:
        seen: dict[tuple[str, str], set[int]] = {}
        for s in ex.steps:
            seen.setdefault((s.op.kind, s.op.obj.name), set()).add(id(s.op))
        return seen

    for sources in (False, True):
        ex = run_once(program, Options(max_steps=200), PctChooser(7, 0, 3, 50), sources=sources)
        assert ex.failure is None
        seen = ops(ex)
        for key in [("acquire", "l"), ("release", "l"), ("notify", "c"), ("len", "q"), ("popleft", "q")]:
            # announced two or three times each: one Op for all, or one each while recording
            steps = [s for s in ex.steps if (s.op.kind, s.op.obj.name) == key]
            assert len(steps) >= 2, key
            assert len(seen[key]) == (len(steps) if sources else 1), key
        if sources:
            assert all(s.op.source != ("", 0) for s in ex.steps if s.op.kind in ("acquire", "release"))
        # a timed wait always gets its own operation (its deadline is its own)
        assert len([s for s in ex.steps if s.op.kind == "wait"]) == 1


class KeepOrChoose:
    """PCT through ``keep`` where it answers, ``choose`` elsewhere, seen from outside the
    scheduler: it gets the whole enabled set at every step, so the schedule it makes can be
    compared with the plain rule's, and it counts the steps ``keep`` decided."""

    needs_after_step = False

    def __init__(self, inner: PctChooser) -> None:
        self.inner = inner
        self.kept = 0

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        if ex.last is not None and self.inner.keep(ex, ex.threads[ex.last]):
            self.kept += 1
            return ex.threads[ex.last].run
        return self.inner.choose(ex, enabled)

    def after_step(self, ex: Execution) -> None:
        return None


# The programs both PCT comparisons run: the standard scenario; one where every thread may wake
# spuriously or time out (several alternatives a step: ``keep`` must leave those to ``choose``);
# a small bounded buffer.
PCT_PROGRAMS = [
    (lambda: SCENARIOS["work-lane/lanes-2x2-budget1"](), Options(max_steps=5_000)),
    (lambda: SCENARIOS["work-lane/stop-drain-races-posts"](), Options(spurious_wakeups=True)),
    (lambda: bounded_buffer(1, 2, 1, 2), Options()),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("program", "options"), PCT_PROGRAMS)
def test_pct_keeps_the_running_thread_only_where_the_plain_rule_does(program: Any, options: Options) -> None:
    prog = program()
    kept = 0
    for index in range(25):
        chooser = KeepOrChoose(PctChooser(7, index, 3, 150))
        fast = run_once(prog, options, chooser, sources=False)
        plain = run_once(prog, options, PlainPct(7, index, 3, 150), sources=False)
        assert _schedule(fast) == _schedule(plain), f"execution {index} differs"
        kept += chooser.kept
    assert kept > 0  # the shortcut was taken, so the comparison tested it


def test_a_rebuilt_core_is_compiled_and_an_edited_one_stale(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # mypyc relinks only its shared library when a core module changes; each module's loader
    # keeps its old time, which alone would make a fresh build look stale
    monkeypatch.syspath_prepend(str(tmp_path))  # where an install would make the library importable
    monkeypatch.delenv("LANECHECK_PURE", raising=False)
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in core.CORE:
        base = tmp_path.joinpath(*name.split("."))
        base.parent.mkdir(parents=True, exist_ok=True)
        base.with_suffix(".py").write_text("")
        (base.parent / (base.name + suffix)).write_text("import abc__mypyc")  # as a loader names it
    group = tmp_path / f"abc__mypyc{suffix}"
    group.write_text("")
    foreign = tmp_path / f"other__mypyc{suffix}"  # another package's mypyc library beside ours
    foreign.write_text("")
    source = tmp_path.joinpath(*core.CORE[0].split(".")).with_suffix(".py")
    loaders_at, edited_at, rebuilt_at = 1_000.0, 2_000.0, 3_000.0
    for path in tmp_path.rglob(f"*{suffix}"):
        os.utime(path, (loaders_at, loaders_at))
    for path in tmp_path.rglob("*.py"):
        os.utime(path, (loaders_at - 1, loaders_at - 1))
    os.utime(source, (edited_at, edited_at))
    importlib.invalidate_caches()
    assert decide(core.CORE, "harness core", str(tmp_path))[0] == "pure"  # edited after the build
    os.utime(foreign, (rebuilt_at, rebuilt_at))
    assert decide(core.CORE, "harness core", str(tmp_path))[0] == "pure"  # a newer library, not ours
    os.utime(group, (rebuilt_at, rebuilt_at))
    # rebuilt: only the library is new
    assert decide(core.CORE, "harness core", str(tmp_path)) == ("compiled", "built at install")


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("program", "options"), PCT_PROGRAMS)
def test_pct_explores_what_the_plain_rule_explores(program: Any, options: Options) -> None:
    prog = program()
    for index in range(25):
        fast = run_once(prog, options, PctChooser(7, index, 3, 150), sources=False)
        plain = run_once(prog, options, PlainPct(7, index, 3, 150), sources=False)
        assert _schedule(fast) == _schedule(plain), f"execution {index} differs"
        assert fast.outcome == plain.outcome


@pytest.mark.timeout(120)
def test_back_ends_run_the_same_executions() -> None:
    prog = SCENARIOS["work-lane/lanes-2x2-budget1"]()
    for index in range(5):
        options = Options(max_steps=5_000)
        green = run_once(prog, options, PctChooser(3, index, 3, 150))
        threads = run_once(prog, options.with_(backend="threads"), PctChooser(3, index, 3, 150))
        assert _schedule(green) == _schedule(threads)
        assert green.outcome == threads.outcome and green.failure is threads.failure is None


class CountingBackend(backends.GreenletBackend):
    def __init__(self) -> None:
        super().__init__()
        self.transfers = 0

    def resume(self, tid: int, value: object) -> object:
        self.transfers += 1
        return super().resume(tid, value)

    def switch(self, tid: int, value: object) -> object:
        self.transfers += 1
        return super().switch(tid, value)

    def suspend(self, message: object) -> object:
        self.transfers += 1
        return super().suspend(message)


class Always:
    """The running thread first: never a preemption."""

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        return enabled[0]

    def after_step(self, ex: Execution) -> None:
        return None


@pytest.mark.timeout(60)
def test_a_thread_chosen_again_goes_on_without_a_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[CountingBackend] = []

    def make(name: str) -> backends.Backend:
        made.append(CountingBackend())
        return made[-1]

    monkeypatch.setattr("model_checks.harness.api.make_backend", make)

    def program(rt: ControlledRuntime) -> None:
        lock = rt.lock()
        for _ in range(100):
            with lock:
                pass

    ex = run_once(program, Options(), Always())
    assert ex.failure is None and len(ex.steps) == 202  # begin, 200 lock operations, exit
    assert made[0].transfers <= 2  # the driver starts main; main's end comes back to it


@pytest.mark.timeout(60)
def test_reports_show_source_lines_recorded_by_a_replay() -> None:
    result = check(counter(2, locked=False), Options(minimize=False))
    assert result.failure is not None
    sources = [row.source for row in result.failure.steps if row.source]
    assert sources and all(s.startswith("examples.py:") for s in sources)
    explored = run_once(counter(2, locked=False), Options(), Always(), sources=False)
    assert all(s.op.source == ("", 0) for s in explored.steps)


class Exploding:
    def __init__(self, at: int) -> None:
        self.at = at

    def choose(self, ex: Execution, enabled: list[Action]) -> Action | None:
        if len(ex.steps) == self.at:
            raise UsageError("chooser refuses")
        return enabled[-1]

    def after_step(self, ex: Execution) -> None:
        return None


@pytest.mark.timeout(60)
@pytest.mark.parametrize("backend", ["greenlet", "threads"])
def test_scheduler_errors_reach_the_caller_through_code_that_catches_everything(backend: str) -> None:
    swallowed: list[BaseException] = []

    def program(rt: ControlledRuntime) -> None:
        lock = rt.lock()

        def body() -> None:
            for _ in range(5):
                try:
                    with lock:
                        pass
                except Exception as exc:  # the code under test must not see the harness's error
                    swallowed.append(exc)

        for t in [rt.start_thread(body, f"t{i}") for i in range(2)]:
            t.join()

    with pytest.raises(UsageError, match="chooser refuses"):
        run_once(program, Options(backend=backend), Exploding(6))  # type: ignore[arg-type]
    assert swallowed == []


@pytest.mark.timeout(60)
def test_hooks_run_as_the_scheduler() -> None:
    seen: set[str] = set()

    def program(rt: ControlledRuntime) -> None:
        lock = rt.lock()
        counter_ = rt.atomic_int()

        def invariant() -> bool:
            seen.add(rt.thread_name())
            return counter_.load() >= 0  # a read from a hook is applied directly

        rt.invariant(invariant, "reads")

        def body() -> None:
            with lock:
                counter_.fetch_add(1)

        for t in [rt.start_thread(body, f"t{i}") for i in range(2)]:
            t.join()

    result = check(program, Options(strategy="dfs"))
    assert result.verdict == "exhaustive", result.report()
    assert seen == {"<scheduler>"}


@pytest.mark.timeout(60)
def test_each_execution_is_freed_once_the_next_runs() -> None:
    # an execution is a reference cycle (the program's primitives refer to it); the search
    # breaks it when the next execution starts, so its steps do not wait for the cyclic GC
    gc.collect()
    gc.disable()
    try:
        before = sum(1 for o in gc.get_objects() if type(o) is Step)  # other tests' leftovers
        result = check(counter(3, locked=True), Options(strategy="dpor"))
        alive = sum(1 for o in gc.get_objects() if type(o) is Step) - before
    finally:
        gc.enable()
    assert result.executions > 10
    assert alive <= result.steps / result.executions + 1, (alive, result.steps)


_VAR: contextvars.ContextVar[int] = contextvars.ContextVar("_VAR", default=0)


@pytest.mark.timeout(60)
def test_reused_greenlets_start_each_thread_in_an_empty_context() -> None:
    def program(rt: ControlledRuntime) -> object:
        seen: list[int] = []

        def body() -> None:
            seen.append(_VAR.get())
            _VAR.set(7)  # left behind by this thread: the next thread on this greenlet must not see it
            rt.yield_point()

        threads = [rt.start_thread(body, f"t{i}") for i in range(2)]
        for t in threads:
            t.join()
        return lambda: tuple(seen)

    result = check(program, Options(strategy="dpor"))
    assert result.verdict == "exhaustive" and result.executions > 1, result.summary()
    assert result.outcomes == {(0, 0)}
    pool = backends._POOLS.get(__import__("greenlet").getcurrent())
    assert pool, "finished threads' greenlets were not kept for reuse"


def test_the_choosers_draw_past_patch_modes_wrappers_of_random() -> None:
    # While a program is patched, random.Random's primitives are wrapped (a program's draws on a
    # shared generator are operations); the sampling choosers' own generator names CPython's C
    # methods itself and never goes through them (through them PCT ran 7-19% fewer executions)
    import _random
    import random as random_module

    from model_checks.bench import harness_plain
    from model_checks.harness import patched
    from model_checks.harness.strategies.randomized import _rng

    with patched(harness_plain):
        assert random_module.Random.getrandbits is not _random.Random.getrandbits  # wrapped
        rng = _rng(7, 0)
        assert type(rng).getrandbits is _random.Random.getrandbits
        assert type(rng).random is _random.Random.random
        assert rng.getrandbits(64) == random_module.Random(7 * 1_000_003).getrandbits(64)
