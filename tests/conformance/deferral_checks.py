"""What a design's test of its deferred internal steps checks, shared by the designs that defer
(``search.TraceSearch(deferred=...)``): the declaration on every reachable state of a
configuration (``Declaration``, for the designs that defer per unit), the deferred search's
verdicts against the eager one's, word for word, on a corpus of traces and their mutants, and the
live set the deferral keeps small."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from model_checks.conformance.lines import validate_with
from model_checks.conformance.movers import Violation, violations
from model_checks.conformance.streamed import DesignFormat
from model_checks.conformance.verdict import Verdict
from spec.language import Spec

LIMIT = 1_000_000


def reachable_violations(
    spec: Spec,
    constants: Any,
    blocked: Mapping[str, frozenset[str]],
    *,
    local: Callable[[Any, Hashable], Hashable],
    unit: Callable[[Any, Hashable], Hashable] | None = None,
    unit_field: str | None = None,
    moves_to: Mapping[str, frozenset[Hashable]] | None = None,
    at_least: int = 1,
) -> set[Violation]:
    """``movers.violations`` over every state reachable under ``constants`` (fails if there are
    more than ``LIMIT``: then the answer would cover a sample; or fewer than ``at_least``: then
    the configuration is not the one meant)."""
    found, examined = violations(
        spec,
        constants,
        blocked,
        local=local,
        unit=unit,
        unit_field=unit_field,
        moves_to=moves_to,
        limit=LIMIT,
    )
    assert at_least <= examined < LIMIT  # every reachable state, not a bounded sample
    return found


Unit = Callable[[Any, Any], Hashable]  # (a state, a process): what the process's step is about


@dataclass(frozen=True)
class Declaration:
    """A design's deferred steps declared per unit (its ``trace_search``): what its tests check
    on every reachable state of a configuration (``violations``)."""

    spec: Spec
    configs: Mapping[str, Any]
    deferred: Mapping[str, frozenset[str]]
    local: Callable[[Any, Hashable], Hashable]
    unit: Unit
    unit_field: str
    moves_to: Mapping[str, frozenset[Hashable]] | None = None  # the pcs each deferred step leads to

    def violations(
        self,
        config: str,
        blocked: Mapping[str, frozenset[str]] | None = None,
        unit: Unit | None = None,
        moves_to: Mapping[str, frozenset[Hashable]] | None = None,
    ) -> set[Violation]:
        """``reachable_violations`` of ``blocked`` (default: the declaration), ``unit`` and
        ``moves_to`` (default: the design's) under the configuration named ``config``."""
        return reachable_violations(
            self.spec,
            self.configs[config],
            self.deferred if blocked is None else blocked,
            local=self.local,
            unit=self.unit if unit is None else unit,
            unit_field=self.unit_field,
            moves_to=self.moves_to if moves_to is None else moves_to,
        )


def same_verdict(lazy: DesignFormat, eager: DesignFormat, lines: list[str], complete: bool) -> Verdict:
    """The verdict of the deferred search (format ``lazy``), asserted equal to the eager one's: all but
    which states ``last_states`` lists, where a checker may list the states its search holds, not
    their closure under the deferred steps (the event pool and the Work Lane, since the second
    review's F3/F4: that closure grows exponentially with the steps owed)."""
    got = validate_with(lazy, lines, engine="spec", complete=complete)
    want = validate_with(eager, lines, engine="spec", complete=complete)
    assert bool(got.last_states) == bool(want.last_states), lines
    shown: dict[str, Any] = {"last_states": []}
    assert dataclasses.asdict(got) | shown == dataclasses.asdict(want) | shown, lines
    return got


def mutants(events: list[dict[str, Any]], unit_field: str, keep: int = 0) -> list[list[dict[str, Any]]]:
    """Each event dropped, each pair of neighbours from different threads swapped, each event's
    unit named one higher; the last ``keep`` events (an end event) stay as they are."""
    body, end = (events[:-keep], events[-keep:]) if keep else (events, [])
    out = [body[:i] + body[i + 1 :] + end for i in range(len(body))]
    for i in range(len(body) - 1):
        if body[i]["thread"] != body[i + 1]["thread"]:
            out.append([*body[:i], body[i + 1], body[i], *body[i + 2 :], *end])
    for i, e in enumerate(body):
        out.append([*body[:i], {**e, unit_field: e[unit_field] + 1}, *body[i + 1 :], *end])
    return out


def numbered_lines(header: Mapping[str, Any], events: list[dict[str, Any]]) -> list[str]:
    """A trace's lines: ``header``, then ``events`` numbered from 1."""
    return [json.dumps(header), *(json.dumps({**e, "seq": n}) for n, e in enumerate(events, start=1))]


def agree_on_run_and_mutants(
    lazy: DesignFormat,
    eager: DesignFormat,
    header: Mapping[str, Any],
    events: list[dict[str, Any]],
    unit_field: str,
    keep: int = 0,
) -> None:
    """The run ``events`` is a complete behaviour, and on it and each of its ``mutants`` (judged
    in turn as a complete trace and as a prefix) the deferred search says what the eager one says."""
    assert same_verdict(lazy, eager, numbered_lines(header, events), complete=True).code == 0
    codes = set()
    for n, mutant in enumerate(mutants(events, unit_field, keep)):
        codes.add(same_verdict(lazy, eager, numbered_lines(header, mutant), complete=n % 2 == 0).code)
    assert {0, 1} <= codes  # the corpus holds rejected traces, not only accepted ones


def live_set_sum(checker: Any, events: list[dict[str, Any]]) -> int:
    """``checker`` (a ``streamed.Checker`` over a ``TraceSearch``) stepped through ``events``
    numbered from 1: the sum over the steps of how many states its search holds."""
    total = 0
    for n, e in enumerate(events, start=1):
        checker.step({**e, "seq": n})
        total += len(checker.search.live)
    return total
