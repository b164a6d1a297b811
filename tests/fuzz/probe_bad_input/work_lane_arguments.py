# The probe passes wrong types on purpose, and builds its cases from lambdas:
# mypy: disable-error-code="arg-type,call-arg,misc,unused-ignore,var-annotated"
"""The probe's Work Lane argument cases: each constructor and ``create`` field, lane list, lane index,
handle and stop mode of a wrong kind is refused naming it, and a refused post runs nothing."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from reference import scheduler as ws
from reference.results import Result
from reference.scheduler import LaneHandle, LaneSpec, Sizing, WorkerScheduler, create
from tests.fuzz.probe_bad_input.sandbox import Case, Outcome
from tests.fuzz.probe_bad_input.verdicts import Ledger, raises, returns, stop_any

NOTHING = Ledger().invoke
GOOD = {"workers": 1, "lane_capacity": 4, "max_per_drain": 2, "ready_capacity": None}


def sched(ledger: Ledger, **kw: object) -> WorkerScheduler[Any]:
    options = {**GOOD, "on_discard": ledger.discard, **kw}
    return WorkerScheduler([LaneSpec(ledger.invoke), LaneSpec(ledger.invoke)], **options)  # type: ignore[arg-type]


def work_lane_argument_cases() -> list[Case]:
    cases: list[Case] = []
    bad_numbers: list[object] = [True, False, 2.0, 1.5, math.nan, math.inf, -1, 0, 2**70, None, "4", 3]

    def make(**changes: object) -> Callable[[], object]:
        kwargs = {**GOOD, **changes}
        return lambda: WorkerScheduler([LaneSpec(NOTHING), LaneSpec(NOTHING)], **kwargs)  # type: ignore[arg-type]

    def refused_both_ways(field: str, value: object) -> None:
        # The constructor raises naming the field; the ToolKit-style create returns INVALID_ARGUMENT.
        def create_result() -> object:
            return create([LaneSpec(NOTHING)], **{**GOOD, field: value})[0]  # type: ignore[arg-type]

        cases.append(
            (
                f"ref.ws.init {field}={value!r}"[:70],
                lambda: raises(make(**{field: value}), field, cleanup=stop_any),
            )
        )
        cases.append(
            (f"ref.ws.create {field}={value!r}"[:70], lambda: returns(create_result, Result.INVALID_ARGUMENT))
        )

    for field in ("workers", "lane_capacity", "max_per_drain", "ready_capacity"):
        for value in bad_numbers:
            if value is None and field == "ready_capacity":
                continue
            if value == 3 and field in ("workers", "max_per_drain"):
                continue
            refused_both_ways(field, value)
    for label, lanes in [
        ("[]", []),
        ("None", None),
        ("'ab'", "ab"),
        ("[1]", [1]),
        ("[LaneSpec(5)]", [LaneSpec(5)]),  # type: ignore[arg-type]
        ("range(2**70)", range(2**70)),
        ("iter", iter([LaneSpec(NOTHING)])),
        ("70000 lanes", [LaneSpec(NOTHING)] * 70_000),
        ("{0: spec}", {0: LaneSpec(NOTHING)}),
    ]:
        cases.append(
            (
                f"ref.ws.init lanes={label}",
                lambda ls=lanes: raises(lambda: WorkerScheduler(ls, **GOOD), "lanes", cleanup=stop_any),
            )  # type: ignore[arg-type]
        )
        cases.append(
            (
                f"ref.ws.create lanes={label}",
                lambda ls=lanes: returns(lambda: create(ls, **GOOD)[0], Result.INVALID_ARGUMENT),
            )  # type: ignore[arg-type]
        )
    for name, value in [
        ("runtime", object()),
        ("tracer", object()),
        ("on_error", 5),
        ("on_discard", "x"),
        ("item_label", 3),
        ("sizing", "toolkit"),
        ("lane_factory", None),
        ("pool_factory", 1),
    ]:
        refused_both_ways(name, value)
    cases.append(
        (
            "ref.ws.create unknown option",
            lambda: returns(lambda: create([LaneSpec(NOTHING)], **GOOD, bogus=1)[0], Result.INVALID_ARGUMENT),
        )
    )
    cases.append(
        (
            "ref.ws.create positional workers",
            lambda: raises(lambda: create([LaneSpec(NOTHING)], 1, 4, 2), None, (TypeError,)),
        )
    )  # type: ignore[misc]
    cases.append(
        (
            "ref.ws.config_error workers=True",
            lambda: returns(lambda: ws.config_error([LaneSpec(NOTHING)], True, 4, 2, None) is not None, True),
        )
    )

    for label, index in [
        ("True", True),
        ("-1", -1),
        ("2", 2),
        ("1.0", 1.0),
        ("None", None),
        ("'0'", "0"),
        ("2**70", 2**70),
    ]:

        def get_lane(i: object = index) -> Outcome:
            s = sched(Ledger())
            try:
                return returns(lambda: s.get_lane(i)[0], Result.INVALID_ARGUMENT)  # type: ignore[arg-type]
            finally:
                s.stop()

        cases.append((f"ref.ws.get_lane({label})", get_lane))

    def handle_case(make_handle: Callable[[WorkerScheduler[Any], WorkerScheduler[Any]], object]) -> Outcome:
        ledger = Ledger()
        s, other = sched(ledger), sched(Ledger())
        try:
            got = returns(lambda: s.try_post(make_handle(s, other), "x"), Result.INVALID_ARGUMENT)  # type: ignore[arg-type]
        finally:
            s.stop()
            other.stop()
        if ledger.invoked or ledger.discarded:
            return "SILENTLY WRONG", "a refused item was run"
        return got

    class SubHandle(LaneHandle):
        pass

    for label, maker in [
        ("foreign handle", lambda s, o: o.get_lane(0)[1]),
        ("LaneHandle()", lambda s, o: LaneHandle()),
        ("LaneHandle(s, True)", lambda s, o: LaneHandle(s, True)),  # type: ignore[arg-type]
        ("LaneHandle(s, 5)", lambda s, o: LaneHandle(s, 5)),
        ("LaneHandle(s, -1)", lambda s, o: LaneHandle(s, -1)),
        ("LaneHandle(s, 0.0)", lambda s, o: LaneHandle(s, 0.0)),  # type: ignore[arg-type]
        ("tuple (s, 0)", lambda s, o: (s, 0)),
        ("None", lambda s, o: None),
        ("int 0", lambda s, o: 0),
        ("subclass handle", lambda s, o: SubHandle(s, 0)),
    ]:
        cases.append((f"ref.ws.try_post {label}", lambda m=maker: handle_case(m)))

    for label, mode in [
        ("'drain'", "drain"),
        ("'discard'", "discard"),
        ("'bogus'", "bogus"),
        ("None", None),
        ("42", 42),
        ("True", True),
    ]:

        def bad_stop(m: object = mode) -> Outcome:
            ledger = Ledger()
            s = sched(ledger)
            got = returns(lambda: s.stop(m), Result.INVALID_ARGUMENT)  # type: ignore[arg-type]
            _, h = s.get_lane(0)
            still = s.try_post(h, "after")
            s.stop()
            if still is not Result.SUCCESS:
                return "SILENTLY WRONG", f"stop({m!r}) was refused but stopped the scheduler"
            return got

        cases.append((f"ref.ws.stop({label})", bad_stop))

    cases.append(
        (
            "ref.ws Sizing.CHECKING capacity=3",
            lambda: returns(
                lambda: WorkerScheduler(
                    [LaneSpec(NOTHING)], **{**GOOD, "lane_capacity": 3}, sizing=Sizing.CHECKING
                ).stop(),
                Result.SUCCESS,
                "right answer",
            ),
        )
    )
    return cases
