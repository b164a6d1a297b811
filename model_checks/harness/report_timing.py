"""What a failing schedule assumes about time, said in its report (docs/harness.md, "Options",
``virtual_timeouts``): a timed wait that timed out while another thread could run or before
another thread's earlier deadline, and a sleep that ended while a thread able to run all along
made no step. Real programs often count on neither happening (a 10 ms tick during a 500 ms
sleep); the explorer allows both, and the report says so rather than leave it to be guessed."""

from __future__ import annotations

from model_checks.harness.rt.objects import TIMEOUT
from model_checks.harness.rt.scheduler import Execution


def _names(ex: Execution, tids: list[int]) -> str:
    return ", ".join(ex.thread_label(t) for t in tids)


def _idle_through(ex: Execution, index: int, tid: int, able: list[int]) -> list[int]:
    """The threads of ``able`` that made no step from ``tid``'s step before ``index`` (where it
    began to sleep) to ``index`` (where the sleep ended)."""
    began = next((i for i in range(index - 1, -1, -1) if ex.steps[i].tid == tid), -1)
    ran = {ex.steps[i].tid for i in range(began + 1, index)}
    return [t for t in able if t not in ran]


def timing_note(ex: Execution) -> str:
    """The report's paragraph on the schedule's timing assumptions ("" if it makes none)."""
    lines: list[str] = []
    timeouts = sleeps = False
    for index, able, earlier in ex.timing:
        step = ex.steps[index]
        who, what = ex.thread_label(step.tid), step.op.describe()
        if step.alt == TIMEOUT:
            if able:
                timeouts = True
                lines.append(f"step {index}: {who}'s {what} timed out while {_names(ex, able)} could run")
            if earlier:
                timeouts = True
                lines.append(
                    f"step {index}: {who}'s {what} timed out before the earlier deadline of "
                    + _names(ex, earlier)
                )
            continue
        idle = _idle_through(ex, index, step.tid, able)
        sleeps = sleeps or bool(idle or earlier)
        if idle:
            lines.append(
                f"step {index}: {who}'s {what} ended while {_names(ex, idle)}, able to run, made no "
                "step during it (delayed for the whole sleep)"
            )
        if earlier:
            lines.append(
                f"step {index}: {who}'s {what} ended after the earlier deadline of {_names(ex, earlier)}"
            )
    if not lines:
        return ""
    out = ["timing: this schedule needs", *(f"  {line}" for line in lines)]
    if timeouts and ex.virtual_timeouts:
        out.append(
            "A timed wait may time out at any point here (virtual timeouts: a thread may be delayed "
            "for any length of time). --no-virtual-timeouts (Options(virtual_timeouts=False)) "
            "assumes instead that every thread able to run runs before a timeout expires, and "
            "expires timeouts earliest deadline first: rerun with it if the program counts on that."
        )
    if sleeps:
        out.append(
            "A sleep is a yield point that may end at any point, other threads delayed past it, "
            "with or without --no-virtual-timeouts: a program that counts on other threads keeping "
            "pace with its sleeps fails here on that assumption."
        )
    return "\n".join(out)
