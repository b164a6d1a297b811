"""The third outside review of the validators (session 47, T12): a sender that owes its
registration after a send (its read after the append found the word Open and unscheduled) and logs
another send is refused at that send, by rule 1, in words that say so, not "a send to a closed
mailbox" (nothing was closed)."""

from __future__ import annotations

import json

import pytest

from model_checks.conformance.validator import validate_lines

pytestmark = pytest.mark.timeout(60)

HEADER = {
    "trace": "lanecheck",
    "version": 1,
    "design": "akka-mailbox",
    "config": {"workers": 1, "throughput": 1},
}


def _lines(events: list[dict[str, object]], logs_append: bool) -> list[str]:
    header = {**HEADER, "config": {**HEADER["config"], "logs_append": logs_append}}  # type: ignore[dict-item]
    return [json.dumps(header)] + [json.dumps({"seq": n, **e}) for n, e in enumerate(events, start=1)]


def _send(mailbox: int, item: str) -> dict[str, object]:
    return {"thread": "p0", "event": "send", "mailbox": mailbox, "item": item, "result": "ok"}


@pytest.mark.parametrize("logs_append", [True, False])
@pytest.mark.parametrize("second", [0, 1])
def test_a_send_while_the_last_one_owes_its_schedule_says_so(logs_append: bool, second: int) -> None:
    events = [_send(0, "a")]
    if logs_append:
        events.append({"thread": "p0", "event": "append", "mailbox": 0, "item": "a"})
    events.append(_send(second, "b"))
    v = validate_lines(_lines(events, logs_append))
    assert (v.code, v.seq, v.rule) == (1, len(events), 1), v.message
    assert "still owes its registration" in v.message and "mailbox 0" in v.message, v.message
    assert "closed" not in v.message, v.message
