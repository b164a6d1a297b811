"""What each unit of a full `lanecheck verify` typically costs, in CPU seconds: the order to start them in.

`lanecheck verify --jobs N` hands its units to N workers in a start order, each unit to the first
worker free; started in plan order, the longest units (a design's own providers come last in the
plan) start late and one worker finishes alone. Started longest first, the workers end together
(``model_checks.verify.longest_first``, ``makespan``). On a clean start no certificate holds the
previous run's times, so they come from this table; a unit missing from it (a new design, a renamed
scenario) starts first, as if long. The table only orders the units: rows and verdicts never
depend on it, and it lies outside every unit's dependencies (a command module), so refreshing it
re-runs nothing that a certificate holds.

Refresh it from a full run (the ``timing.units`` of ``--json``)::

    lanecheck verify --json > run.json; python -m model_checks.commands.verify_costs run.json
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path

# (first filled from the wall seconds of the idle 2026-12-02 06:47 run, where a row's wall is its CPU)
# unit key -> CPU seconds (full configurations, measured 2026-12-02 06:47 on an idle 2-core machine)
COSTS: dict[str, float] = {
    "conformance | work-lane | model_checks.designs.work_lane.link.verify_rows:rows": 141.3,
    "akka-mailbox | akka-mailbox | model_checks.designs.akka_mailbox.trace:rows": 123.1,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | one-lane-drain": 62.8,
    "harness | schedule-gate | model_checks.designs.schedule_gate.rows:rows": 61.7,
    "harness | work-stealing | model_checks.harness.design_rows:rows | pool/fork-join": 42.7,
    "harness | work-stealing | model_checks.harness.design_rows:rows | pool/park-wake-traced": 38.9,
    "conformance | work-stealing | model_checks.designs.work_stealing.rows:rows": 21.8,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | two-lanes-stop-discard": 19.5,
    "harness | work-stealing | model_checks.harness.design_rows:rows | deque/steal-after-resize": 19.2,
    "spec | akka-mailbox | model_checks.explorer.verify_rows:rows | spec": 19.0,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | one-lane-2-workers": 17.9,
    "harness | work-stealing | model_checks.harness.design_rows:rows | pool/task-raises": 16.8,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | stop-discard-refused-resubmit": 16.7,  # noqa: E501
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | lane-at-capacity": 14.3,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | two-lanes-stop-drain-races": 13.2,
    "spec | work-lane | model_checks.explorer.verify_rows:rows | spec": 12.6,
    "spec | schedule-gate | model_checks.explorer.verify_rows:rows | spec": 11.4,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | stop-discard-races-posts": 10.1,
    "harness | work-stealing | model_checks.harness.design_rows:rows | deque/resize-while-stealing": 10.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | lanes-2x2-budget1": 9.6,
    "harness | work-lane | model_checks.harness.design_rows:rows | lanes-2x2-budget2": 8.8,
    "harness | work-lane | model_checks.harness.design_rows:rows | stop-discard-after-posts": 7.6,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant-2x2/idle-before-recheck": 6.6,
    "spec | work-lane-lockfree | model_checks.explorer.verify_rows:rows | spec": 6.3,
    "harness | work-lane | model_checks.harness.design_rows:rows | lane-at-capacity": 6.3,
    "harness | work-lane | model_checks.harness.design_rows:rows | invoke-raises": 5.8,
    "harness | work-lane | model_checks.harness.design_rows:rows | stop-drain-races-posts": 5.2,
    "harness | work-lane | model_checks.harness.design_rows:rows | stop-discard-races-posts": 4.6,
    "harness | work-stealing | model_checks.harness.design_rows:rows | pool/park-wake": 4.6,
    "harness | work-stealing | model_checks.harness.design_rows:rows | pool/stop-discard": 4.4,
    "harness | work-lane | model_checks.harness.design_rows:rows | stop-from-callback": 4.4,
    "harness | work-stealing | model_checks.harness.design_rows:rows | deque/push-take-steal": 4.4,
    "harness | work-lane | model_checks.harness.design_rows:rows | lanes-in-parallel": 3.9,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | spec": 3.4,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/idle-before-recheck": 3.3,
    "conformance | event-pool | model_checks.designs.event_pool.rows:rows": 2.8,
    "conformance | work-lane | model_checks.designs.work_lane.trace.rows:rows": 2.1,
    "harness | admission | model_checks.designs.admission.rows:rows": 1.6,
    "harness | work-stealing | model_checks.harness.design_rows:rows | global/fork-join": 1.4,
    "spec | job-pool | model_checks.explorer.verify_rows:rows | spec": 1.3,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant-2x2/notify-before-publish": 1.2,
    "spec | admission | model_checks.explorer.verify_rows:rows | spec": 0.9,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | spec": 0.4,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant missing-fence": 0.4,
    "harness | event-pool | model_checks.harness.design_rows:rows | api-cancel": 0.3,
    "harness | event-pool | model_checks.harness.design_rows:rows | one-thread-three": 0.3,
    "harness | event-pool | model_checks.harness.design_rows:rows | api-wait": 0.3,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/take-without-cas": 0.2,
    "spec | work-lane-lockfree | model_checks.explorer.verify_rows:rows | --variant idle-after-recheck": 0.2,
    "harness | event-pool | model_checks.harness.design_rows:rows | two-threads-api-cancel": 0.2,
    "harness | work-stealing | model_checks.harness.design_rows:rows | deque/one-element": 0.2,
    "harness | event-pool | model_checks.harness.design_rows:rows | two-threads": 0.2,
    "spec | work-lane-lockfree | model_checks.explorer.verify_rows:rows | --variant cas-before-push": 0.2,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant steal-without-cas": 0.2,
    "spec | work-lane | model_checks.explorer.verify_rows:rows | --variant split-idle": 0.2,
    "spec | work-lane | model_checks.explorer.verify_rows:rows | --variant publish-outside-mutex": 0.2,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant join-never-helps": 0.2,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant take-without-cas": 0.2,
    "harness | event-pool | model_checks.harness.design_rows:rows | two-threads-busy": 0.2,
    "spec | work-lane-lockfree | model_checks.explorer.verify_rows:rows | --variant no-recheck": 0.2,
    "harness | work-stealing | model_checks.harness.design_rows:rows | pool/fork-join-2w": 0.1,
    "harness | event-pool | model_checks.harness.design_rows:rows | timeouts": 0.1,
    "spec | akka-mailbox | model_checks.explorer.verify_rows:rows | --variant idle-store": 0.1,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/check-outside-lock": 0.1,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/steal-reads-after-cas": 0.1,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | mutant/stop-skips-inflight": 0.1,
    "spec | work-lane | model_checks.explorer.verify_rows:rows | --variant ignore-budget": 0.1,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/stop-skips-inflight": 0.1,
    "harness | work-stealing | model_checks.harness.design_rows:rows | global/fork-join-2w": 0.1,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant steal-newest": 0.1,
    "harness | lanecheck | model_checks.harness.verify_rows:rows": 0.1,
    "harness | work-stealing | model_checks.harness.design_rows:rows | pool/park-wake-2w": 0.1,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant steal-reads-after-cas": 0.1,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant stale-mask": 0.1,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant resize-drops-newest": 0.1,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant bottom-before-slot": 0.1,
    "spec | job-pool | model_checks.explorer.verify_rows:rows | --variant never-scale-down": 0.1,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/park-without-recheck": 0.1,
    "harness | event-pool | model_checks.harness.design_rows:rows | one-thread-raises": 0.1,
    "spec | job-pool | model_checks.explorer.verify_rows:rows | --variant draining-uncounted": 0.1,
    "harness | event-pool | model_checks.harness.design_rows:rows | discard": 0.1,
    "spec | job-wakeup | model_checks.explorer.verify_rows:rows | spec": 0.0,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | one-producer": 0.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/stop-skips-owed-submit": 0.0,
    "harness | event-pool | model_checks.harness.design_rows:rows | one-thread": 0.0,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/steal-without-cas": 0.0,
    "spec | job-pool | model_checks.explorer.verify_rows:rows | --variant below-min": 0.0,
    "harness | event-pool | model_checks.harness.design_rows:rows | mutant/unlocked-check-then-wait": 0.0,
    "spec | schedule-gate | model_checks.explorer.verify_rows:rows | --variant idle-ignoring-producers": 0.0,
    "spec | work-stealing | model_checks.explorer.verify_rows:rows | --variant park-without-recheck": 0.0,
    "harness | event-pool | model_checks.harness.design_rows:rows | mutant/unlocked-next-index": 0.0,
    "spec | akka-mailbox | model_checks.explorer.verify_rows:rows | --variant schedule-while-closed": 0.0,
    "spec | schedule-gate | model_checks.explorer.verify_rows:rows | --variant release-before-decision": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant oversized-deferred": 0.0,
    "spec | akka-mailbox | model_checks.explorer.verify_rows:rows | --variant no-recheck": 0.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/park-without-recheck": 0.0,
    "spec | work-lane | model_checks.explorer.verify_rows:rows | --variant small-ready-queue": 0.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/notify-before-publish": 0.0,
    "spec | akka-mailbox | model_checks.explorer.verify_rows:rows | --variant past-throughput": 0.0,
    "spec | akka-mailbox | model_checks.explorer.verify_rows:rows | --variant check-then-set": 0.0,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | mutant/no-recheck": 0.0,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | mutant/idle-after-recheck": 0.0,
    "spec | work-lane | model_checks.explorer.verify_rows:rows | --variant double-reserve": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant check-then-claim": 0.0,
    "spec | work-lane-lockfree | model_checks.explorer.verify_rows:rows | --variant reset-drops-unreported": 0.0,  # noqa: E501
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | mutant/cas-before-push": 0.0,
    "spec | schedule-gate | model_checks.explorer.verify_rows:rows | --variant last-outcome-only": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant unlocked-next-index": 0.0,
    "harness | work-lane-lockfree | model_checks.harness.design_rows:rows | mutant/reset-drops-unreported": 0.0,  # noqa: E501
    "spec | schedule-gate | model_checks.explorer.verify_rows:rows | --variant second-token": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant manual-reset-never-reset": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant wait-after-done": 0.0,
    "spec | work-lane | model_checks.explorer.verify_rows:rows | --variant stop-skips-inflight": 0.0,
    "spec | schedule-gate | model_checks.explorer.verify_rows:rows | --variant check-then-act": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant if-instead-of-while": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant wait-ignores-running": 0.0,
    "spec | work-lane-lockfree | model_checks.explorer.verify_rows:rows | --variant stop-skips-inflight": 0.0,
    "spec | job-pool | model_checks.explorer.verify_rows:rows | --variant ignore-max": 0.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/double-submit": 0.0,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/resize-drops-newest": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant claim-then-admit": 0.0,
    "spec | job-pool | model_checks.explorer.verify_rows:rows | --variant ignore-memory-gate": 0.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/missing-notify": 0.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/no-chained-wake": 0.0,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/resize-unpublished": 0.0,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/stale-mask": 0.0,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/steal-from-self": 0.0,
    "harness | work-stealing | model_checks.harness.design_rows:rows | mutant/join-never-helps": 0.0,
    "harness | event-pool | model_checks.harness.design_rows:rows | mutant/pulse-instead-of-set": 0.0,
    "harness | event-pool | model_checks.harness.design_rows:rows | mutant/manual-reset-never-reset": 0.0,
    "harness | event-pool | model_checks.harness.design_rows:rows | mutant/if-instead-of-while": 0.0,
    "spec | akka-mailbox | model_checks.explorer.verify_rows:rows | --variant resume-without-register": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant unlocked-check-then-wait": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant signal-busy-thread": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant budget-counts-queued": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant release-unfenced": 0.0,
    "spec | job-wakeup | model_checks.explorer.verify_rows:rows | --variant relisten-then-wait": 0.0,
    "harness | work-lane | model_checks.harness.design_rows:rows | mutant/if-not-while": 0.0,
    "harness | event-pool | model_checks.harness.design_rows:rows | mutant/signal-busy-thread": 0.0,
    "spec | event-pool | model_checks.explorer.verify_rows:rows | --variant pulse-instead-of-set": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant denial-spends-attempt": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant denial-drops-job": 0.0,
    "spec | admission | model_checks.explorer.verify_rows:rows | --variant release-spends-attempt": 0.0,
    "spec | job-wakeup | model_checks.explorer.verify_rows:rows | --variant claim-then-listen": 0.0,
    "spec | job-wakeup | model_checks.explorer.verify_rows:rows | --variant notify-only": 0.0,
}


LINE = 110  # ruff's line length (pyproject.toml)
# The table as this module writes it: its comment line, then the dict, one unit a line.
TABLE = re.compile(
    r"^# unit key -> CPU seconds.*\nCOSTS: dict\[str, float\] = (\{\}|\{\n.*?^\})\n", re.M | re.S
)


def render(text: str, costs: dict[str, float], source: str) -> str:
    """``text`` (this module's) with the ``COSTS`` table replaced by ``costs``."""
    lines = [f"    {json.dumps(key)}: {seconds:.1f}," for key, seconds in costs.items()]
    body = "".join(line + ("  # noqa: E501\n" if len(line) > LINE else "\n") for line in lines)
    table = f"# unit key -> CPU seconds ({source})\nCOSTS: dict[str, float] = {{\n{body}}}\n"
    new, found = TABLE.subn(lambda _: table, text, count=1)
    if not found:
        raise ValueError("no COSTS table to replace")
    return new


def costs_of(run: Mapping[str, object]) -> dict[str, float]:
    """The CPU seconds per unit of a `lanecheck verify --json` document (its ``timing.units``)."""
    timing = run.get("timing")
    units = timing.get("units") if isinstance(timing, dict) else None
    if not isinstance(units, list) or not units:
        raise ValueError("not the output of `lanecheck verify --json`: no timing.units")
    out: dict[str, float] = {}
    for u in units:
        if not isinstance(u, dict) or not isinstance(u.get("key"), str):
            raise ValueError(f"timing.units: an entry without a key: {u!r:.80}")
        cpu = u.get("cpu_seconds")
        if cpu is None:  # reused from a certificate: no cost measured in this run
            continue
        if not isinstance(cpu, int | float) or cpu < 0:
            raise ValueError(f"timing.units: {u['key']}: cpu_seconds {cpu!r} is not a number >= 0")
        out[u["key"]] = float(cpu)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m model_checks.commands.verify_costs RUN.json\n")
        return 2
    try:
        run = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
        costs = costs_of(run if isinstance(run, dict) else {})
    except (OSError, ValueError) as problem:
        sys.stderr.write(f"{argv[0]}: {problem}\n")
        return 2
    timing = run["timing"]
    source = f"{'quick' if timing.get('quick') else 'full'} configurations, measured {timing.get('date')}"
    module = Path(__file__)
    module.write_text(render(module.read_text(encoding="utf-8"), costs, source), encoding="utf-8")
    sys.stdout.write(f"{len(costs)} units, {sum(costs.values()):.0f} CPU seconds\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
