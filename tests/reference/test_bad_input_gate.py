"""Bad input at the Schedule Gate's public API: each bad argument or actor is refused naming it."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from reference import MAX_LANES, Result
from reference.schedule_gate import GateScheduler
from reference.schedule_gate import config_error as gate_config_error


def _handler(event: object) -> None:
    return None


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("field", "arguments"),
    [
        ("actors", {"actors": None}),
        ("actors", {"actors": []}),
        ("actors", {"actors": range(2**70)}),
        ("actors", {"actors": [_handler] * (MAX_LANES + 1)}),
        ("actors[0]", {"actors": [5]}),
        ("permits", {"permits": True}),
        ("permits", {"permits": 0}),
        ("permits", {"permits": 2.0}),
        ("workers", {"workers": 10**9}),
        ("workers", {"workers": True}),
        ("mailbox_capacity", {"mailbox_capacity": math.nan}),
        ("mailbox_capacity", {"mailbox_capacity": math.inf}),
        ("max_per_drain", {"max_per_drain": -1}),
        ("max_per_drain", {"max_per_drain": 1.5}),
        ("runtime", {"runtime": object()}),
        ("tracer", {"tracer": 1}),
        ("on_error", {"on_error": "log"}),
        ("on_discard", {"on_discard": 3}),
    ],
)
def test_the_gate_refuses_bad_arguments_naming_the_field(field: str, arguments: dict[str, Any]) -> None:
    config: dict[str, Any] = {"actors": [_handler], "permits": 1, "workers": 1, **arguments}
    actors = config.pop("actors")
    with pytest.raises((TypeError, ValueError), match="^" + re.escape(field)):
        GateScheduler(actors, **config)
    if set(arguments) <= {"actors", "permits", "workers", "mailbox_capacity", "max_per_drain"}:
        merged = {"mailbox_capacity": 1, "max_per_drain": 1, **config}
        message = gate_config_error(
            actors, merged["permits"], merged["workers"], merged["mailbox_capacity"], merged["max_per_drain"]
        )
        assert message is not None and message.startswith(field)


@pytest.mark.timeout(10)
def test_the_gate_refuses_a_bool_actor() -> None:
    ran: list[object] = []
    sched: GateScheduler[str] = GateScheduler([ran.append, ran.append], permits=1, workers=1)
    try:
        for actor in (True, False, 0.0, "0", None, 2, -1):
            assert sched.post(actor, "x") is Result.INVALID_ARGUMENT  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"^actor "):
            sched.queued(True)
        with pytest.raises(ValueError, match=r"^actor "):
            sched.gate(2)
    finally:
        assert sched.stop() is Result.SUCCESS
    assert ran == []
