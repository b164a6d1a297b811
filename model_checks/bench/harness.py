"""`lanecheck bench harness`: executions/s per back end, DPOR against plain DFS, and frontrun.

* executions/s on the standard scenario (``standard()``: the first correct harness scenario of
  the first registered design, today ``work-lane/lanes-2x2-budget1``; PCT with a fixed seed and
  execution count, so both back ends run the same executions);
* executions DPOR needs against plain DFS on programs small enough for DFS to finish, with the
  outcome sets compared (DPOR must find the same ones);
* the same plain-``threading`` program (two locked deposits) under our patch mode and under
  ``frontrun`` (if installed), executions/s of each and their ratio;
* the compiled harness core against its pure-Python sources (``LANECHECK_PURE=1``, in a child
  process: a process runs one core) on the standard scenario, in the same run;
* time to first bug (executions and seconds) of DPOR, PCT and the portfolio on every reference
  mutant of every design and the buggy classic programs (``time_to_first_bug``; alone:
  ``python -m model_checks.bench.harness --time-to-first-bug [SECONDS]``);
* proofs of issue 16's 3-thread producer/consumer by DPOR, by state-hash pruning and by state
  pruning with sleep sets (``state_proofs``; alone: ``python -m model_checks.bench.state_proofs
  [SECONDS]``).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from model_checks.bench import harness_plain, state_proofs
from model_checks.design import Program
from model_checks.harness import Options, check, core, patched
from model_checks.harness.examples import (
    bounded_buffer,
    cas_counter,
    counter,
    handoff,
    lock_order,
    parking_pool,
)
from model_checks.harness.runtime import ControlledRuntime
from model_checks.registry import design, designs


def standard() -> str:
    """The standard scenario, ``design/scenario``: the first scenario a correct reference must pass
    (not a seeded bug) of the first registered design that has one."""
    for name, d in designs().items():
        for scenario_name, scenario in d.harness().items():
            if not scenario.must_fail:
                return f"{name}/{scenario_name}"
    raise LookupError("no registered design has a harness scenario of a correct reference")


def standard_scenario() -> Program:
    """The standard scenario's program, reached through the registry like any design's."""
    name, _, scenario = standard().partition("/")
    return design(name).harness()[scenario].build()


# Small enough for plain DFS to finish in seconds.
DPOR_PROGRAMS: dict[str, Callable[[], Program]] = {
    "counter-locked (2 threads)": lambda: counter(2, locked=True),
    "cas-counter (2 threads x 2)": lambda: cas_counter(2, 2),
    "bounded-buffer (1 slot, 2 items, 1+1 threads)": lambda: bounded_buffer(1, 2, 1, 1),
}


def _rate(result: Any) -> float:
    return float(result.executions / result.elapsed) if result.elapsed > 0 else 0.0


def _rate_of(backend: Literal["greenlet", "threads"], executions: int) -> tuple[dict[str, float], Any]:
    options = Options(strategy="pct", seed=7, max_executions=executions, backend=backend)
    cpu = time.process_time()
    result = check(standard_scenario(), options)
    cpu = time.process_time() - cpu
    assert result.failure is None, result.report()
    rate = {
        "per_s": round(_rate(result), 1),
        "per_cpu_s": round(result.executions / cpu, 1) if cpu > 0 else 0.0,
    }
    return rate, result


def backends(executions: int, repeats: int = 3) -> dict[str, Any]:
    """Executions/s of each back end on the standard scenario, best of ``repeats`` runs (the same
    executions each time: a shared machine only ever slows a run down). Also per CPU-second (what
    the process itself spent: the figure to compare across runs on a shared machine) and per step."""
    out: dict[str, Any] = {
        "scenario": standard(),
        "executions": executions,
        "repeats": repeats,
        "core": core.describe(),
    }
    backend: Literal["greenlet", "threads"]
    for backend in ("greenlet", "threads"):
        runs = [_rate_of(backend, executions) for _ in range(repeats)]
        (rate, result) = max(runs, key=lambda run: run[0]["per_cpu_s"])
        out[f"{backend}_executions_per_s"] = rate["per_s"]
        out[f"{backend}_executions_per_cpu_s"] = rate["per_cpu_s"]
        if backend == "greenlet":
            out["steps_per_execution"] = round(result.steps / result.executions, 1)
            out["greenlet_us_per_step"] = round(1e6 * result.elapsed / result.steps, 2)
    out["greenlet_vs_threads"] = round(out["greenlet_executions_per_s"] / out["threads_executions_per_s"], 2)
    return out


def _greenlet_rate(executions: int) -> dict[str, float]:
    return _rate_of("greenlet", executions)[0]


def compiled_vs_pure(executions: int) -> dict[str, Any]:
    """The greenlet back end's executions/s with this process's core and with the pure-Python
    core in a child process, alternating (best of 3 each: the machine is shared)."""
    mine: list[dict[str, float]] = []
    pure: list[dict[str, float]] = []
    env = dict(os.environ, LANECHECK_PURE="1")
    command = [sys.executable, "-m", "model_checks.bench.harness", "--greenlet-rate", str(executions)]
    for _ in range(3):
        mine.append(_greenlet_rate(executions))
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=True)
        pure.append(json.loads(done.stdout.strip().splitlines()[-1]))
    best_mine = max(mine, key=lambda r: r["per_cpu_s"])
    best_pure = max(pure, key=lambda r: r["per_cpu_s"])
    return {
        "this_core": core.describe(),
        "this_core_executions_per_cpu_s": best_mine["per_cpu_s"],
        "pure_core_executions_per_cpu_s": best_pure["per_cpu_s"],
        "ratio": round(best_mine["per_cpu_s"] / best_pure["per_cpu_s"], 2) if best_pure["per_cpu_s"] else 0.0,
    }


def dpor_vs_dfs() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, program in DPOR_PROGRAMS.items():
        dfs = check(program(), Options(strategy="dfs", minimize=False))
        dpor = check(program(), Options(strategy="dpor", minimize=False))
        assert dfs.verdict == dpor.verdict == "exhaustive", (dfs.summary(), dpor.summary())
        assert dfs.outcomes == dpor.outcomes, f"{name}: DPOR missed outcomes {dfs.outcomes - dpor.outcomes}"
        out[name] = {
            "dfs_executions": dfs.executions,
            "dpor_executions": dpor.executions,
            "dpor_share": round(dpor.executions / dfs.executions, 4),
            "outcomes": len(dfs.outcomes),
        }
    return out


def _ours_plain(threads: int) -> dict[str, Any]:
    def program(rt: ControlledRuntime) -> object:
        account = harness_plain.Account()
        harness_plain.run_deposits(account, threads)

        def final() -> int:
            assert account.balance == threads, account.balance
            return account.balance

        return final

    with patched(harness_plain):
        result = check(program, Options(strategy="dfs", minimize=False))
    assert result.failure is None and result.verdict == "exhaustive", result.summary()
    return {"executions": result.executions, "seconds": round(result.elapsed, 3), "per_s": _rate(result)}


def _frontrun_plain(threads: int, attempts: int = 200) -> dict[str, Any] | str:
    """frontrun insists on running under its own CLI wrapper, so it runs in a child process."""
    wrapper = shutil.which("frontrun") or str(Path(sys.executable).with_name("frontrun"))
    if not Path(wrapper).exists():
        return "frontrun is not installed (pip install frontrun)"
    command = [
        wrapper,
        sys.executable,
        "-m",
        "model_checks.bench.frontrun_probe",
        str(threads),
        str(attempts),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0:
        return f"frontrun failed ({done.returncode}): {done.stderr.strip()[-300:]}"
    figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def against_frontrun(threads: int = 2) -> dict[str, Any]:
    ours = _ours_plain(threads)
    theirs = _frontrun_plain(threads)
    out: dict[str, Any] = {"program": f"{threads} locked deposits, plain threading", "ours": ours}
    out["frontrun"] = theirs
    if isinstance(theirs, dict) and theirs["random"]["per_s"]:
        # Executions per second: frontrun's random strategy runs many executions of the same
        # program, the fairest per-execution rate; its DPOR needs only a couple here.
        out["ours_vs_frontrun_executions_per_s"] = round(ours["per_s"] / theirs["random"]["per_s"], 2)
    return out


# The buggy classic programs, with the options their bug needs to be reachable at all.
BUGGY_EXAMPLES: dict[str, tuple[Callable[[], Program], dict[str, Any]]] = {
    "counter-racy": (lambda: counter(2, locked=False), {}),
    "lock-order-inversion": (lambda: lock_order(True), {}),
    "handoff-missing-notify": (lambda: handoff(use_while=True, notify=False), {}),
    "handoff-if (spurious wakeups)": (lambda: handoff(use_while=False), {"spurious_wakeups": True}),
    # The case: a 2-worker pool whose idle worker parks without re-checking the queue.
    "pool-park-without-recheck (2 tasks)": (lambda: parking_pool(2, 2, recheck=False), {}),
    "pool-park-without-recheck (4 tasks)": (lambda: parking_pool(2, 4, recheck=False), {}),
}
FIRST_BUG_STRATEGIES = ("dpor", "dpor-ipb", "pct", "portfolio")
# Options of a design scenario that say which space is searched (the bench sets the rest).
_SPACE_FIELDS = ("spurious_wakeups", "virtual_timeouts", "preemption_bound", "max_steps")


def first_bug_cases() -> dict[str, tuple[Callable[[], Program], dict[str, Any]]]:
    """Every case of ``time_to_first_bug``: name -> (program factory, options of its space)."""
    cases: dict[str, tuple[Callable[[], Program], dict[str, Any]]] = {}
    for name, d in designs().items():
        for scenario_name, scenario in d.harness().items():
            if scenario.must_fail:
                space = {k: v for k, v in scenario.options.items() if k in _SPACE_FIELDS}
                cases[f"{name}/{scenario_name}"] = (scenario.build, space)
    cases.update({f"example/{k}": v for k, v in BUGGY_EXAMPLES.items()})
    return cases


def _first_bug(program: Program, options: Options) -> dict[str, Any]:
    # The reference logs a failed work item's traceback; the bench prints only its table.
    with contextlib.redirect_stderr(io.StringIO()):
        result = check(program, options)
    found = result.failure is not None
    return {
        "found": result.failure.kind if result.failure is not None else None,
        "executions": result.executions,
        "seconds": round(result.elapsed, 3),
        "verdict": result.verdict if found else f"{result.verdict} ({', '.join(result.bounded_by)})",
    }


def time_to_first_bug(time_limit: float = 30.0, seed_value: int = 0) -> dict[str, Any]:
    """Executions and seconds until the first failure, for each strategy of
    ``FIRST_BUG_STRATEGIES`` on every case of ``first_bug_cases``, each run cut at ``time_limit``
    seconds. No minimisation (its executions are not the search's); PCT and the portfolio with
    seed ``seed_value``."""
    rows: dict[str, Any] = {}
    for name, (factory, space) in first_bug_cases().items():
        row: dict[str, Any] = {}
        for strategy in FIRST_BUG_STRATEGIES:
            options = Options(
                strategy=strategy,  # type: ignore[arg-type]
                time_limit=time_limit,
                minimize=False,
                seed=seed_value,
            ).with_(**space)
            row[strategy] = _first_bug(factory(), options)
        rows[name] = row
    return {"time_limit_s": time_limit, "seed": seed_value, "core": core.describe(), "cases": rows}


def first_bug_table(figures: dict[str, Any]) -> str:
    """``time_to_first_bug``'s figures as a Markdown table (executions / seconds per strategy)."""

    def cell(run: dict[str, Any]) -> str:
        if run["found"] is None:
            return f"not found ({run['executions']:,} in {run['seconds']:.1f}s)"
        return f"{run['executions']:,} / {run['seconds']:.2f}s"

    head = "| case | " + " | ".join(FIRST_BUG_STRATEGIES) + " |"
    lines = [head, "|---" * (len(FIRST_BUG_STRATEGIES) + 1) + "|"]
    for name, row in figures["cases"].items():
        lines.append(f"| {name} | " + " | ".join(cell(row[s]) for s in FIRST_BUG_STRATEGIES) + " |")
    return "\n".join(lines)


def bench(quick: bool = False) -> dict[str, Any]:
    return {
        "backends": backends(100 if quick else 1_000, 1 if quick else 3),
        "dpor_vs_dfs": dpor_vs_dfs(),
        "plain_threading": against_frontrun(),
        "compiled_vs_pure": compiled_vs_pure(100 if quick else 500),
        "time_to_first_bug": time_to_first_bug(5.0 if quick else 30.0),
        "state_proofs": state_proofs.proofs(5.0 if quick else 60.0),
    }


if __name__ == "__main__":
    if "--greenlet-rate" in sys.argv:  # the child of ``compiled_vs_pure``
        print(json.dumps(_greenlet_rate(int(sys.argv[sys.argv.index("--greenlet-rate") + 1]))))
    elif "--time-to-first-bug" in sys.argv:  # the table of docs/performance.md
        at = sys.argv.index("--time-to-first-bug") + 1
        limit = float(sys.argv[at]) if at < len(sys.argv) else 30.0
        figures = time_to_first_bug(limit)
        print(f"time to first bug (executions / seconds; each run cut at {limit:g}s; {figures['core']})")
        print(first_bug_table(figures))
    else:
        print(json.dumps(bench(quick="--quick" in sys.argv), indent=2, default=str))
