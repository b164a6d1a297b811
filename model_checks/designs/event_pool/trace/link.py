"""Spec and reference on the same traces, for the event pool's small scenarios.

``spec_traces(constants)``: every complete behaviour of ``spec/event_pool.py`` projected to
trace events (``export.project``); ``reference_traces(scenario)``: the distinct traces of
every execution of the reference under exhaustive DPOR (``traced.traced_program``). Both are
sets of tuples of ``thread event k=v ...`` words, the client named ``client``. The spec's
client is the thread-pool API (submit N times, wait for callbacks, close): compare it with an
``api=True`` scenario of as many submissions.

This is the Work Lane's ``lanecheck link compare`` (check 2) in its simplest form: no
horizon, no classes of spec-only traces; tests/event_pool/test_trace_link.py pins the result.
"""

from __future__ import annotations

from collections.abc import Hashable

from model_checks.designs.event_pool.scenarios import PoolScenario
from model_checks.designs.event_pool.trace.export import event_of
from model_checks.designs.event_pool.trace.traced import event_words, traced_program
from model_checks.harness import Options, check
from model_checks.harness.options import Result
from spec import event_pool as ep
from spec.language import Instance, Spec

Trace = tuple[str, ...]
CLIENT = "client"  # the spec's client process; the reference's client thread is renamed to it


def spec_traces(constants: ep.Constants, spec: Spec = ep.SPEC) -> set[Trace]:
    """The projected traces of every complete behaviour (depth-first, memoised per state) of
    ``spec`` (the event pool's, or one of its mutants)."""
    inst = Instance(spec, constants)
    memo: dict[Hashable, frozenset[Trace]] = {}

    def suffixes(state: Hashable) -> frozenset[Trace]:
        known = memo.get(state)
        if known is not None:
            return known
        out: set[Trace] = set()
        steps = list(inst.successors(state))
        if not steps and inst.is_terminal(state):
            out.add(())
        for t in steps:
            ev = None if t.event is None or t.fields is None else event_of(t.event, dict(t.fields))
            word = () if ev is None else (event_words({"seq": 0, "thread": str(t.process), **ev}),)
            out.update(word + rest for rest in suffixes(t.state))
        memo[state] = frozenset(out)
        return memo[state]

    found: set[Trace] = set()
    for s in inst.initial_states():
        found |= suffixes(s)
    return found


def reference_traces(scenario: PoolScenario, client: str = "main") -> tuple[set[Trace], Result]:
    """The distinct traces of the reference under exhaustive DPOR (each also validated), and the result."""
    result = check(traced_program(scenario, collect=True), Options(strategy="dpor", time_limit=120))
    traces: set[Trace] = set()
    for outcome in result.outcomes:
        assert isinstance(outcome, tuple) and len(outcome) == 2, outcome  # (final's value, the trace)
        words: Trace = outcome[1]
        traces.add(tuple(_renamed(w, client) for w in words))
    return traces, result


def _renamed(word: str, client: str) -> str:
    thread, _, rest = word.partition(" ")
    return f"{CLIENT if thread == client else thread} {rest}"
