"""The streaming search's deferred steps on toy specs: what the pruning drops (states below
another held one, through any chain of deferred steps, never a cycle's), and which processes'
deferred steps an event needs when steps are declared per unit or with the pcs they lead to; and
that ``movers.violations`` catches a table the search would wrongly trust."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from model_checks.conformance.movers import MOVES_PC, MOVES_UNIT, violations
from model_checks.conformance.search import NoMatch, TraceSearch
from spec.language import Action, Spec, emit

Q = ("q",)


def _spec(*actions: Action) -> Spec:
    return Spec(name="toy", init_fn=lambda c: [0], actions=actions)


def _search(spec: Spec, deferred: dict[str, frozenset[str]], **options: Any) -> TraceSearch:
    return TraceSearch(spec, None, [0], check_invariants=False, deferred=deferred, **options)


def test_a_chain_of_deferred_steps_keeps_only_its_top() -> None:
    # 0 -> 1 -> 2 -> 3: the closure of {0} holds them all, so 1, 2 and 3 go (3 only through 1 and 2).
    step = Action("Inc", lambda c, s, q: s + 1 if s < 3 else None, (lambda c: Q,), None)
    search = _search(_spec(step), {"Inc": frozenset()})
    assert search._prune({0, 1, 2, 3}) == {0}
    # Chains are followed through the states held only (the deferred steps are not explored
    # further): 3 is reached from 1 through 2, which is not held, so both stay.
    assert search._prune({1, 3}) == {1, 3}
    assert search._prune({3}) == {3}


def test_a_cycle_of_deferred_steps_keeps_its_states() -> None:
    # 0 <-> 1, and 1 -> 2: neither 0 nor 1 is strictly above the other, so both stay (dropping
    # both would lose them); 2 is below them and goes.
    def flip(c: Any, s: int, q: str) -> int | None:
        return {0: 1, 1: 0}.get(s)

    def leave(c: Any, s: int, q: str) -> int | None:
        return 2 if s == 1 else None

    spec = _spec(Action("Flip", flip, (lambda c: Q,), None), Action("Leave", leave, (lambda c: Q,), None))
    search = _search(spec, {"Flip": frozenset(), "Leave": frozenset()})
    assert search._prune({0, 1}) == {0, 1}
    assert search._prune({0, 1, 2}) == {0, 1}
    assert search._prune({1, 2}) == {1}


# Two readers, each about its own box (its unit), and a writer whose event names a box.
READERS = ("r0", "r1")


def _units_spec() -> Spec:
    def read(c: Any, s: Any, r: str) -> Any:
        return None  # never enabled: only the choice of processes is under test

    def write(c: Any, s: Any, w: str) -> Any:
        return emit(s, box=0)

    return _spec(
        Action("Read", read, (lambda c: READERS,), None),
        Action("Write", write, (lambda c: ("w",),), "write"),
    )


def _reading(s: Any, p: str) -> str:
    return "reading"  # every process's pc: the units are what the search reads (with ``local``)


def test_per_unit_dependencies_take_only_the_event_units_processes() -> None:
    box = {"r0": 0, "r1": 1}
    per_unit = _search(
        _units_spec(),
        {"Read": frozenset({"Write"})},
        local=_reading,
        unit=lambda s, p: box.get(p),
        unit_field="box",
    )
    assert per_unit._taking("write", ("w",), 0) == {"r0"}
    assert per_unit._taking("write", ("w",), 1) == {"r1"}
    # An event that names no unit may be about any: both.
    assert per_unit._taking("write", ("w",), None) == {"r0", "r1"}
    by_name = _search(_units_spec(), {"Read": frozenset({"Write"})})
    assert by_name._taking("write", ("w",), 0) == {"r0", "r1"}


def test_a_process_about_no_unit_is_taken_for_every_unit() -> None:
    box: dict[str, int | None] = {"r0": 0, "r1": None}
    search = _search(
        _units_spec(),
        {"Read": frozenset({"Write"})},
        local=_reading,
        unit=lambda s, p: box[p],
        unit_field="box",
    )
    assert search._taking("write", ("w",), 0) == {"r0", "r1"}


def _giving_up_spec(at: frozenset[str] | None) -> Spec:
    """A worker at "took" either gives up (internal, to "idle") or begins (logged, from ``at``);
    a stopper's call (internal) enables the giving up, so it does not move past it."""

    def give_up(c: Any, s: Any, w: str) -> Any:
        return None

    def begin(c: Any, s: Any, w: str) -> Any:
        return emit(s)

    def call(c: Any, s: Any, t: str) -> Any:
        return None

    return _spec(
        Action("GiveUp", give_up, (lambda c: ("w",),), None),
        Action("Begin", begin, (lambda c: ("w",),), "begin", at=at),
        Action("Call", call, (lambda c: ("t",),), None),
    )


