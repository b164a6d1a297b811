"""Rendering a failing execution: the Lincheck-style step table and the ``Failure`` record."""

from __future__ import annotations

import os

from model_checks.harness import patch_random
from model_checks.harness.options import Failure, StepRecord
from model_checks.harness.report_timing import timing_note
from model_checks.harness.rt.objects import ALT_MARK, TIMEOUT, Op
from model_checks.harness.rt.scheduler import ExecFailure, Execution
from model_checks.harness.schedule import Schedule, choice_hash


def _short(value: object, limit: int = 24) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_QUIET = frozenset({"begin", "exit", "spawn", "yield", "release", "notify", "notify_all", "set", "store"})


def _operation(op: Op, alt: int, result: object) -> str:
    text = op.describe()
    if alt == TIMEOUT:
        text += " -> timed out"
    elif alt:
        text += " -> spurious wakeup"
    elif op.kind not in _QUIET and result is not None and text not in ("acquire", "wait woke, reacquired"):
        text += f" -> {_short(result)}"
    return text


def step_records(ex: Execution) -> list[StepRecord]:
    rows = []
    for i, s in enumerate(ex.steps):
        file, line = s.op.source
        src = f"{os.path.basename(file)}:{line}" if file else ""
        rows.append(
            StepRecord(
                i,
                ex.thread_label(s.tid),
                s.tid,
                _operation(s.op, s.alt, s.result),
                s.op.obj.name if s.op.kind not in ("begin", "exit", "yield") else "",
                src,
                s.preemption,
            )
        )
    return rows


def render_table(rows: list[StepRecord], threads: list[str]) -> str:
    """One column per thread (Lincheck style): a row per step, the operation in its thread's column."""
    if not rows:
        return "(no steps)"
    width = {name: max(len(name), 8) for name in threads}
    for r in rows:
        cell = f"{r.operation} {r.obj}".strip()
        width[r.thread] = max(width.get(r.thread, 8), min(len(cell), 48))
    head = "step  " + " | ".join(n.ljust(width[n]) for n in threads) + " | source"
    lines = [head, "-" * len(head)]
    for r in rows:
        cells = []
        for n in threads:
            cell = f"{r.operation} {r.obj}".strip() if n == r.thread else ""
            cells.append(cell[: width[n]].ljust(width[n]))
        mark = "*" if r.preemption else " "
        lines.append(f"{r.index:>4}{mark} " + " | ".join(cells) + f" | {r.source}")
    lines.append("(* = preemption: the previous thread could have continued)")
    return "\n".join(lines)


def schedule_of(ex: Execution, tag: str) -> str:
    steps = [(s.tid, s.alt, s.op) for s in ex.steps]
    actions = tuple((s.tid, s.alt) for s in ex.steps)
    return Schedule(tag, choice_hash(steps), actions, patch_random.draw_seed_of(ex)).encode()


def build_failure(ex: Execution, fail: ExecFailure, tag: str) -> Failure:
    rows = step_records(ex)
    names = [t.name for t in ex.threads]
    events: list[object] = []
    for source in ex.hooks.trace:
        try:
            events += list(source())
        except Exception as exc:  # a broken recorder must not hide the failure
            events.append(f"<trace unavailable: {exc}>")
    return Failure(
        kind=fail.kind,
        message=fail.message,
        schedule=schedule_of(ex, tag),
        steps=rows,
        preemptions=ex.preemptions,
        # what the schedule assumes about time first: it may be why a correct program failed
        details="\n\n".join(part for part in (timing_note(ex), fail.details) if part),
        trace_events=events,
        table=render_table(rows, names),
    )


__all__ = ["ALT_MARK", "build_failure", "render_table", "schedule_of", "step_records"]
