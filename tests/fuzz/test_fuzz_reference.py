"""Fuzz the references' public API: every constructor, factory and method argument.

Arguments are drawn from valid small values mixed with wrong types (bools, floats including
nan and inf, strings, None, arbitrary objects), extreme integers (negative, past the documented
limits, 2**70) and odd containers. The property, for each reference:

* construction answers with a *named* refusal (``TypeError``/``ValueError`` whose message
  starts with the field's name; ``create``: ``INVALID_ARGUMENT``) or a working scheduler;
* a working scheduler, driven with a mix of good and bad handles, indices and stop modes,
  refuses the bad ones with a result code and loses nothing: after stop, every accepted item
  was invoked or reported discarded, exactly once (counted).

Time is bounded by the test's timeout and by the limits themselves: no drawn argument may
make a reference allocate or start more than a documented maximum up front.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.akka_mailbox import Dispatcher, Send
from reference.arguments import MAX_LANES, MAX_SIZE, MAX_WORKERS
from reference.results import Result
from reference.schedule_gate import GateScheduler
from reference.scheduler import LaneHandle, LaneSpec, Sizing, StopMode, WorkerScheduler, config_error, create
from tests.fuzz.conftest import PROFILE

EXTREME_INTS = [
    0,
    -1,
    -(2**63),
    3,
    5,
    6,
    MAX_SIZE,
    MAX_SIZE + 1,
    MAX_WORKERS + 1,
    MAX_LANES + 1,
    2**31,
    2**63,
    2**70,
]


class _Opaque:
    def __repr__(self) -> str:
        raise RuntimeError("a repr that raises")


WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([math.nan, math.inf, -math.inf, 2.0, 1.5, 0.0]),
    st.text(max_size=4),
    st.sampled_from(["drain", "discard", "bogus", b"2", (1,), [], {}]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(EXTREME_INTS),
    st.builds(object),
    st.builds(_Opaque),
)


def _arg(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a good value (so schedulers do get built), often a wrong one."""
    return st.one_of(good, good, WRONG)


def _noop(context: Any, item: Any) -> None:
    return None


LANES = st.one_of(
    st.integers(1, 4).map(lambda n: [LaneSpec(_noop, i) for i in range(n)]),
    st.integers(1, 4).map(lambda n: [LaneSpec(_noop, i) for i in range(n)]),
    WRONG,
    st.sampled_from([[], [None], [_noop], [LaneSpec(5)], range(2**70), "ab"]),  # type: ignore[arg-type]
    st.lists(st.one_of(st.just(LaneSpec(_noop)), WRONG), min_size=1, max_size=3),
)
SIZES = st.sampled_from([1, 2, 3, 4, 8])
WORKERS = st.integers(1, 3)
OPTIONAL_CALLABLE = st.one_of(st.none(), st.just(lambda *a: None), WRONG)

FIELDS = (
    "lanes",
    "workers",
    "lane_capacity",
    "max_per_drain",
    "ready_capacity",
    "sizing",
    "runtime",
    "tracer",
    "on_error",
    "item_label",
)


def _named(exc: BaseException, fields: tuple[str, ...]) -> bool:
    return any(re.match(re.escape(field) + r"[\[ .]", str(exc)) for field in fields)


# --------------------------------------------------------------------------- Work Lane


@st.composite
def _work_lane_arguments(draw: st.DrawFn) -> dict[str, Any]:
    args: dict[str, Any] = {
        "lanes": draw(LANES),
        "workers": draw(_arg(WORKERS)),
        "lane_capacity": draw(_arg(SIZES)),
        "max_per_drain": draw(_arg(st.integers(1, 4))),
    }
    optional = {
        "ready_capacity": _arg(st.sampled_from([None, 2, 3, 4, 8])),
        "sizing": _arg(st.sampled_from(list(Sizing))),
        "runtime": st.one_of(st.none(), WRONG),
        "tracer": st.one_of(st.none(), WRONG),
        "on_error": OPTIONAL_CALLABLE,
        "item_label": OPTIONAL_CALLABLE,
    }
    for name, strategy in optional.items():
        if draw(st.booleans()):
            args[name] = draw(strategy)
    return args