def _giving_up_search(at: frozenset[str] | None, moves_to: dict[str, frozenset[str]] | None) -> TraceSearch:
    pcs = {"w": "took", "t": "idle"}
    return _search(
        _giving_up_spec(at),
        {"GiveUp": frozenset(), "Call": frozenset({"GiveUp"})},
        local=lambda s, p: pcs[p],
        enabled_at={"GiveUp": frozenset({"took"}), "Call": frozenset({"idle"})},
        moves_to=moves_to,
    )


def test_a_step_that_cannot_lead_to_the_event_pulls_in_nothing() -> None:
    # Giving up leaves the worker idle, and its event fires from "took": the stopper's call,
    # which only giving up depends on, is not needed before the worker's event.
    lean = _giving_up_search(
        frozenset({"took"}), {"GiveUp": frozenset({"idle"}), "Call": frozenset({"active"})}
    )
    assert lean._taking("begin", ("w",)) == {"w"}


def test_without_the_tables_or_with_a_path_the_step_still_counts() -> None:
    full = {"w", "t"}
    assert _giving_up_search(frozenset({"took"}), None)._taking("begin", ("w",)) == full
    # The event may fire from any pc: giving up may come before it.
    assert _giving_up_search(None, {"GiveUp": frozenset({"idle"})})._taking("begin", ("w",)) == full
    # Giving up leads back to where the event fires.
    back = {"GiveUp": frozenset({"took"}), "Call": frozenset({"active"})}
    assert _giving_up_search(frozenset({"took"}), back)._taking("begin", ("w",)) == full
    # A deferred step without a declared target may lead anywhere.
    assert (
        _giving_up_search(frozenset({"took"}), {"Call": frozenset({"active"})})._taking("begin", ("w",))
        == full
    )


def _refused_spec() -> Spec:
    """A producer's post is refused (logged with result "refused") only after a stopper's call
    (internal), which therefore does not move past the refusal; an accepted post does not care."""

    def refused(c: Any, s: Any, p: str) -> Any:
        return emit(s, result="refused")

    def accepted(c: Any, s: Any, p: str) -> Any:
        return emit(s, result="ok")

    def call(c: Any, s: Any, t: str) -> Any:
        return None

    return _spec(
        Action("Refused", refused, (lambda c: ("p",),), "post"),
        Action("Accepted", accepted, (lambda c: ("p",),), "post"),
        Action("Call", call, (lambda c: ("t",),), None),
    )


def test_an_action_whose_fixed_field_the_event_contradicts_pulls_in_nothing() -> None:
    blocked = {"Call": frozenset({"Refused"})}
    lean = _search(_refused_spec(), blocked, emits={"Refused": {"result": "refused"}})
    assert lean._may_log("Refused", {"event": "post", "result": "refused"})
    assert not lean._may_log("Refused", {"event": "post", "result": "ok"})
    assert lean._taking("post", ("p",), None, frozenset({"Refused"})) == frozenset()
    # The refusal itself, or no table: the stopper's call may have to come first.
    assert lean._taking("post", ("p",), None, frozenset()) == {"t"}
    assert _search(_refused_spec(), blocked)._taking("post", ("p",)) == {"t"}


