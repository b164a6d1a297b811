"""Run by `lanecheck bench harness` under the ``frontrun`` CLI wrapper (which it requires).

Explores the same plain-``threading`` program as our patch mode and prints JSON figures.
"""

from __future__ import annotations

import json
import sys
import time

import frontrun

from model_checks.bench import harness_plain


def main(threads: int, attempts: int) -> None:
    figures: dict[str, object] = {}
    for strategy in ("dpor", "random"):
        started = time.perf_counter()
        kwargs: dict[str, object] = (
            {"max_attempts": attempts}
            if strategy == "random"
            else {"preemption_bound": None, "stop_on_first": False}
        )
        result = frontrun.explore(
            setup=harness_plain.Account,
            workers=lambda account: account.deposit(1),
            invariant=lambda account: account.balance == threads,
            count=threads,
            strategy=strategy,
            detect_io=False,
            **kwargs,
        )
        seconds = time.perf_counter() - started
        explored = int(getattr(result, "num_explored", 0) or 0)
        figures[strategy] = {
            "executions": explored,
            "seconds": round(seconds, 3),
            "per_s": explored / seconds if seconds > 0 else 0.0,
            "property_holds": bool(getattr(result, "property_holds", False)),
        }
    print(json.dumps(figures))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