def _check_work_lane(args: dict[str, Any], data: st.DataObject) -> None:
    invoked: Counter[Any] = Counter()
    discarded: Counter[Any] = Counter()
    lock = threading.Lock()

    def invoke(context: Any, item: Any) -> None:
        with lock:
            invoked[item] += 1

    if isinstance(args["lanes"], list) and all(isinstance(s, LaneSpec) for s in args["lanes"]):
        args["lanes"] = [
            LaneSpec(invoke, i) if callable(s.invoke) else s for i, s in enumerate(args["lanes"])
        ]

    def on_discard(lane: int, item: Any) -> None:
        discarded[item] += 1

    result, scheduler = create(**args, on_discard=on_discard)
    try:
        built = WorkerScheduler(**args)
    except (TypeError, ValueError) as exc:
        assert result is Result.INVALID_ARGUMENT and scheduler is None
        assert _named(exc, FIELDS), f"the refusal does not name a field: {exc}"
        core: dict[str, Any] = {
            k: args.get(k) for k in ("workers", "lane_capacity", "max_per_drain", "ready_capacity")
        }
        if set(args) <= {*core, "lanes", "sizing"}:
            message = config_error(args["lanes"], sizing=args.get("sizing", Sizing.TOOLKIT), **core)
            assert message is not None and _named(ValueError(message), FIELDS)
        return
    assert built.stop() is Result.SUCCESS
    assert result is Result.SUCCESS and scheduler is not None, "create refused what the constructor took"

    lanes = scheduler.lane_count
    accepted: Counter[Any] = Counter()
    for k in range(data.draw(st.integers(0, 12), label="posts")):
        index = data.draw(st.one_of(st.integers(0, lanes - 1), WRONG), label="lane")
        code, handle = scheduler.get_lane(index)
        good_index = type(index) is int and 0 <= index < lanes
        assert code is (Result.SUCCESS if good_index else Result.INVALID_ARGUMENT)
        if data.draw(st.booleans(), label="forge a handle"):
            handle = LaneHandle(scheduler, data.draw(WRONG, label="forged lane"))
        posted = scheduler.try_post(handle, k)
        assert posted in (Result.SUCCESS, Result.CAPACITY_EXCEEDED, Result.INVALID_ARGUMENT)
        if posted is Result.SUCCESS:
            accepted[k] += 1
    wrong_mode = data.draw(WRONG, label="stop mode")
    assert scheduler.stop(wrong_mode) is Result.INVALID_ARGUMENT
    assert scheduler.running
    mode = data.draw(st.sampled_from(list(StopMode)), label="mode")
    assert scheduler.stop(mode) is Result.SUCCESS and not scheduler.failed
    assert invoked + discarded == accepted, f"accepted {accepted}, invoked {invoked}, discarded {discarded}"
    if mode is StopMode.DRAIN:
        assert not discarded


# --------------------------------------------------------------------------- Schedule Gate

GATE_FIELDS = (
    "actors",
    "permits",
    "workers",
    "mailbox_capacity",
    "max_per_drain",
    "runtime",
    "tracer",
    "on_error",
)


@st.composite
def _gate_arguments(draw: st.DrawFn) -> dict[str, Any]:
    actors = draw(
        st.one_of(
            st.integers(1, 3).map(lambda n: ["handler"] * n),
            WRONG,
            st.sampled_from([[], [5], range(2**70)]),
        )
    )
    args: dict[str, Any] = {
        "actors": actors,
        "permits": draw(_arg(st.integers(1, 3))),
        "workers": draw(_arg(WORKERS)),
    }
    for name, strategy in {
        "mailbox_capacity": _arg(SIZES),
        "max_per_drain": _arg(st.integers(1, 3)),
        "runtime": st.one_of(st.none(), WRONG),
        "tracer": st.one_of(st.none(), WRONG),
        "on_error": OPTIONAL_CALLABLE,
    }.items():
        if draw(st.booleans()):
            args[name] = draw(strategy)
    return args


def _check_gate(args: dict[str, Any], data: st.DataObject) -> None:
    ran: Counter[Any] = Counter()
    lock = threading.Lock()

    def handle(event: Any) -> None:
        with lock:
            ran[event] += 1

    if isinstance(args["actors"], list) and args["actors"] and all(a == "handler" for a in args["actors"]):
        args["actors"] = [handle] * len(args["actors"])
    actors = args.pop("actors")
    try:
        sched: GateScheduler[Any] = GateScheduler(actors, **args)
    except (TypeError, ValueError) as exc:
        assert _named(exc, GATE_FIELDS), f"the refusal does not name a field: {exc}"
        return
    accepted: Counter[Any] = Counter()
    for k in range(data.draw(st.integers(0, 10), label="posts")):
        actor = data.draw(st.one_of(st.integers(0, sched.actor_count - 1), WRONG), label="actor")
        result = sched.post(actor, k)
        if not (type(actor) is int and 0 <= actor < sched.actor_count):
            assert result is Result.INVALID_ARGUMENT
        assert result in (Result.SUCCESS, Result.REJECTED, Result.CAPACITY_EXCEEDED, Result.INVALID_ARGUMENT)
        if result is Result.SUCCESS:
            accepted[k] += 1
    assert sched.stop() is Result.SUCCESS and not sched.failed
    assert ran == accepted


