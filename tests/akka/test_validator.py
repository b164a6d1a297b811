"""The akka-mailbox validator's own tables agree with the spec, and it streams."""

from __future__ import annotations

import json
from collections import deque

from model_checks.conformance.validator import validate_lines
from model_checks.designs.akka_mailbox.configs import CONFIGS
from model_checks.designs.akka_mailbox.trace import ENABLED_AT
from reference.akka_mailbox import trace_header
from spec import akka_mailbox as am
from spec.language import Instance


def test_enabled_at_is_the_first_guard_of_each_internal_action() -> None:
    """Every internal action, in every reachable state of `small`, is enabled only at its listed pcs."""
    inst = Instance(am.SPEC, CONFIGS["small"])
    internal = {a.name for a in am.SPEC.actions if a.event is None}
    assert internal == set(ENABLED_AT)
    seen = set(inst.initial_states())
    todo = deque(seen)
    fired: set[str] = set()
    while todo:
        s = todo.popleft()
        for t in inst.successors(s):
            if t.action.event is None:
                assert am.Local(s, str(t.process))[0] in ENABLED_AT[t.action.name], (t.action.name, s)
                fired.add(t.action.name)
            if t.state not in seen:
                seen.add(t.state)
                todo.append(t.state)
    assert fired == internal


def _send_and_run(n: int) -> list[str]:
    events: list[dict[str, object]] = []
    for k in range(n):
        events += [
            {"thread": "p0", "event": "send", "mailbox": k % 2, "item": f"m{k}", "result": "ok"},
            {"thread": "p0", "event": "schedule", "mailbox": k % 2},
            {"thread": "p0", "event": "execute", "mailbox": k % 2},
            {"thread": "w0", "event": "run_begin", "mailbox": k % 2},
            {"thread": "w0", "event": "process", "mailbox": k % 2, "item": f"m{k}"},
            {"thread": "w0", "event": "run_end", "mailbox": k % 2, "processed": 1, "status": 0},
        ]
    numbered = [{"seq": i, **e} for i, e in enumerate(events, start=1)]
    return [json.dumps(trace_header({"workers": 1, "throughput": 1}))] + [json.dumps(e) for e in numbered]


def test_cli_path_judges_akka_traces_complete_or_prefix() -> None:
    lines = _send_and_run(50)
    prefix = validate_lines(lines)
    assert prefix.code == 0 and prefix.prefix and prefix.design == "akka-mailbox", prefix.message
    done = validate_lines(lines, complete=True)
    assert done.code == 0 and not done.prefix, done.message
    cut = validate_lines(lines[:-2], complete=True)  # the last message is never processed
    assert cut.code == 1 and cut.seq is None and cut.rule == 6, cut.message
    assert "m49" in cut.message
