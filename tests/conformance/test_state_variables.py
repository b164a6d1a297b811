"""``spec.language.variables``: a spec's ``Vars`` keeps ``NamedTuple``'s ``_replace`` meaning with
its faster one-call version (docs/conformance.md, "Session 23")."""

from __future__ import annotations

from typing import Any

import pytest

from spec import akka_mailbox_state, schedule_gate_state, work_lane_state

VARS: list[Any] = [schedule_gate_state.Vars, akka_mailbox_state.Vars, work_lane_state.Vars]


@pytest.mark.parametrize("cls", VARS, ids=lambda c: c.__module__)
def test_replace_sets_the_named_variables_and_keeps_the_rest(cls: Any) -> None:
    s = cls(*range(len(cls._fields)))
    for i, name in enumerate(cls._fields):
        t = s._replace(**{name: "new"})
        assert type(t) is cls
        assert t == tuple("new" if j == i else j for j in range(len(cls._fields)))
    first, last = cls._fields[0], cls._fields[-1]
    both = s._replace(**{first: "a", last: "z"})
    assert both[0] == "a" and both[-1] == "z" and both[1:-1] == s[1:-1]
    assert s._replace() == s and s == tuple(range(len(cls._fields)))  # s itself unchanged


@pytest.mark.parametrize("cls", VARS, ids=lambda c: c.__module__)
def test_replace_refuses_an_unknown_variable(cls: Any) -> None:
    s = cls(*range(len(cls._fields)))
    with pytest.raises(TypeError):
        s._replace(no_such_variable=1)