def test_moves_to_does_not_narrow_an_event_bound_to_several_processes() -> None:
    # One thread in two roles: the event binds a and b, and only a can take it (after b's
    # deferred Db, which reads t's deferred Dt). Narrowing b's steps to those leading to b's own
    # logging pc would drop Db, so Dt would not be taken and the valid Dt;Db;Ea(v=2) rejected.
    def d_t(c: Any, s: tuple[int, int, int], p: str) -> tuple[int, int, int] | None:
        return (1, s[1], s[2]) if s[0] == 0 else None

    def d_b(c: Any, s: tuple[int, int, int], p: str) -> tuple[int, int, int] | None:
        return (s[0], 1 + s[0], s[2]) if s[1] == 0 else None

    def e_a(c: Any, s: tuple[int, int, int], p: str) -> object:
        return emit((s[0], s[1], 1), v=s[1]) if s[1] != 0 and s[2] == 0 else None

    spec = Spec(
        name="toy",
        init_fn=lambda c: [(0, 0, 0)],
        actions=(
            Action("Dt", d_t, (lambda c: ("t",),), None),
            Action("Db", d_b, (lambda c: ("b",),), None),
            Action("Ea", e_a, (lambda c: ("a",),), "e", at=frozenset({"a0"})),
            Action("Eb", lambda c, s, p: None, (lambda c: ("b",),), "e", at=frozenset({"bZ"})),
        ),
    )

    def local(s: Any, p: Hashable) -> str:
        pcs: dict[Hashable, str] = {"a": f"a{s[2]}", "b": "b0" if s[1] == 0 else "b1", "t": f"t{s[0]}"}
        return pcs[p]

    search = TraceSearch(
        spec,
        None,
        [(0, 0, 0)],
        check_invariants=False,
        local=local,
        enabled_at={"Dt": frozenset({"t0"}), "Db": frozenset({"b0"})},
        deferred={"Dt": frozenset({"Db"}), "Db": frozenset({"Ea", "Dt"})},
        moves_to={"Dt": frozenset({"t1"}), "Db": frozenset({"b1"})},
    )
    assert search._taking("e", ("a", "b")) >= {"b", "t"}
    search.step({"event": "e", "v": 2}, ("a", "b"))
    assert search.states


def test_movers_catches_another_process_moving_a_deferring_process_pc() -> None:
    # State (a's pc, b's pc). a's deferred Da moves a from 0 to 1; b's Kb, logged, also sets a's pc
    # to 2 where no deferred step of a is enabled: the swap check never sees it, the moves_to check must.
    def da(c: Any, s: tuple[int, int], p: str) -> tuple[int, int] | None:
        return (1, s[1]) if s[0] == 0 else None

    def kb(c: Any, s: tuple[int, int], p: str) -> object:
        return emit((2, 1), v=0) if s[1] == 0 and s[0] == 1 else None

    spec = Spec(
        name="toy",
        init_fn=lambda c: [(0, 0)],
        actions=(
            Action("Da", da, (lambda c: ("a",),), None),
            Action("Kb", kb, (lambda c: ("b",),), "k", at=frozenset({"b0"})),
        ),
    )

    def local(s: Any, p: Hashable) -> str:
        return f"a{s[0]}" if p == "a" else f"b{s[1]}"

    tables: dict[str, Any] = {"local": local, "moves_to": {"Da": frozenset({"a1"})}}
    found, _ = violations(spec, None, {"Da": frozenset({"Kb"})}, **tables)
    assert ("Da", "Kb" + MOVES_PC) in found
    # Without moves_to the search does not rely on it, and nothing else is broken here.
    found, _ = violations(spec, None, {"Da": frozenset({"Kb"})}, local=local)
    assert not found


def test_movers_catches_a_deferred_chain_changing_its_own_unit() -> None:
    # State (a's pc, a's unit). Da moves a on and changes its unit; Db, deferred too, may follow:
    # the chain's steps would be about two units, which the per-unit search cannot follow.
    def da(c: Any, s: tuple[int, int], p: str) -> tuple[int, int] | None:
        return (1, 1) if s[0] == 0 else None

    def db(c: Any, s: tuple[int, int], p: str) -> tuple[int, int] | None:
        return (2, s[1]) if s[0] == 1 else None

    spec = Spec(
        name="toy",
        init_fn=lambda c: [(0, 0)],
        actions=(Action("Da", da, (lambda c: ("a",),), None), Action("Db", db, (lambda c: ("a",),), None)),
    )
    blocked = {"Da": frozenset[str](), "Db": frozenset[str]()}
    found, _ = violations(spec, None, blocked, unit=lambda s, p: s[1])
    assert ("Da", "Db" + MOVES_UNIT) in found
    found, _ = violations(spec, None, blocked, unit=lambda s, p: 0)  # one unit throughout
    assert not found