# --------------------------------------------------------------------------- Akka mailbox

AKKA_FIELDS = (
    "throughput",
    "workers",
    "runtime",
    "tracer",
    "on_error",
    "on_dead_letter",
    "item_label",
    "receive",
    "name",
)


@st.composite
def _dispatcher_arguments(draw: st.DrawFn) -> dict[str, Any]:
    args: dict[str, Any] = {"throughput": draw(_arg(st.integers(1, 4))), "workers": draw(_arg(WORKERS))}
    for name, strategy in {
        "runtime": st.one_of(st.none(), WRONG),
        "tracer": st.one_of(st.none(), WRONG),
        "on_error": OPTIONAL_CALLABLE,
        "on_dead_letter": OPTIONAL_CALLABLE,
        "item_label": st.one_of(st.just(str), WRONG),
    }.items():
        if draw(st.booleans()):
            args[name] = draw(strategy)
    return args


def _check_dispatcher(args: dict[str, Any], data: st.DataObject) -> None:
    try:
        d = Dispatcher(**args)
    except (TypeError, ValueError) as exc:
        assert _named(exc, AKKA_FIELDS), f"the refusal does not name a field: {exc}"
        return
    got: Counter[Any] = Counter()
    lock = threading.Lock()

    def receive(msg: Any) -> None:
        with lock:
            got[msg] += 1

    refs = []
    try:
        for _ in range(data.draw(st.integers(1, 3), label="actors")):
            use_good = data.draw(st.booleans(), label="good receive")
            name = data.draw(st.one_of(st.none(), st.text(max_size=3), WRONG), label="name")
            try:
                refs.append(d.spawn(receive if use_good else data.draw(WRONG, label="receive"), name=name))
            except (TypeError, ValueError) as exc:
                assert _named(exc, AKKA_FIELDS), f"the refusal does not name a field: {exc}"
        sent: Counter[Any] = Counter()
        for k in range(data.draw(st.integers(0, 10), label="tells")):
            if refs:
                ref = refs[data.draw(st.integers(0, len(refs) - 1), label="to")]
                if ref.tell(k) is Send.OK:
                    sent[k] += 1
    finally:
        report = d.shutdown()
    assert report.ok
    dead: Counter[Any] = Counter(m for msgs in report.dead_letters.values() for m in msgs)
    processed = Counter({k: n for k, n in got.items() if k in sent})
    assert processed + Counter({k: n for k, n in dead.items() if k in sent}) == sent


# --------------------------------------------------------------------------- the properties

Arguments = Callable[[], st.SearchStrategy[dict[str, Any]]]
Check = Callable[[dict[str, Any], st.DataObject], None]
REFERENCES: dict[str, tuple[Arguments, Check]] = {
    "work-lane": (_work_lane_arguments, _check_work_lane),
    "gate": (_gate_arguments, _check_gate),
    "dispatcher": (_dispatcher_arguments, _check_dispatcher),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("reference", list(REFERENCES))
@given(data=st.data())
@settings(parent=settings.get_profile(PROFILE))
def test_fuzz_arguments(reference: str, data: st.DataObject) -> None:
    arguments, check_reference = REFERENCES[reference]
    check_reference(data.draw(arguments(), label="arguments"), data)


# --------------------------------------------------------------------------- the long run


@pytest.mark.soak
@pytest.mark.timeout(3_600)
def test_fuzz_reference_soak() -> None:
    @given(
        work_lane=_work_lane_arguments(),
        gate=_gate_arguments(),
        dispatcher=_dispatcher_arguments(),
        data=st.data(),
    )
    @settings(parent=settings.get_profile(PROFILE), max_examples=20_000)
    def run(
        work_lane: dict[str, Any], gate: dict[str, Any], dispatcher: dict[str, Any], data: st.DataObject
    ) -> None:
        _check_work_lane(work_lane, data)
        _check_gate(gate, data)
        _check_dispatcher(dispatcher, data)

    run()
