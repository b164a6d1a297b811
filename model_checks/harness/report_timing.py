"""What a failing schedule assumes about time, said in its report (docs/harness.md, "Options",
``virtual_timeouts``): a timed wait that timed out while another thread could run or before
another thread's earlier deadline, and a sleep that ended while a thread able to run all along
made no step. Real programs often count on neither happening (a 10 ms tick during a 500 ms
sleep); the explorer allows both, and the report says so rather than leave it to be guessed."""

from __future__ import annotations

from model_checks.harness.rt.objects import TIMEOUT
from model_checks.harness.rt.scheduler import Execution

# A verdict's note when some read of the clock measured time across code with no sleep or timeout
# between (``Execution.compute_time``): what such a branch saw is the model's, not a real run's.
COMPUTE_TIME_NOTE = (
    "the program read the clock again with no sleep or timeout between: time spent computing "
    "passes as 1 microsecond a read, so a branch on elapsed compute time (a slow path taken "
    'after a long computation) was explored only on its fast side (docs/harness.md, "The clocks")'
)


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
    for index, able, earlier in ex.timing:
        step = ex.steps[index]
        who, what = ex.thread_label(step.tid), step.op.describe()
        if step.alt == TIMEOUT:
            if able:
                lines.append(f"step {index}: {who}'s {what} timed out while {_names(ex, able)} could run")
            if earlier:
                lines.append(
                    f"step {index}: {who}'s {what} timed out before the earlier deadline of "
                    + _names(ex, earlier)
                )
            continue
        idle = _idle_through(ex, index, step.tid, able)
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
    if ex.virtual_timeouts:
        out.append(
            "A timed wait may time out, and a sleep end, at any point here (virtual timeouts: a "
            "thread may be delayed for any length of time). --no-virtual-timeouts "
            "(Options(virtual_timeouts=False)) assumes instead that every thread able to run runs "
            "before a timeout expires or a sleep ends, and ends them earliest deadline first: "
            "rerun with it if the program counts on that."
        )
    return "\n".join(out)
