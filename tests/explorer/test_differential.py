"""The explorer against brute force, on random small transition systems."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from model_checks.explorer.check import check
from model_checks.explorer.search import Options
from tests.explorer.graphs import (
    Graph,
    as_spec,
    assert_matches_brute_force,
    eventually_always_fails,
    graphs,
    leads_to_fails,
)

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.timeout(120)
@SETTINGS
@given(graphs())
def test_safety_matches_brute_force(g: Graph) -> None:
    assert_matches_brute_force(check(as_spec(g), g, Options(liveness=False)), g)


@pytest.mark.timeout(120)
@SETTINGS
@given(graphs())
def test_liveness_matches_brute_force(g: Graph) -> None:
    clean = Graph(g.n, g.init, g.edges, frozenset(), g.q, g.p, frozenset(range(g.n)), g.processes, g.fair)
    spec = as_spec(clean)
    for name, fails in (
        ("EventuallyAlwaysQ", eventually_always_fails(clean)),
        ("PLeadsToQ", leads_to_fails(clean)),
    ):
        single = type(spec)(
            **{**spec.__dict__, "properties": tuple(p for p in spec.properties if p.name == name)}
        )
        result = check(single, clean, Options())
        assert (result.verdict == "violated") == fails, name
        if fails:
            cx = result.counterexample
            assert cx is not None and cx.loop_start is not None
            # The lasso is a real behaviour: its loop ends where it started, or it stutters.
            if not cx.stutter:
                assert cx.steps[-1].state == (
                    cx.steps[cx.loop_start - 1].state if cx.loop_start > 0 else cx.initial
                )
