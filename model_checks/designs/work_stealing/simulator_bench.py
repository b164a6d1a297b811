"""Benchmark of the seed's step simulator (``python -m model_checks.designs.work_stealing.simulator_bench``).

One run simulates 1,000,000 initial tasks (100,000 with ``quick``) on 64 workers, split 0.55,
depth 3, seed 0, with stealing on and then off, and reports for each the wall time, the tasks
created and run, the steps, and the worker actions per second (an action: one worker's turn in a
step, a task run or an idle step), in CPU time (``time.process_time``) so that other load on the
machine does not inflate it; the wall time is reported beside it. The floor is a bare loop of as
many turns that only draws one random number each, the least a turn of the model costs in
Python; ``vs_floor`` is the simulator's CPU time over the floor's.
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any

from model_checks.designs.work_stealing.simulator import Params, simulate

WORKERS = 64


def _floor_seconds(actions: int) -> float:
    rand = random.Random(0).random
    start = time.process_time()
    for _ in range(actions):
        rand()
    return time.process_time() - start


def bench(quick: bool = False) -> dict[str, Any]:
    tasks = 100_000 if quick else 1_000_000
    figures: dict[str, Any] = {"initial_tasks": tasks, "workers": WORKERS}
    for steal in (True, False):
        params = Params(workers=WORKERS, tasks=tasks, steal=steal, seed=0)
        start, cpu = time.perf_counter(), time.process_time()
        result = simulate(params)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        actions = result.steps * WORKERS
        # Stealing off runs one worker per step; the others' idle turns cost nothing to simulate.
        simulated = actions if steal else result.steps
        floor = _floor_seconds(simulated)
        figures["steal_on" if steal else "steal_off"] = {
            "seconds": round(seconds, 3),
            "cpu_seconds": round(cpu, 3),
            "tasks_run": result.completed,
            "steps": result.steps,
            "throughput_tasks_per_step": round(result.throughput, 3),
            "worker_actions": actions,
            "simulated_actions_per_cpu_s": round(simulated / cpu) if cpu else None,
            "floor_seconds": round(floor, 3),
            "vs_floor": round(cpu / floor, 2) if floor else None,
        }
    return figures


if __name__ == "__main__":
    sys.stdout.write(json.dumps(bench(quick="--quick" in sys.argv), indent=2) + "\n")
