"""The designs' references on one workload, in one run: items/s of each, as ratios.

The workload is ``bench.workload.SHARED`` (16 targets, 4 workers, a budget of
16, 4 producer threads); each design that offers it (``workload`` in one of its
bench modules) is run ``rounds`` times and the best round counts. The ratios are
against the first such design in the registry's order.
"""

from __future__ import annotations

from typing import Any

from model_checks.bench.workload import SHARED, workloads


def bench(quick: bool = False, rounds: int = 3) -> dict[str, Any]:
    items = 20_000 if quick else 200_000
    out: dict[str, Any] = {
        "items": items,
        "targets": SHARED.targets,
        "workers": SHARED.workers,
        "budget": SHARED.budget,
    }
    runs = workloads()
    if not runs:
        raise RuntimeError("no registered design offers the shared workload (`workload` in its benches)")
    rates: dict[str, float] = {}
    for name, run in runs.items():
        best = min(run(items, SHARED) for _ in range(1 if quick else rounds))
        rates[name] = items / best
        out[f"{name}_items_per_s"] = round(rates[name])
    baseline = next(iter(rates))
    for name, rate in rates.items():
        out[f"{name}_vs_{baseline.replace('-', '_')}"] = round(rate / rates[baseline], 3)
    return out


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(bench(quick="--quick" in sys.argv), indent=2))