def test_the_state_free_bound_skips_the_look_only_when_nothing_can_be_pulled() -> None:
    """``needed_at_most``: an event that a deferred step does not move past bounds the pull by
    every process that may take such a step (the look at the states held then decides); one that
    blocks nothing is its own processes' alone (no look)."""
    from model_checks.conformance.deferral import needed_at_most

    blocking = _search(_units_spec(), {"Read": frozenset({"Write"})})
    free = _search(_units_spec(), {"Read": frozenset()})
    for search, most in ((blocking, {"r0", "r1"}), (free, set())):
        bound = needed_at_most(
            ("w",),
            frozenset(),
            search._labelled.get("write", {}),
            deferred=search.deferred,
            deferred_names=search._deferred_names,
            hidden_names=search._hidden_names,
        )
        assert bound == (frozenset(most), frozenset()), bound
    # Where the bound is wider than the event's own processes the search looks, and takes both
    # readers; where it is not, none.
    assert blocking._taking("write", ("w",)) == {"r0", "r1"}
    assert free._taking("write", ("w",)) == frozenset()


# A process q walks a -> b -> c -> d by deferred steps A, B, C; only B (it sets x) does not move
# past w's logged look at x. The look needs A and B of q first, never C.
_WALK = {"A": ("a", "b"), "B": ("b", "c"), "C": ("c", "d")}


def _walk_spec() -> Spec:
    def walker(name: str) -> Any:
        start, end = _WALK[name]

        def step(c: Any, s: tuple[str, int], q: str) -> tuple[str, int] | None:
            if s[0] != start:
                return None
            return (end, 1 if name == "B" else s[1])

        return step

    def look(c: Any, s: tuple[str, int], w: str) -> object:
        return emit(s, x=s[1])

    return Spec(
        name="walk",
        init_fn=lambda c: [("a", 0)],
        actions=(
            *(Action(name, walker(name), (lambda c: ("q",),), None) for name in _WALK),
            Action("Look", look, (lambda c: ("w",),), "look"),
        ),
    )


def _walk_search(deferred: dict[str, frozenset[str]], moves_to: bool = True) -> TraceSearch:
    return TraceSearch(
        _walk_spec(),
        None,
        [("a", 0)],
        check_invariants=False,
        local=lambda s, p: s[0] if p == "q" else "w",
        enabled_at={name: frozenset({start}) for name, (start, _) in _WALK.items()},
        deferred=deferred,
        moves_to={name: frozenset({end}) for name, (_, end) in _WALK.items()} if moves_to else None,
    )


WALK_DEFERRED = {"A": frozenset[str](), "B": frozenset({"Look"}), "C": frozenset[str]()}


def test_a_pulled_in_process_takes_only_the_steps_up_to_its_conflicting_one() -> None:
    search = _walk_search(WALK_DEFERRED)
    procs, only, taken = search._plan("look", ("w",))
    assert taken == {"q"} and only == {"q": frozenset({"A", "B"})}
    assert search._expand(search.live, procs, only) == {("a", 0), ("b", 0), ("c", 1)}
    # Without moves_to nothing says what follows what: every step of q's may lead to B.
    _, whole, _ = _walk_search(WALK_DEFERRED, moves_to=False)._plan("look", ("w",))
    assert whole is None


def test_taking_the_prefix_only_gives_the_eager_searchs_verdicts_and_states() -> None:
    # x goes from 0 to 1 once: a look at 0 after a look at 1 is no behaviour.
    for xs in ((1,), (0, 1), (0, 0, 1, 1), (1, 0), (0, 1, 0)):
        lazy, eager = _walk_search(WALK_DEFERRED), _walk_search({})
        for n, x in enumerate(xs):
            valid = x == 1 or 1 not in xs[:n]
            for search in (lazy, eager):
                try:
                    search.step({"event": "look", "x": x}, ("w",))
                except NoMatch:
                    assert not valid, (xs, n)
                else:
                    assert valid, (xs, n)
            if not valid:
                break
            assert lazy.states == eager.states, (xs, n)
