"""``movers.violations``' BREAKS_INVARIANT: a deferred internal step that commutes with another
process's step, but whose swap passes through a state the spec's invariant rejects.

The trace search defers ``d`` past ``a`` by taking ``a`` first and ``d`` later; it drops a
successor that breaks an invariant, so if ``a``-first visits such a state the search would reject
a behaviour the spec allows (``d`` then ``a``), even though the two orders end in the same state."""

from __future__ import annotations

from typing import Any

from model_checks.conformance.movers import BREAKS_INVARIANT, violations
from spec.language import Spec, SpecBuilder, emit


def _toy(with_invariant: bool) -> Spec:
    """Process ``q`` bumps ``x`` once (internal ``Bump``); process ``p`` bumps ``y`` once and logs
    it (``Log``). ``y <= x``: ``p`` never logs before ``q`` has bumped."""
    b = SpecBuilder("movers-toy")

    @b.init
    def init(c: Any) -> list[tuple[int, int]]:
        return [(0, 0)]

    @b.action(lambda c: ("q",))
    def Bump(c: Any, s: tuple[int, int], q: str) -> tuple[int, int] | None:
        x, y = s
        return (1, y) if x == 0 else None

    @b.action(lambda c: ("p",), event="log")
    def Log(c: Any, s: tuple[int, int], p: str) -> Any:
        x, y = s
        return emit((x, 1)) if y == 0 else None

    if with_invariant:

        @b.invariant
        def logged_after_bump(c: Any, s: tuple[int, int]) -> str | None:
            return None if s[1] <= s[0] else f"y={s[1]} > x={s[0]}"

    return b.spec


def test_a_swap_through_a_state_breaking_an_invariant_is_reported() -> None:
    # Bump then Log and Log then Bump both end in (1, 1), with the same fields: the pair commutes.
    # But Log first passes through (0, 1), which breaks y <= x.
    found, examined = violations(_toy(True), None, {"Bump": frozenset()})
    assert found == {("Bump", "Log" + BREAKS_INVARIANT)}
    assert examined == 4  # (0,0), (1,0), (0,1), (1,1): every reachable state


def test_the_same_declaration_without_the_invariant_is_clean() -> None:
    # the only reason for the report above is the invariant: the steps commute
    assert violations(_toy(False), None, {"Bump": frozenset()})[0] == set()


def test_declaring_that_bump_does_not_move_past_log_is_clean() -> None:
    assert violations(_toy(True), None, {"Bump": frozenset({"Log"})})[0] == set()
