"""``rt/per_type.PerType`` (a decision made once per type, read as a plain dict by C) and
``per_execution`` (what a patch module keeps for the running execution only)."""

from __future__ import annotations

import pytest

from model_checks.harness import Options, check
from model_checks.harness.per_execution import per_execution
from model_checks.harness.rt.per_type import PerType
from model_checks.harness.runtime import ControlledRuntime

pytestmark = pytest.mark.timeout(60)


def test_a_type_is_decided_at_its_first_lookup_only() -> None:
    asked: list[type] = []

    def decide(t: type) -> str:
        asked.append(t)
        return t.__name__

    table = PerType(decide)
    assert dict.get(table, int) is None  # a reader that must not decide (the C filter's) does not
    assert (table[int], table[str], table[int]) == ("int", "str", "int")
    assert asked == [int, str]
    assert dict(table) == {int: "int", str: "str"}


class _Kept:
    def __init__(self, rt: ControlledRuntime) -> None:
        self.ex = rt._ex


def test_what_an_execution_keeps_is_made_anew_in_the_next() -> None:
    kept = per_execution(_Kept)
    seen: list[tuple[object, bool]] = []

    def program(rt: ControlledRuntime) -> None:
        first = kept(rt)
        seen.append((first, kept(rt) is first and first.ex is rt._ex))

    result = check(program, Options(strategy="random", max_executions=3))
    assert result.executions == 3, result.report()
    assert all(same for _, same in seen)
    assert len({id(first) for first, _ in seen}) == len(seen)
