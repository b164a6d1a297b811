"""The soak: many jobs, several worker processes, kill -9 every few seconds, tight budgets.

``run_soak`` enqueues ``jobs`` jobs (queue ``q`` budget 4; groups ``g`` 3 and ``h`` 2, each with a
concurrency limit of 2; costs 1 and 2; one in ``fail_every`` always fails), runs ``workers`` worker
processes (``soak_worker``) on one store, and every ``kill_every`` seconds (give or take half)
kills one with SIGKILL in the middle of a job and starts a replacement. Each process traces its
own file. At the end the merged trace, closed by the store's final counts, is judged by
`lanecheck validate`'s admission format as a complete run: no budget or group limit exceeded at
any admission, no double claim, attempts that count admissions, no job lost; and the soak checks
on top that every job ended done or failed with a reason (none pending, none processing) and that
no job was finished twice.

``python -m model_checks.designs.admission.soak [--jobs N] [--store URL] ...`` runs it from the
command line (JSON result, exit 1 on a problem); ``bench(quick)`` is the same as a benchmark;
``tests/jobs/test_soak.py`` runs a CI-sized one on both stores and the full one (100,000 jobs)
under the ``soak`` mark.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from model_checks.conformance.validator import validate_lines
from model_checks.designs.admission import soak_worker
from model_checks.designs.admission.trace import merged_lines
from reference.jobs import Budgets, JobSpec
from reference.jobs.location import open_store
from reference.jobs.tracing import JsonlTraceFile

BUDGETS = Budgets({"q": 4}, {"g": 3, "h": 2})


@dataclass(frozen=True)
class SoakConfig:
    store: str
    """A store URL (``sqlite:///...`` or ``postgresql://...``): it must be empty."""
    jobs: int = 1000
    workers: int = 4
    kill_every: float = 3.0
    """Mean seconds between kills (uniform in half to one and a half times this); 0: no kills."""
    first_kill: float | None = None
    """Seconds before the first kill (None: drawn like the others); a short soak sets 0, so that
    its kill happens before the jobs run out."""
    lease: float = 1.0
    """Short, so a killed worker's job comes back soon."""
    max_attempts: int = 5
    fail_every: int = 100
    seed: int = 0
    time_limit: float = 3600.0
    """Seconds after which every worker is killed and the soak reported as timed out."""


@dataclass
class SoakResult:
    config: dict[str, Any]
    seconds: float = 0.0
    enqueue_seconds: float = 0.0
    kills: int = 0
    workers_started: int = 0
    timed_out: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    failed_reasons: dict[str, int] = field(default_factory=dict)
    """Failed jobs by the start of their reason (``attempt``, ``lease expired``...)."""
    finished_twice: list[int] = field(default_factory=list)
    handler_runs: int = 0
    events: int = 0
    verdict: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def _spec(n: int, fail_every: int, max_attempts: int) -> JobSpec:
    return JobSpec(
        "q",
        {"n": n, "fail": fail_every > 0 and n % fail_every == fail_every - 1},
        handler="soak",
        max_attempts=max_attempts,
        backoff=0.01,
        concurrency_group="g" if n % 3 else "h",
        concurrency_limit=2,
        cost_units=1 + n % 2,
    )


class _Fleet:
    """The worker processes: started, killed in the middle of a job, replaced."""

    def __init__(self, config: SoakConfig, work: Path, progress: Callable[[str], None]) -> None:
        self.config = config
        self.work = work
        self.kill_dir = work / "kill"
        self.kill_dir.mkdir()
        self.progress = progress
        self.alive: list[subprocess.Popen[bytes]] = []
        self.started = 0
        self.kills = 0
        self.env = {
            **os.environ,
            soak_worker.KILL_DIR: str(self.kill_dir),
            soak_worker.LOG: str(work / "runs.log"),
        }

    def start(self) -> None:
        self.started += 1
        spec = {
            "name": f"w{self.started}",
            "store": self.config.store,
            "traces": str(self.work / "traces"),
            "lease": self.config.lease,
            "poll": 0.01,
            "retry_after": 0.01,
        }
        argv = [sys.executable, "-m", "model_checks.designs.admission.soak_worker", json.dumps(spec)]
        self.alive.append(subprocess.Popen(argv, env=self.env, stdin=subprocess.DEVNULL))

    def reap(self) -> list[int | None]:
        codes = [p.returncode for p in self.alive if p.poll() is not None]
        self.alive = [p for p in self.alive if p.returncode is None]
        return codes

    def kill_one(self, rng: random.Random) -> bool:
        """Kill a random worker in the middle of a job (see ``soak_worker``); False if none was."""
        if not self.alive:
            return False
        victim = rng.choice(self.alive)
        ask = self.kill_dir / str(victim.pid)
        ask.touch()
        ready = ask.with_suffix(".ready")
        deadline = time.monotonic() + 5.0
        while not ready.exists():
            if victim.poll() is not None or time.monotonic() > deadline:
                ask.unlink(missing_ok=True)  # done, or no job came: no kill this time
                return False
            time.sleep(0.005)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        self.alive.remove(victim)
        self.kills += 1
        self.progress(f"killed pid {victim.pid} (kill {self.kills})")
        return True

    def kill_all(self) -> None:
        for process in self.alive:
            process.kill()
            process.wait()
        self.alive = []


def _enqueue(config: SoakConfig, traces: Path) -> None:
    with (
        JsonlTraceFile(traces / "trace-setup.jsonl", "setup", {}) as tracer,
        open_store(config.store, tracer=tracer, process="setup") as store,
    ):
        store.set_budgets(BUDGETS)
        for n in range(config.jobs):
            store.enqueue(_spec(n, config.fail_every, config.max_attempts))


def judge(result: SoakResult, config: SoakConfig, work: Path) -> None:
    with open_store(config.store) as store:
        status = store.status(1000)
        counts = dict(status.counts)
    result.counts = counts
    try:
        lines = merged_lines((work / "traces").glob("*.jsonl"), end=counts)
    except ValueError as problem:
        result.problems.append(f"the traces do not merge: {problem}")
        return
    result.events = len(lines) - 2
    verdict = validate_lines(lines, complete=True)
    result.verdict = {"code": verdict.code, "rule": verdict.rule, "message": verdict.message}
    if verdict.code != 0 or verdict.prefix:
        result.problems.append(f"the trace does not validate: {verdict.message}")
    finishes: Counter[int] = Counter()
    reasons: Counter[str] = Counter()
    for line in lines[1:]:
        event = json.loads(line)
        if event["event"] == "finish":
            finishes[event["job"]] += 1
        elif event["event"] == "fail" and event.get("final"):
            reasons["handler failed" if " failed: " in event["reason"] else event["reason"]] += 1
        elif event["event"] == "lease_expire" and event["outcome"] == "failed":
            reasons["lease expired"] += 1
    result.failed_reasons = dict(reasons)
    result.finished_twice = sorted(job for job, n in finishes.items() if n > 1)
    if result.finished_twice:
        result.problems.append(f"jobs finished twice: {result.finished_twice[:10]}")
    ended = counts.get("done", 0) + counts.get("failed", 0)
    if ended != config.jobs or counts.get("pending", 0) or counts.get("processing", 0):
        result.problems.append(f"not every job ended done or failed: {counts}")
    if any(not f.get("reason") for f in status.failed):
        result.problems.append("a failed job has no reason")
    log = work / "runs.log"
    result.handler_runs = len(log.read_text().split()) if log.exists() else 0


def run_soak(
    config: SoakConfig, *, work: Path | None = None, progress: Callable[[str], None] | None = None
) -> SoakResult:
    """Run the soak (see the module docstring) in ``work`` (a new temporary directory if None)."""
    say = progress or (lambda _: None)
    result = SoakResult(asdict(config))
    if work is None:
        work = Path(tempfile.mkdtemp(prefix="lanecheck-soak-"))
    (work / "traces").mkdir(parents=True)
    rng = random.Random(config.seed)
    began = time.monotonic()
    _enqueue(config, work / "traces")
    result.enqueue_seconds = round(time.monotonic() - began, 3)
    say(f"enqueued {config.jobs} jobs in {result.enqueue_seconds} s")
    fleet = _Fleet(config, work, say)
    began = time.monotonic()
    for _ in range(config.workers):
        fleet.start()

    def next_kill() -> float:
        return time.monotonic() + rng.uniform(0.5, 1.5) * config.kill_every

    if config.kill_every <= 0:
        kill_at = float("inf")
    elif config.first_kill is not None:
        kill_at = time.monotonic() + config.first_kill
    else:
        kill_at = next_kill()
    try:
        while fleet.alive:
            for code in fleet.reap():
                if code != 0:
                    result.problems.append(f"a worker exited with {code}")
            if time.monotonic() - began > config.time_limit:
                result.timed_out = True
                result.problems.append(f"timed out after {config.time_limit} s")
                break
            if time.monotonic() >= kill_at and fleet.alive:
                if fleet.kill_one(rng):
                    fleet.start()
                kill_at = next_kill()
            time.sleep(0.02)
    finally:
        fleet.kill_all()
    result.seconds = round(time.monotonic() - began, 3)
    result.kills, result.workers_started = fleet.kills, fleet.started
    judge(result, config, work)
    return result


def bench(quick: bool = False) -> dict[str, Any]:
    """The soak on a new SQLite file as a benchmark: 2,000 jobs with ``quick``, else 100,000."""
    with tempfile.TemporaryDirectory(prefix="lanecheck-soak-") as tmp:
        config = SoakConfig("sqlite:///" + str(Path(tmp) / "jobs.db"), jobs=2000 if quick else 100_000)
        load = os.getloadavg()
        result = run_soak(config, work=Path(tmp) / "work")
    figures = result.as_json()
    figures["jobs_per_s"] = round(config.jobs / result.seconds, 1) if result.seconds else 0.0
    figures["load_before"] = [round(x, 2) for x in load]
    figures["load_after"] = [round(x, 2) for x in os.getloadavg()]
    return figures


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m model_checks.designs.admission.soak")
    parser.add_argument("--store", help="an empty store's URL (default: a new SQLite file)")
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--kill-every", type=float, default=3.0, help="mean seconds between kills (0: none)")
    parser.add_argument("--lease", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, help="keep the traces here (default: a temporary directory)")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="lanecheck-soak-"))
    store = args.store or "sqlite:///" + str(work / "jobs.db")
    config = SoakConfig(
        store,
        jobs=args.jobs,
        workers=args.workers,
        kill_every=args.kill_every,
        lease=args.lease,
        seed=args.seed,
    )
    load = os.getloadavg()
    result = run_soak(
        config, work=work / "run", progress=lambda line: print(line, file=sys.stderr, flush=True)
    )
    figures = {**result.as_json(), "load_before": list(load), "load_after": list(os.getloadavg())}
    print(json.dumps(figures, indent=2))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
