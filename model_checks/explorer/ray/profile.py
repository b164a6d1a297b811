"""Where a Ray worker's time goes, level by level: the split that says what the exchange costs.

Each worker times its own calls (``worker.py``) and keeps one row per BFS level:

* ``expand``: generating its share of the layer, checking invariants, merging the successors
  it owns itself into its seen-set, and collecting the others';
* ``encode``: turning the successors other workers own into batches (``codec.Codec.dump_batch``);
* ``ahead``: while waiting for the others' expansion, generating its own part of the next
  level ahead of time (``lookahead.py``: taken into the search by the next ``expand``);
* ``decode``: reading the batches addressed to it back into states (and hashing them: another
  process's hashes mean nothing here);
* ``merge``: looking those states up in its seen-set, adding the new ones, checking invariants;
* ``wait``: between its calls: waiting for the other workers' expansion (``wait_exchange``,
  which also holds Ray's shipping of the batches) and for the driver's next call after the
  layer's reports (``wait_barrier``, which holds the slowest worker's merge and the round trip).

``summarize`` adds the rows up per worker and splits ``wait`` in two: ``imbalance``, the part
explained by another worker having more to do in the same phase of the same level (skew between
the partitions), and ``overhead``, the rest (Ray's calls, transfers and scheduling).
"""

from __future__ import annotations

from typing import Any

PHASES = ("expand", "encode", "ahead", "wait_exchange", "decode", "merge", "wait_barrier")
BUSY = ("expand", "encode", "ahead", "decode", "merge")
Row = tuple[float, float, float, float, float, float, float]  # one level's seconds, in ``PHASES`` order


def _imbalance(rows: list[list[Row]], rank: int, level: int) -> float:
    """What worker ``rank`` could not help waiting for at ``level``: the slowest worker's work in
    the same phase beyond its own (looking ahead counts as its own work in the first phase)."""
    row = rows[rank][level]
    before = max(r[level][0] + r[level][1] for r in rows) - (row[0] + row[1] + row[2])
    after = max(r[level][4] + r[level][5] for r in rows) - (row[4] + row[5])
    return max(before, 0.0) + after


def summarize(rows: list[list[Row]], cpu_rows: list[list[Row]], cpu: list[float]) -> dict[str, Any]:
    """Per worker (by rank): each phase's wall seconds summed over levels; ``wait`` and its split
    into ``imbalance`` and ``overhead``; ``total``, the sum of the phases (the worker's wall time
    from its first expansion); ``cpu_*``: the busy phases' CPU seconds (its main thread's) and
    ``cpu_imbalance``, the imbalance computed from them, which a busy machine does not blur (a
    worker's wall time there is stretched by whatever else runs); ``cpu``: the worker process's
    CPU seconds in the search, Ray's threads included. ``share``: each category's part of all
    workers' wall time. ``levels``: the levels timed."""
    levels = min((len(r) for r in rows), default=0)
    workers: list[dict[str, Any]] = []
    for rank, own in enumerate(rows):
        sums = dict.fromkeys(PHASES, 0.0)
        cpu_sums = dict.fromkeys(BUSY, 0.0)
        imbalance = cpu_imbalance = 0.0
        for level in range(levels):
            for name, seconds in zip(PHASES, own[level], strict=True):
                sums[name] += seconds
            for name, seconds in zip(PHASES, cpu_rows[rank][level], strict=True):
                if name in cpu_sums:
                    cpu_sums[name] += seconds
            imbalance += _imbalance(rows, rank, level)
            cpu_imbalance += _imbalance(cpu_rows, rank, level)
        wait = sums["wait_exchange"] + sums["wait_barrier"]
        entry: dict[str, Any] = {name: round(s, 3) for name, s in sums.items()}
        entry["wait"] = round(wait, 3)
        entry["imbalance"] = round(min(imbalance, wait), 3)
        entry["overhead"] = round(max(wait - imbalance, 0.0), 3)
        entry["total"] = round(sum(sums.values()), 3)
        entry.update({f"cpu_{name}": round(s, 3) for name, s in cpu_sums.items()})
        entry["cpu_imbalance"] = round(cpu_imbalance, 3)
        entry["cpu"] = round(cpu[rank], 3)
        workers.append(entry)
    shares = {}
    if workers:
        grand = sum(w["total"] for w in workers) or 1.0
        for name in ("expand", "encode", "ahead", "decode", "merge", "imbalance", "overhead"):
            shares[name] = round(sum(w[name] for w in workers) / grand, 3)
    return {"levels": levels, "workers": workers, "share": shares}
