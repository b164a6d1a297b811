"""Several processes find what one finds: the same states, verdicts and shortest counterexamples."""

from __future__ import annotations

import enum
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings

from model_checks.designs.work_lane.configs import CONFIGS
from model_checks.designs.work_lane.spec_mutants import MUTANTS
from model_checks.explorer import codec, ownership
from model_checks.explorer.check import CheckResult, check
from model_checks.explorer.parallel import WorkerFailed
from model_checks.explorer.search import Options
from model_checks.registry import DESIGNS
from spec.language import Function, Instance, SpecBuilder
from spec.work_lane import SPEC
from tests.explorer.graphs import Graph, as_spec, assert_matches_brute_force, assert_same_search, graphs

pytestmark = pytest.mark.timeout(300)

# TLC's distinct states and depth for the design (tests/tlc/test_twin.py holds the full figures).
TLC_SMALL = {False: (11_996, 30), True: (6_732, 30)}


def safety(workers: int, **kw: object) -> Options:
    return Options(liveness=False, workers=workers, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("symmetry", [False, True], ids=["plain", "symmetry"])
def test_two_processes_find_the_state_space_of_one_and_of_tlc(symmetry: bool) -> None:
    one = check(SPEC, CONFIGS["small"], safety(1, symmetry=symmetry))
    two = check(SPEC, CONFIGS["small"], safety(2, symmetry=symmetry))
    assert one.verdict == two.verdict == "holds"
    assert (two.stats.states, two.stats.depth) == TLC_SMALL[symmetry]
    assert_same_search(two, one)
    assert two.stats.coverage == one.stats.coverage


def test_three_processes_too() -> None:
    three = check(SPEC, CONFIGS["small"], safety(3))
    assert (three.verdict, three.stats.states, three.stats.transitions) == ("holds", 11_996, 47_816)


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_mutant_same_violation_and_length_with_two_processes(name: str) -> None:
    mutant = MUTANTS[name]
    constants = mutant.constants(CONFIGS[mutant.config])
    result = check(mutant.spec, constants, safety(2))
    assert result.violation is not None and result.counterexample is not None
    assert (result.violation.name, result.counterexample.length) == (mutant.expect, mutant.length)
    _replays_to_the_violation(result)
    shorter = check(mutant.spec, constants, safety(2, max_depth=mutant.length - 1))
    assert shorter.verdict == "incomplete"


def _replays_to_the_violation(result: CheckResult) -> None:
    """The steps are real ones and end in a state that breaks the property reported."""
    assert result.counterexample is not None and result.violation is not None
    last = result.counterexample.steps[-1].state
    if result.violation.kind == "invariant":
        inv = next(i for i in SPEC.invariants if i.name == result.violation.name)
        assert inv.fn(result.constants, last) is not None


@pytest.mark.parametrize(
    "bound", [{"max_states": 100}, {"max_depth": 3}, {"time_limit": 0.0}], ids=["states", "depth", "time"]
)
def test_bounds_give_incomplete_never_holds(bound: dict[str, float]) -> None:
    result = check(SPEC, CONFIGS["small"], safety(2, **bound))
    assert result.verdict == "incomplete" and result.exit_code == 3
    assert result.incomplete_reason


def test_liveness_runs_in_one_process_and_says_so() -> None:
    result = check(SPEC, CONFIGS["small"], Options(workers=2))
    assert result.verdict == "holds"
    assert "EveryStopReturns" in result.properties_checked
    assert any("searched with 1 process, not 2" in note for note in result.notes)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_other_designs_same_counts(design: str) -> None:
    """Their states nest records, so batches go through the pickle fallback."""
    d = DESIGNS[design]
    one = check(d.spec, d.config("small"), safety(1))
    two = check(d.spec, d.config("small"), safety(2))
    assert (two.verdict, two.stats.states, two.stats.transitions) == (
        one.verdict,
        one.stats.states,
        one.stats.transitions,
    )


def test_a_failing_process_is_an_error_not_a_verdict() -> None:
    b = SpecBuilder("fails-in-process-1")
    b.init(lambda c: [0])

    def Step(c: None, s: int, p: str) -> int | None:
        if s == 3:  # owned by process 1 of 2: ints hash to themselves
            raise ValueError("the spec broke here")
        return s + 1 if s < 5 else None

    b.action(lambda c: ("p",))(Step)
    b.terminal(lambda c, s: s == 5)
    with pytest.raises(ValueError):
        check(b.spec, None, safety(1))
    with pytest.raises(WorkerFailed, match="the spec broke here"):
        check(b.spec, None, safety(2))


@pytest.mark.timeout(240)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_two_processes_match_brute_force(g: Graph) -> None:
    assert_matches_brute_force(check(as_spec(g), g, safety(2)), g)


def test_codec_round_trip_keeps_equality_and_hash() -> None:
    inst = Instance(SPEC, CONFIGS["small"])
    pairs = ownership.sample(inst, None, limit=200)
    states = [s for s, _ in pairs]
    wire = codec.Codec(states[0])
    data = codec.dumps([wire.encode(s) for s in states])
    assert data[:1] == b"m"  # flat tuples: marshal, not pickle
    back = [wire.decode(x) for x in codec.loads(data)]
    assert back == states
    assert [hash(s) for s in back] == [hash(s) for s in states]


def test_batch_round_trip_keeps_states_links_and_hashes() -> None:
    inst = Instance(SPEC, CONFIGS["small"])
    states = [s for s, _ in ownership.sample(inst, None, limit=200)]
    entries = [(s, 7 * n - 1, n % 3, n % 4 - 1) for n, s in enumerate(states)]
    sender = codec.Codec(states[0])
    for hashes in ([hash(s) for s in states], None):
        data, interned = sender.dump_batch(entries, hashes)
        assert data[:1] == b"T"  # the table of distinct values, through marshal
        assert interned == states
        back = codec.Codec(states[0]).load_batch(data, rehash=hashes is None)
        assert [(h, *rest) for h, *rest in back] == [(hash(s), s, p, sw, pid) for s, p, sw, pid in entries]
        assert all(type(b[1]) is type(s) for b, s in zip(back, states, strict=True))


class Shade(enum.Enum):
    DARK = 1


class _Flags(NamedTuple):
    on: bool
    number: int
    kind: Shade | None
    fn: Function[int, int]


def test_batch_keeps_each_field_s_type_and_falls_back_to_pickle() -> None:
    fn = Function((0, 1), (1, 0))
    states = [
        _Flags(True, 1, None, fn),
        _Flags(False, 1, Shade.DARK, fn.except_(0, 0)),
        _Flags(True, 0, None, fn),
    ]
    wire = codec.Codec(states[0])
    data, _ = wire.dump_batch([(s, -1, 0, 0) for s in states], None)
    assert data[:1] == b"P"  # an enum: marshal refuses it
    back = [e[1] for e in codec.Codec(states[0]).load_batch(data, rehash=True)]
    assert back == states
    # ``True == 1``: numbered apart all the same, so no field changes type on the way
    assert [(type(b.on), type(b.number)) for b in back] == [(bool, int)] * 3
    assert back[0].fn is back[2].fn  # equal functions arrive as one object


class _Pair(NamedTuple):
    inner: tuple[object, ...]
    n: int


def test_batch_keeps_nested_values_equal_not_their_types() -> None:
    # Inside a field, equal values are one table entry whatever their type: the states that arrive
    # are equal (and hash equal) to those sent, which is all a seen-set can tell apart anyway.
    states = [_Pair((1, "x"), 0), _Pair((True, "x"), 1), _Pair((0.0,), 2), _Pair((-0.0,), 3)]
    data, _ = codec.Codec(states[0]).dump_batch([(s, -1, 0, 0) for s in states], None)
    back = [e[1] for e in codec.Codec(states[0]).load_batch(data, rehash=True)]
    assert back == states and [hash(b) for b in back] == [hash(s) for s in states]
    assert [type(b.n) for b in back] == [int] * 4


def test_batch_of_plain_states() -> None:
    wire = codec.Codec(3)
    entries = [(3, -1, 0, 0), ((1, "a"), 0, 1, 2)]
    data, interned = wire.dump_batch(entries, None)
    assert interned == [3, (1, "a")]
    assert [e[1:] for e in codec.Codec(3).load_batch(data, rehash=True)] == entries


def test_ownership_splits_work_lane_by_rarely_changed_fields() -> None:
    inst = Instance(SPEC, CONFIGS["small"])
    fields = ownership.choose(ownership.sample(inst, None), 2)
    assert fields is not None and len(fields) < len(inst.initial_states()[0])
    assert ownership.choose(ownership.sample(inst, None), 1) is None


def test_intern_step_is_intern_for_a_successor_of_an_interned_state() -> None:
    inst = Instance(SPEC, CONFIGS["small"])
    pairs = ownership.sample(inst, None, limit=200)
    wire = codec.Codec(pairs[0][0])
    for state, successors in pairs:
        parent = wire.intern(state)
        for nxt in successors:
            stepped, interned = wire.intern_step(nxt, parent), wire.intern(nxt)
            assert stepped == nxt and type(stepped) is type(nxt)
            # the same canonical objects, field by field, as interning the whole state
            assert all(a is b for a, b in zip(stepped, interned, strict=True))
    assert wire.intern_step(3, 4) == 3  # not a record: as it is
